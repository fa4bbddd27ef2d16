import { Args, Flags } from '../../lib/oclif.js'
import { CACHE_DIRS, listCaches, removeCaches, type CacheOnEngine } from '@omh/sandbox'
import { OmhError, USAGE } from '@omh/plugin-api'
import { SessionsCommand } from '../../lib/sessions-command.js'

export interface CachesRmResult {
  removed: CacheOnEngine[]
  refused: { cache: CacheOnEngine; why: string }[]
}

export default class CachesRm extends SessionsCommand<CachesRmResult> {
  static override summary = "Remove this repository's dependency caches, or only some tools'."
  static override description =
    'The next session downloads again what it installs. A cache a running session mounts is refused by the engine and reported; stop that session first (`omh sessions down`).'
  static override strict = false
  static override args = { tool: Args.string({ description: `Only these tools' caches: ${Object.keys(CACHE_DIRS).join(', ')}.` }) }
  static override flags = {
    runtime: SessionsCommand.runtimeFlag,
    all: Flags.boolean({ summary: "Every repository's caches, not only this one's.", default: false }),
  }

  async run(): Promise<CachesRmResult> {
    const { argv, flags } = await this.parse(CachesRm)
    const tools = argv as string[]
    const unknown = tools.filter((t) => !(t in CACHE_DIRS))
    if (unknown.length) throw OmhError.of(USAGE, { args: [`No tool is called ${unknown.join(', ')}; the caches are ${Object.keys(CACHE_DIRS).join(', ')}.`], hintArgs: ['caches rm'] })
    const { runtime } = await this.runtime(flags.runtime)
    const repo = flags.all ? undefined : (await this.repository()).id
    const caches = (await listCaches(runtime, this.runtimeContext(), repo)).filter((c) => !tools.length || tools.includes(c.tool))
    const result = await removeCaches(runtime, caches, this.runtimeContext())
    for (const r of result.refused) this.warn(`${r.cache.volume} stays: ${r.why}`)
    if (!this.jsonEnabled()) {
      for (const c of result.removed) this.log(`removed ${c.volume}`)
      this.log(result.removed.length ? `removed ${result.removed.length} cache${result.removed.length === 1 ? '' : 's'}` : 'No cache to remove.')
    }
    return result
  }
}
