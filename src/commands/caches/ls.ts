import { Flags } from '../../lib/oclif.js'
import { CACHE_DIRS, listCaches, type CacheOnEngine } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'
import { table } from '../../lib/table.js'

export interface CachesLsResult {
  engine: string
  caches: (CacheOnEngine & { paths: readonly string[] })[]
}

export default class CachesLs extends SessionsCommand<CachesLsResult> {
  static override summary = "List the dependency caches this repository's sessions share."
  static override description =
    "One engine volume per tool (npm, pnpm, yarn, pip, uv, cargo, Go, Maven, Gradle) and repository, mounted at the tool's own cache directory in every session of that repository. `omh sessions rm` and `omh images prune` leave them; `omh caches rm` removes them."
  static override flags = {
    runtime: SessionsCommand.runtimeFlag,
    all: Flags.boolean({ summary: "Every repository's caches, not only this one's.", default: false }),
  }

  async run(): Promise<CachesLsResult> {
    const { flags } = await this.parse(CachesLs)
    const { runtime } = await this.runtime(flags.runtime)
    const repo = flags.all ? undefined : (await this.repository()).id
    const caches = (await listCaches(runtime, this.runtimeContext(), repo)).map((c) => ({ ...c, paths: CACHE_DIRS[c.tool] ?? [] }))
    if (!this.jsonEnabled()) {
      if (!caches.length) this.notice(`No dependency caches${repo ? ` of ${repo}` : ''} on ${runtime.engine} yet: a session's first install makes them.`)
      else {
        const header = ['VOLUME', 'TOOL', ...(flags.all ? ['REPOSITORY'] : [])].map((h) => this.style.dim(h))
        this.log(table([header, ...caches.map((c) => [this.style.bold(c.volume), c.tool, ...(flags.all ? [c.repo] : [])])]))
      }
    }
    return { engine: runtime.engine, caches }
  }
}
