import path from 'node:path'
import { OmhCommand } from '../../lib/omh-command.js'
import { installedPlugins, originOf, pluginFolderOf } from '../../lib/plugin-folder.js'
import { table } from '../../lib/table.js'
import type { AnsweredAgain } from '@omh/fast-path'

interface PluginListing {
  name: string
  version: string
  kind: 'renderer' | 'runtime' | 'extension'
  formats?: string[]
  classes?: string[]
  engine?: string
  /** The settings file that named it, and that file's layer. */
  namedBy: { file: string; layer: string }
  specifier: string
  module: string
  /**
   * Where it came from: omh itself, `omh plugins add` (with what it was given:
   * an npm spec, a folder or a tarball), or a `plugins` entry that names a
   * package or file found some other way.
   */
  source: { kind: 'bundled' } | { kind: 'installed'; from: string } | { kind: 'settings' }
  /** Formats this plugin answers that a more specific plugin answers first. */
  shadowed?: string[]
}

export default class Plugins extends OmhCommand<{ plugins: PluginListing[] }> {
  /** Answered again while the files it read are unchanged. */
  static answeredAgain: AnsweredAgain = {}
  static override summary = 'List the loaded renderer, runtime and extension plugins, where each came from, and the settings file that named it.'
  static override description =
    '`omh plugins add` installs a plugin into $OMH_HOME/plugins and names it in your settings; `omh plugins rm` takes it out again.'

  async run(): Promise<{ plugins: PluginListing[] }> {
    await this.parse(Plugins)
    const kernel = await this.kernel()
    const folder = pluginFolderOf(kernel.omhHome)
    const installed = await installedPlugins(folder)
    const sourceOf = async (specifier: string, module: string, layer: string): Promise<PluginListing['source']> => {
      if (module.startsWith(folder + path.sep) && specifier in installed) {
        return { kind: 'installed', from: (await originOf(folder, specifier)) ?? specifier }
      }
      return layer === 'defaults' ? { kind: 'bundled' } : { kind: 'settings' }
    }
    const all = await kernel.allPlugins()
    const sources = await Promise.all(all.map((p) => sourceOf(p.specifier, p.module, p.namedBy.layer)))
    const plugins: PluginListing[] = all.map(({ plugin, namedBy, specifier, module }, n) => {
      const base = { name: plugin.meta.name, version: plugin.meta.version, kind: plugin.kind, namedBy, specifier, module, source: sources[n]! }
      if (plugin.kind === 'runtime') return { ...base, engine: plugin.engine }
      if (plugin.kind === 'extension') return base
      const shadowed = plugin.formats.filter((f) => kernel.rendererFor(f)?.plugin !== plugin)
      return { ...base, formats: [...plugin.formats], classes: [...plugin.classes], ...(shadowed.length ? { shadowed } : {}) }
    })
    if (!this.jsonEnabled()) {
      const s = this.style
      const where = (file: string) => {
        const rel = path.relative(this.config.root, file)
        return rel.startsWith('..') ? file : `omh:${rel}`
      }
      this.log(
        table([
          ['NAME', 'VERSION', 'KIND', 'ANSWERS', 'FROM', 'NAMED BY'].map((h) => s.dim(h)),
          ...plugins.map((p) => [
            s.bold(p.name),
            p.version,
            p.kind,
            p.kind === 'runtime'
              ? `engine ${p.engine}`
              : p.kind === 'extension'
                ? s.dim('launch and failure hooks')
                : p.formats!.map((f) => (p.shadowed?.includes(f) ? s.dim(`${f} (shadowed)`) : f)).join(', '),
            p.source.kind === 'installed' ? p.source.from : p.source.kind === 'bundled' ? s.dim('omh') : where(p.module),
            `${where(p.namedBy.file)} ${s.dim(`(${p.namedBy.layer})`)}`,
          ]),
        ]),
      )
    }
    return { plugins }
  }
}
