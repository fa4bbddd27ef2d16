/**
 * The rows of one repository's sessions, as `omh sessions ls` shows them and `omh sessions watch`
 * shows them for every repository: each session's container asked of the engine it is up on, and
 * what its harness says of itself read from the container as data.
 */
import { OmhError, SESSION_UNRESPONSIVE, type ContainerInfo, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import { LABEL, backgroundHarnesses, readEngine, sessionPaths, sessionRows, type Repository, type SessionRows } from '@omh/sandbox'

export interface BoardOptions {
  readonly omhState: string
  readonly context: RuntimeContext
  /** The engine of a session that is not up: `--runtime`, else undefined for the setting's. */
  readonly engine?: string | undefined
  /** The runtime of an engine, or undefined when it does not answer (its sessions' containers are then unknown). */
  readonly runtime: (engine: string | undefined) => Promise<RuntimePlugin | undefined>
  readonly warn: (line: string) => void
}

export async function repositoryRows(repo: Repository, options: BoardOptions): Promise<SessionRows> {
  const engines = new Map<string, RuntimePlugin>()
  return sessionRows(options.omhState, repo, {
    env: process.env,
    warn: options.warn,
    containers: (ids) => containersOf(repo, ids, engines, options),
    // A container that does not answer leaves its state blank; one that cannot start anything is said so.
    harnesses: (id, container) => {
      const runtime = engines.get(id)
      if (!runtime) return Promise.resolve(undefined)
      return backgroundHarnesses(runtime, container.id, options.context, { session: id }).catch((error: unknown) => {
        if (error instanceof OmhError && error.code === SESSION_UNRESPONSIVE.code) options.warn(error.message)
        return undefined
      })
    },
  })
}

/** Each session's containers, asked of the engine it is up on, each engine once; one that does not answer leaves its sessions unknown. */
async function containersOf(repo: Repository, ids: readonly string[], engines: Map<string, RuntimePlugin>, options: BoardOptions): Promise<Map<string, ContainerInfo[] | undefined>> {
  const groups = new Map<string | undefined, string[]>()
  for (const sid of ids) {
    const up = (await readEngine(sessionPaths(options.omhState, repo, sid).run)) ?? options.engine
    groups.set(up, [...(groups.get(up) ?? []), sid])
  }
  const containers = new Map<string, ContainerInfo[] | undefined>()
  for (const [engine, group] of groups) {
    const runtime = await options.runtime(engine)
    const found = runtime
      ? await runtime.list({ [LABEL.repo]: repo.id }, options.context).catch((error: Error) => {
          options.warn(`${runtime.engine} did not list containers: ${error.message}`)
          return undefined
        })
      : undefined
    for (const sid of group) {
      containers.set(sid, found?.filter((c) => c.labels[LABEL.session] === sid))
      if (runtime && found) engines.set(sid, runtime)
    }
  }
  return containers
}
