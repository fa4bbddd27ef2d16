import { Args, Flags } from '../../lib/oclif.js'
import { CACHE_DIRS, keptSetupsDirs, listCaches, removeCaches, removeKept, type CacheOnEngine, type KeptSetup } from '@omh/sandbox'
import { OmhError, USAGE } from '@omh/plugin-api'
import { SessionsCommand } from '../../lib/sessions-command.js'

export interface CachesRmResult {
  removed: CacheOnEngine[]
  refused: { cache: CacheOnEngine; why: string }[]
  /** Kept setups removed: the next new session runs its setup again. */
  setups: KeptSetup[]
}

/** The name `caches rm` takes for the kept setups beside the tools' caches. */
const SETUP = 'setup'

export default class CachesRm extends SessionsCommand<CachesRmResult> {
  static override summary = "Remove this repository's dependency caches and kept setups, or only some tools'."
  static override description =
    'The next session downloads again what it installs, and runs its setup again (`setup` names the kept setups alone). A cache a running session mounts is refused by the engine and reported; stop that session first (`omh sessions down`).'
  static override strict = false
  static override args = { tool: Args.string({ description: `Only these tools' caches: ${Object.keys(CACHE_DIRS).join(', ')}, or ${SETUP} (the kept setups).` }) }
  static override flags = {
    runtime: SessionsCommand.runtimeFlag,
    all: Flags.boolean({ summary: "Every repository's caches, not only this one's.", default: false }),
  }

  async run(): Promise<CachesRmResult> {
    const { argv, flags } = await this.parse(CachesRm)
    const tools = argv as string[]
    const unknown = tools.filter((t) => !(t in CACHE_DIRS) && t !== SETUP)
    if (unknown.length) throw OmhError.of(USAGE, { args: [`No tool is called ${unknown.join(', ')}; the caches are ${Object.keys(CACHE_DIRS).join(', ')} and ${SETUP}.`], hintArgs: ['caches rm'] })
    const repo = flags.all ? undefined : (await this.repository()).id
    const volumes = !tools.length || tools.some((t) => t !== SETUP)
    const result = volumes ? await this.removeVolumes(flags.runtime, repo, tools) : { removed: [], refused: [] }
    const kernel = await this.kernel()
    const setups = !tools.length || tools.includes(SETUP) ? await removeKept(await keptSetupsDirs(kernel.omhState, repo)) : []
    for (const r of result.refused) this.warn(`${r.cache.volume} stays: ${r.why}`)
    if (!this.jsonEnabled()) {
      for (const c of result.removed) this.log(`removed ${c.volume}`)
      for (const k of setups) this.log(`removed the setup ${k.key} kept from ${k.session}`)
      const count = result.removed.length + setups.length
      this.log(count ? `removed ${count} cache${count === 1 ? '' : 's'}` : 'No cache to remove.')
    }
    return { ...result, setups }
  }

  private async removeVolumes(engine: string | undefined, repo: string | undefined, tools: readonly string[]) {
    const { runtime } = await this.runtime(engine)
    const caches = (await listCaches(runtime, this.runtimeContext(), repo)).filter((c) => !tools.length || tools.includes(c.tool))
    return removeCaches(runtime, caches, this.runtimeContext())
  }
}
