/**
 * omh's notifier: a process of omh's own on the host that looks at the session containers every
 * few seconds while a harness runs in one, and tells the user when one moves to waiting or
 * finished (notify.ts says how). A launch in the background starts it; one runs per state
 * directory, and it ends once no harness has run anywhere for a while. What it reads from a
 * container is data (background.ts): the agent can make a session look waiting, never make the
 * host run anything.
 */
import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { appendFile, mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { RuntimeContext, RuntimePlugin } from '@omh/plugin-api'
import { alive, backgroundHarnesses, branchOf, changes, harnessState, knownRepositories, readLaunch, upSessions, type Sighting } from '@omh/sandbox'
import { statePath } from '@omh/kernel/locations'
import type { StateEvent } from './notify.js'

/** Seconds between looks. */
export const LOOK_EVERY_S = 2
/** Looks with no harness running anywhere before the notifier ends. */
const QUIET_LOOKS = 10

const notifierDir = (omhState: string) => statePath(omhState, 'run', '.notifier')

/**
 * Starts the notifier in the background unless one already runs: detached from this process, in
 * the home directory (so it reads the user's own settings, never a repository's), its output to
 * this terminal when there is one, for the terminal's notifications.
 */
export function startNotifier(bin: string, omhState: string, env: NodeJS.ProcessEnv): void {
  if (runningNotifier(omhState)) return
  let terminal: number | 'ignore' = 'ignore'
  try {
    if (process.stderr.isTTY) terminal = openSync('/dev/tty', 'w')
  } catch {
    // No controlling terminal: the desktop and the command still tell.
  }
  const child = spawn(process.execPath, [bin, 'sessions', 'notifier'], { cwd: os.homedir(), env, detached: true, stdio: ['ignore', terminal, 'ignore'] })
  child.on('error', () => undefined)
  child.unref()
  if (typeof terminal === 'number') closeSync(terminal)
}

/** The pid of the running notifier, if one runs. */
function runningNotifier(omhState: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(notifierDir(omhState), 'pid'), 'utf8'))
    return isNotifier(pid) ? pid : undefined
  } catch {
    return undefined
  }
}

/** Whether `pid` is a live notifier: a notifier that died leaves its pid, which another process may since have. */
function isNotifier(pid: number): boolean {
  if (!alive(pid)) return false
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('notifier')
  } catch {
    // No /proc (macOS): a live process at that pid is taken for the notifier.
    return true
  }
}

/** Takes the notifier's place for this process; false when another live notifier holds it. */
async function takePlace(dir: string): Promise<boolean> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const file = path.join(dir, 'pid')
  for (let tries = 0; tries < 2; tries++) {
    try {
      const handle = await open(file, 'wx', 0o600)
      await handle.writeFile(String(process.pid))
      await handle.close()
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = Number(await readFile(file, 'utf8').catch(() => ''))
      if (isNotifier(holder) && holder !== process.pid) return false
      await rm(file, { force: true })
    }
  }
  return false
}

export interface NotifierIo {
  readonly omhState: string
  readonly context: RuntimeContext
  /** The runtime of an engine; undefined when it does not answer. */
  runtime(engine: string): Promise<RuntimePlugin | undefined>
  /** Tells one change. */
  tell(event: StateEvent): Promise<void>
  /** Ends the loop early (tests, SIGTERM). */
  readonly signal?: AbortSignal
  readonly lookEveryMs?: number
}

/** The loop: look, tell what changed, and end after a while with nothing running. Resolves when it ends. */
export async function runNotifier(io: NotifierIo): Promise<void> {
  const dir = notifierDir(io.omhState)
  if (!(await takePlace(dir))) return
  const since = Math.floor(Date.now() / 1000) - 60
  const seenFile = path.join(dir, 'seen.json')
  let seen = await readSeen(seenFile)
  let quiet = 0
  try {
    while (!io.signal?.aborted && quiet < QUIET_LOOKS) {
      const { sightings, running } = await look(io)
      const next = changes(seen, sightings, since)
      if (JSON.stringify(next.seen) !== JSON.stringify(seen)) {
        seen = next.seen
        await writeFile(`${seenFile}.tmp`, JSON.stringify(seen), { mode: 0o600 })
        await rename(`${seenFile}.tmp`, seenFile)
      }
      if (next.events.length) {
        const roots = new Map((await knownRepositories(io.omhState)).map((r) => [r.id, r.root]))
        for (const e of next.events) await io.tell(eventOf(e, roots.get(e.repoId) ?? null))
      }
      quiet = running ? 0 : quiet + 1
      await sleep(io.lookEveryMs ?? LOOK_EVERY_S * 1000, undefined, io.signal ? { signal: io.signal } : {}).catch(() => undefined)
    }
  } finally {
    const holder = Number(await readFile(path.join(dir, 'pid'), 'utf8').catch(() => ''))
    if (holder === process.pid) await rm(path.join(dir, 'pid'), { force: true })
  }
}

/** Every harness in every session container a launch left up, and whether any of them runs. */
async function look(io: NotifierIo): Promise<{ sightings: Sighting[]; running: boolean }> {
  const up = await upSessions(io.omhState)
  const found = await Promise.all(
    up.map(async (u) => {
      const runtime = await io.runtime(u.engine)
      const files = runtime ? await backgroundHarnesses(runtime, u.container, io.context, { session: u.session }).catch(() => undefined) : undefined
      return Promise.all(
        (files ?? []).map(async (f) => {
          const launched = await readLaunch(u.run, f.harness)
          return { running: f.running, sighting: { repoId: u.repoId, session: u.session, launch: launched?.started ?? 0, state: harnessState(f, launched?.from ?? 'process') } }
        }),
      )
    }),
  )
  const all = found.flat()
  return { sightings: all.map((f) => f.sighting), running: all.some((f) => f.running) }
}

/** The notifier's own troubles (a command that failed), kept where a user can look: it has no terminal to say them on. */
export async function noteTrouble(omhState: string, line: string): Promise<void> {
  const file = path.join(notifierDir(omhState), 'notifier.log')
  if (((await stat(file).catch(() => undefined))?.size ?? 0) > 64 * 1024) await rm(file, { force: true })
  await appendFile(file, `${new Date().toISOString()} ${line}\n`, { mode: 0o600 }).catch(() => undefined)
}

function eventOf(s: Sighting, repository: string | null): StateEvent {
  return {
    repository,
    session: s.session,
    branch: branchOf(s.session),
    harness: s.state.harness,
    state: s.state.state as StateEvent['state'],
    ...(s.state.exit !== undefined ? { exit: s.state.exit } : {}),
    at: s.state.lastActive ?? Math.floor(Date.now() / 1000),
  }
}

async function readSeen(file: string): Promise<Record<string, string>> {
  try {
    const value = JSON.parse(await readFile(file, 'utf8')) as unknown
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return {}
    return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'))
  } catch {
    return {}
  }
}
