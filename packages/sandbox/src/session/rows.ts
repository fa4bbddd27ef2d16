/**
 * The sessions of a repository as `omh sessions ls` lists them: each one's container, branch, work
 * ahead and uncommitted, whether an omh process holds it, and the files two sessions both changed,
 * so a conflict shows before either is merged. The command asks the engines and prints; the rows
 * are made here.
 */
import type { ContainerInfo } from '@omh/plugin-api'
import { changedFiles, workState, type Count } from '../work/work.js'
import { LABEL, branchOf, sessionPaths } from '../host/layout.js'
import { resolveBase, type Repository } from '../host/repo.js'
import { listSessions, readClaim } from './store.js'
import { harnessState, readLaunch, type HarnessFiles, type HarnessState } from './state.js'

type Env = Readonly<Record<string, string | undefined>>

export interface SessionRow {
  id: string
  branch: string
  /** `running`, `stopped`, `none` (no container), or `unknown` (no engine answered). */
  container: 'running' | 'stopped' | 'none' | 'unknown'
  /** The harness the container was set up for. */
  harness: string | null
  /** An omh process on this machine is launched into it right now. */
  inUse: boolean
  ahead: Count
  uncommitted: Count
  /** Files it changed since the default branch, committed or not. */
  changed: Count
  worktree: string
  /** Files this session changed (committed or not) that other sessions of the repository changed too; null when git could not tell. */
  shared: { path: string; with: string[] }[] | null
  /** What its harness does (state.ts), while its container runs; null when nothing ran there or it could not be asked. */
  state: HarnessState | null
}

export interface SessionRows {
  base: { name: string; commit: string } | null
  sessions: SessionRow[]
}

/**
 * Every session's row. `containers` asks the engines for the sessions' containers (undefined for a
 * session whose engine did not answer); `warn` hears what could not be counted.
 */
export async function sessionRows(
  omhState: string,
  repo: Repository,
  options: {
    readonly env: Env
    readonly containers: (ids: readonly string[]) => Promise<ReadonlyMap<string, readonly ContainerInfo[] | undefined>>
    /** The harnesses' files in a running container (background.ts); undefined when it could not be asked. */
    readonly harnesses?: (id: string, container: ContainerInfo) => Promise<readonly HarnessFiles[] | undefined>
    readonly warn: (line: string) => void
  },
): Promise<SessionRows> {
  const ids = await listSessions(omhState, repo)
  const base = await resolveBase(repo, options.env).catch((error: Error) => {
    options.warn(`${error.message} Commits ahead are shown as unknown.`)
    return undefined
  })
  const containers = await options.containers(ids)
  const changed = new Map<string, string[] | undefined>()
  if (base) for (const id of ids) changed.set(id, await changedFiles(omhState, repo, id, base.commit, options.env))
  const running = (id: string) => containers.get(id)?.find((x) => x.running)
  // One exec per running container, all at once.
  const states = new Map(await Promise.all(ids.map(async (id) => [id, await stateOf(omhState, repo, id, running(id), options.harnesses)] as const)))
  const sessions: SessionRow[] = []
  for (const id of ids) {
    const listed = containers.get(id)
    const c = running(id) ?? listed?.[0]
    const state = await workState(omhState, repo, id, base?.commit, options.env)
    sessions.push({
      id,
      branch: branchOf(id),
      container: listed === undefined ? 'unknown' : c ? (c.running ? 'running' : 'stopped') : 'none',
      harness: c?.labels[LABEL.harness] ?? null,
      inUse: Boolean(await readClaim(omhState, repo, id)),
      ahead: state.ahead,
      uncommitted: state.uncommitted,
      changed: changed.get(id)?.length ?? 'unknown',
      worktree: sessionPaths(omhState, repo, id).worktree,
      shared: shared(id, changed),
      state: states.get(id) ?? null,
    })
  }
  return { base: base ?? null, sessions }
}

/**
 * What the harness of a running container does: the one the container was set up for when its
 * files are there, else the one active last. Its launch record says whether its hooks keep a state.
 */
export async function stateOf(
  omhState: string,
  repo: Repository,
  id: string,
  container: ContainerInfo | undefined,
  ask: ((id: string, container: ContainerInfo) => Promise<readonly HarnessFiles[] | undefined>) | undefined,
): Promise<HarnessState | undefined> {
  if (!container || !ask) return undefined
  const found = await ask(id, container)
  if (!found?.length) return undefined
  const run = sessionPaths(omhState, repo, id).run
  const states = await Promise.all(found.map(async (files) => harnessState(files, (await readLaunch(run, files.harness))?.from ?? 'process')))
  const named = states.find((s) => s.harness === container.labels[LABEL.harness])
  return named ?? states.sort((a, b) => (b.lastActive ?? 0) - (a.lastActive ?? 0))[0]
}

/** The files `id` changed that other sessions changed too, each with those sessions; null when git could not tell for `id`. */
function shared(id: string, changed: ReadonlyMap<string, string[] | undefined>): SessionRow['shared'] {
  const mine = changed.get(id)
  if (!mine) return null
  const sets = new Map([...changed].map(([other, files]) => [other, new Set(files)] as const))
  const out: { path: string; with: string[] }[] = []
  for (const file of mine) {
    const others = [...sets].filter(([other, files]) => other !== id && files.has(file)).map(([other]) => other)
    if (others.length) out.push({ path: file, with: others })
  }
  return out
}
