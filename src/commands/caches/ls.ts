import { Flags } from '../../lib/oclif.js'
import { CACHE_DIRS, keptSetupsDirs, listCaches, listKept, type CacheOnEngine, type KeptSetup } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'
import { table } from '../../lib/table.js'

export interface CachesLsResult {
  engine: string
  caches: (CacheOnEngine & { paths: readonly string[] })[]
  /** Setups kept for the next new session of the same inputs, on this machine. */
  setups: KeptSetup[]
}

export default class CachesLs extends SessionsCommand<CachesLsResult> {
  static override summary = "List the dependency caches this repository's sessions share."
  static override description =
    "One engine volume per tool (npm, pnpm, yarn, pip, uv, cargo, Go, Maven, Gradle) and repository, mounted at the tool's own cache directory in every session of that repository. Beside them, the newest setups each repository kept: what a new session's setup left in its worktree, copied into the next new session whose setup starts from the same inputs. `omh sessions rm` and `omh images prune` leave them all; `omh caches rm` removes them."
  static override flags = {
    runtime: SessionsCommand.runtimeFlag,
    all: Flags.boolean({ summary: "Every repository's caches, not only this one's.", default: false }),
  }

  async run(): Promise<CachesLsResult> {
    const { flags } = await this.parse(CachesLs)
    const { runtime } = await this.runtime(flags.runtime)
    const repo = flags.all ? undefined : (await this.repository()).id
    const caches = (await listCaches(runtime, this.runtimeContext(), repo)).map((c) => ({ ...c, paths: CACHE_DIRS[c.tool] ?? [] }))
    const kernel = await this.kernel()
    const setups = (await Promise.all((await keptSetupsDirs(kernel.omhState, repo)).map(listKept))).flat()
    if (!this.jsonEnabled()) {
      if (!caches.length) this.notice(`No dependency caches${repo ? ` of ${repo}` : ''} on ${runtime.engine} yet: a session's first install makes them.`)
      else {
        const header = ['VOLUME', 'TOOL', ...(flags.all ? ['REPOSITORY'] : [])].map((h) => this.style.dim(h))
        this.log(table([header, ...caches.map((c) => [this.style.bold(c.volume), c.tool, ...(flags.all ? [c.repo] : [])])]))
      }
      if (setups.length) {
        const header = ['SETUP', 'KEPT FROM', 'AT', 'PATHS'].map((h) => this.style.dim(h))
        this.log(table([header, ...setups.map((k) => [this.style.bold(k.key), k.session, k.at, k.paths.join(', ')])]))
      }
    }
    return { engine: runtime.engine, caches, setups }
  }
}
