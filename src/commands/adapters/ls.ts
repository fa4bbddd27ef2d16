import path from 'node:path'
import type { Problem } from '@omh/plugin-api'
import { OmhCommand } from '../../lib/omh-command.js'
import { plural, table } from '../../lib/table.js'
import type { AnsweredAgain } from '@omh/fast-path'

export interface AdapterListing {
  name: string
  file: string
  origin: 'bundled' | 'plugin' | 'personal'
  /** The plugin package that ships it. */
  plugin?: string
  shadows?: string
  valid: boolean
  /** The harness release the adapter was checked against. */
  version?: string
  /** Whether `omh doctor --turn` can drive the harness through a turn against the scripted model. */
  turn: boolean
  capabilities: { capability: string; render: string; path: string }[]
  problems: Problem[]
}

export default class AdaptersLs extends OmhCommand<{ adapters: AdapterListing[] }> {
  /** Answered again while the files it read are unchanged. */
  static answeredAgain: AnsweredAgain = {}
  static override summary = 'List the harnesses omh knows.'
  static override description =
    'Bundled adapters ship with omh; a plugin package may ship more in its adapters/ folder; a file in $OMH_HOME/adapters/ adds a harness or overrides one of the same name. Columns: the harness, the release its adapter was checked against, the classes it expresses, whether `omh doctor --turn` drives it through a turn, and where the adapter comes from.'

  async run(): Promise<{ adapters: AdapterListing[] }> {
    await this.parse(AdaptersLs)
    const kernel = await this.kernel()
    const adapters: AdapterListing[] = []
    for (const source of await kernel.adapterSources()) {
      const { adapter, problems } = await kernel.checkAdapter(source.file, source.name)
      adapters.push({
        name: source.name,
        file: source.file,
        origin: source.origin,
        ...(source.plugin ? { plugin: source.plugin } : {}),
        ...(source.shadows ? { shadows: source.shadows } : {}),
        valid: Boolean(adapter),
        ...(adapter?.release ? { version: adapter.release.version } : {}),
        turn: adapter?.turn !== undefined,
        capabilities: (adapter?.bindings ?? []).map((b) => ({ capability: b.capability, render: b.render, path: b.path })),
        problems,
      })
    }
    if (!this.jsonEnabled()) {
      const s = this.style
      this.log(
        table(
          adapters.map((a) => [
            s.bold(a.name),
            a.version ?? s.dim('-'),
            a.valid ? a.capabilities.map((c) => c.capability).join(' ') : s.red(`invalid: ${plural(a.problems.length, 'problem')}`),
            a.turn ? 'turn' : s.dim('-'),
            s.dim(
              a.origin === 'bundled'
                ? 'bundled'
                : `${a.origin === 'plugin' ? `plugin ${a.plugin}` : tilde(a.file)}${a.shadows ? ` (overrides ${a.shadows.startsWith(this.config.root) ? 'bundled' : tilde(a.shadows)})` : ''}`,
            ),
          ]),
        ),
      )
    }
    const invalid = adapters.filter((a) => !a.valid)
    if (invalid.length) {
      this.warn(
        `${plural(invalid.length, 'adapter')} cannot be used: ${invalid.map((a) => a.name).join(', ')}. See \`omh adapters validate ${invalid[0]!.file}\`.`,
      )
    }
    return { adapters }
  }
}

const tilde = (file: string) => {
  const home = process.env['HOME']
  return home && file.startsWith(home + path.sep) ? `~${file.slice(home.length)}` : file
}
