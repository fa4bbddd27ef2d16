/**
 * Sessions across every repository omh has sessions of: what `omh sessions watch` shows and omh's
 * notifier follows. A repository is known by the file its first session leaves in its bookkeeping
 * (`run/<repo>/repository`, the checkout's path), which only omh writes: the sandbox never sees
 * that directory. A path that no longer names the checkout the id was made from is passed over.
 */
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { statePath } from '@omh/kernel/locations'
import { SESSION_ID, repoRunDir } from '../host/layout.js'
import { repository, type Repository } from '../host/repo.js'
import { readUp } from './idle.js'
import { isSpare } from './spare.js'
import type { HarnessState } from './state.js'

const REPOSITORY_FILE = 'repository'

/** Notes where the repository's checkout is, so views of every repository can find it again. */
export async function registerRepository(omhState: string, repo: Repository): Promise<void> {
  const file = path.join(repoRunDir(omhState, repo), REPOSITORY_FILE)
  if ((await readFile(file, 'utf8').catch(() => '')) === `${repo.root}\n`) return
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(`${file}.tmp`, `${repo.root}\n`, { mode: 0o600 })
  await rename(`${file}.tmp`, file)
}

/** The repositories omh has sessions of, each still where it was, in the order of their ids. */
export async function knownRepositories(omhState: string): Promise<Repository[]> {
  const found: Repository[] = []
  for (const id of (await readdir(statePath(omhState, 'run')).catch(() => [])).sort()) {
    if (id.startsWith('.')) continue
    const root = (await readFile(path.join(statePath(omhState, 'run', id), REPOSITORY_FILE), 'utf8').catch(() => '')).trim()
    if (!path.isAbsolute(root)) continue
    try {
      const repo = repository(root)
      if (repo.id === id) found.push(repo)
    } catch {
      // Moved or removed since: its sessions are listed again once omh runs in it.
    }
  }
  return found
}

/** A session whose container a launch left up, in any repository, with the engine it is up on. */
export interface UpSession {
  readonly repoId: string
  readonly session: string
  readonly run: string
  readonly engine: string
  readonly container: string
}

/** Every session container a launch left up, from the launches' own records: no engine is asked. */
export async function upSessions(omhState: string): Promise<UpSession[]> {
  const root = statePath(omhState, 'run')
  const up: UpSession[] = []
  for (const repoId of (await readdir(root).catch(() => [])).sort()) {
    if (repoId.startsWith('.')) continue
    for (const session of (await readdir(path.join(root, repoId)).catch(() => [])).sort()) {
      if (!SESSION_ID.test(session)) continue
      const run = path.join(root, repoId, session)
      // A spare not claimed yet runs no harness anyone follows; the idle check still stops it (idle.ts).
      const [record, spare] = await Promise.all([readUp(run), isSpare(run)])
      if (record && !spare) up.push({ repoId, session, run, engine: record.engine, container: record.container })
    }
  }
  return up
}

/** A harness's state as one look saw it, with the launch it belongs to (its start, unix seconds; 0 when unrecorded). */
export interface Sighting {
  readonly repoId: string
  readonly session: string
  readonly launch: number
  readonly state: HarnessState
}

/** The states a person is told of: the harness waits for them, or it is done. */
const TOLD = new Set<HarnessState['state']>(['waiting', 'finished'])

/** At most this many harnesses are remembered; the oldest are forgotten first. */
const REMEMBERED = 1000

/**
 * What changed since the last look, as the events to tell: a harness now waiting or finished that
 * was not in that state at the last look of the same launch. A launch first seen already waiting
 * or finished is a change too, unless it was last active before `since` (the first look of a
 * notifier does not tell yesterday's news). `seen` is what the looks so far saw, kept between
 * looks (and between notifiers) so a change is told once.
 */
export function changes(
  seen: Readonly<Record<string, string>>,
  sightings: readonly Sighting[],
  since = 0,
): { events: Sighting[]; seen: Record<string, string> } {
  const next: Record<string, string> = { ...seen }
  const events: Sighting[] = []
  for (const s of sightings) {
    const key = `${s.repoId}/${s.session}/${s.state.harness}@${s.launch}`
    const value = s.state.state === 'finished' ? `finished:${s.state.exit ?? ''}` : s.state.state
    if (next[key] === value) continue
    const old = !(key in next) && (s.state.lastActive ?? 0) < since
    delete next[key]
    next[key] = value
    if (TOLD.has(s.state.state) && !old) events.push(s)
  }
  const keys = Object.keys(next)
  for (const key of keys.slice(0, Math.max(0, keys.length - REMEMBERED))) delete next[key]
  return { events, seen: next }
}
