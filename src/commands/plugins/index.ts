import path from 'node:path'
import { OmhCommand } from '../../lib/omh-command.js'
import { table } from '../../lib/table.js'

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
  /** Formats this plugin answers that a more specific plugin answers first. */
  shadowed?: string[]
}

export default class Plugins extends OmhCommand<{ plugins: PluginListing[] }> {
  static override summary = 'List the loaded renderer, runtime and extension plugins, and the settings file that named each.'

  async run(): Promise<{ plugins: PluginListing[] }> {
    await this.parse(Plugins)
    const kernel = await this.kernel()
    const plugins: PluginListing[] = kernel.plugins.map(({ plugin, namedBy, specifier, module }) => {
      const base = { name: plugin.meta.name, version: plugin.meta.version, kind: plugin.kind, namedBy, specifier, module }
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
          ['NAME', 'VERSION', 'KIND', 'ANSWERS', 'NAMED BY'].map((h) => s.dim(h)),
          ...plugins.map((p) => [
            s.bold(p.name),
            p.version,
            p.kind,
            p.kind === 'runtime'
              ? `engine ${p.engine}`
              : p.kind === 'extension'
                ? s.dim('launch and failure hooks')
                : p.formats!.map((f) => (p.shadowed?.includes(f) ? s.dim(`${f} (shadowed)`) : f)).join(', '),
            `${where(p.namedBy.file)} ${s.dim(`(${p.namedBy.layer})`)}`,
          ]),
        ]),
      )
    }
    return { plugins }
  }
}
