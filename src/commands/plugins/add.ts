import { existsSync } from 'node:fs'
import { readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { OmhError, PLUGIN_NOT_FOUND } from '@omh/plugin-api'
import { importPlugin, omhHomeOf, replaceFile, resolvePluginModule, snapshot } from '@omh/kernel'
import { createKernel } from '../../lib/kernel.js'
import { Args } from '../../lib/oclif.js'
import { OmhCommand } from '../../lib/omh-command.js'
import {
  installedPlugins,
  localPack,
  npm,
  pluginFolderOf,
  prepareFolder,
  recordOrigin,
  restoreFolder,
  snapshotFolder,
} from '../../lib/plugin-folder.js'
import { withPlugins } from '../../lib/settings-plugins.js'

export interface PluginAdded {
  /** The package name, as `plugins` in your settings now names it. */
  name: string
  version: string
  kind: 'renderer' | 'runtime' | 'extension'
  /** What was given to `omh plugins add`. */
  from: string
  folder: string
  settings: string
  /** Whether the settings file was changed (false when it named the plugin already). */
  named: boolean
  /** Adapter and editor files the package ships, by name. */
  adapters: string[]
  editors: string[]
}

export default class PluginsAdd extends OmhCommand<PluginAdded> {
  static override summary = 'Install a plugin into your plugin folder and name it in your personal settings.'
  static override description =
    'Installs with npm (scripts off) into $OMH_HOME/plugins, a project of its own with a lockfile, then loads the package and checks that it is an omh plugin this omh supports. Only then does it add the package to `plugins` in $OMH_HOME/settings.toml. A package that fails any step is removed again, leaving the folder and the settings as they were.'
  static override args = {
    spec: Args.string({
      required: true,
      description: 'An npm package spec (name, name@version), a path to a package folder, or a tarball.',
    }),
  }
  static override examples = ['<%= config.bin %> plugins add omh-plugin-example', '<%= config.bin %> plugins add ./my-plugin', '<%= config.bin %> plugins add ./my-plugin-1.0.0.tgz']

  async run(): Promise<PluginAdded> {
    const { args } = await this.parse(PluginsAdd)
    const omhHome = omhHomeOf(process.env)
    const folder = pluginFolderOf(omhHome)
    const settingsFile = path.join(omhHome, 'settings.toml')
    const before = await snapshotFolder(folder)
    const settingsBefore = await snapshot(settingsFile)
    const packsBefore = new Set(await readdir(path.join(folder, 'packs')).catch(() => [] as string[]))
    const packs: string[] = []
    // A folder omh cannot read is reported before anything in it changes.
    const was = await installedPlugins(folder)
    try {
      await prepareFolder(folder, this.config.root)
      const local = await localPack(folder, args.spec, process.cwd())
      if (local) {
        const pack = path.join('packs', local.spec.replace(/^file:packs\//, ''))
        if (!packsBefore.has(path.basename(pack))) packs.push(pack)
      }
      await npm(folder, ['install', '--save', local?.spec ?? args.spec], args.spec)
      const now = await installedPlugins(folder)
      const name =
        (local?.name && local.name in now ? local.name : undefined) ??
        Object.keys(now).find((n) => !(n in was)) ?? Object.keys(now).find((n) => now[n] !== was[n]) ?? nameIn(args.spec, now)
      if (!name) throw OmhError.of(PLUGIN_NOT_FOUND, { args: [args.spec, path.join(folder, 'package.json')], hintArgs: [args.spec, folder] })
      await recordOrigin(folder, name, local?.origin)
      const module = resolvePluginModule(name, folder)
      if (!module) throw OmhError.of(PLUGIN_NOT_FOUND, { args: [name, path.join(folder, 'package.json')], hintArgs: [name, folder] })
      const plugin = await importPlugin(name, module, path.join(folder, 'package.json'))
      let named = false
      const text = settingsBefore.bytes?.toString('utf8') ?? ''
      const next = withPlugins(text, settingsFile, (current) => {
        if (current.includes(name)) return [...current]
        named = true
        return [...current, name]
      })
      if (named) await replaceFile(settingsBefore, next)
      try {
        // Loaded as every later command will load it: found by name from the settings, extensions applied.
        await createKernel(this.config.root)
      } catch (error) {
        if (named) await putBack(settingsBefore)
        throw error
      }
      const root = path.join(folder, 'node_modules', name)
      const result: PluginAdded = {
        name,
        version: plugin.meta.version,
        kind: plugin.kind,
        from: local?.origin ?? args.spec,
        folder,
        settings: settingsFile,
        named,
        adapters: await tomlNames(path.join(root, 'adapters')),
        editors: await tomlNames(path.join(root, 'editors')),
      }
      if (!this.jsonEnabled()) {
        const brings = [
          result.adapters.length ? `adapters ${result.adapters.join(', ')}` : '',
          result.editors.length ? `editors ${result.editors.join(', ')}` : '',
        ].filter(Boolean)
        this.log(`Installed ${this.style.bold(name)} ${plugin.meta.version} (${plugin.kind}) in ${folder}${brings.length ? `, with ${brings.join(' and ')}` : ''}.`)
        this.log(named ? `Named it in ${settingsFile}.` : `${settingsFile} names it already.`)
      }
      return result
    } catch (error) {
      const left = await restoreFolder(before, packs)
      if (left) this.notice(`The plugin folder could not be put back as it was: ${left.message}`)
      throw error
    }
  }
}

/** The settings file as it was before this command named the plugin. */
async function putBack(before: Awaited<ReturnType<typeof snapshot>>): Promise<void> {
  if (before.bytes) await replaceFile(await snapshot(before.file), before.bytes)
  else await rm(before.file, { force: true })
}

/** The plugin a spec names when npm saved nothing new: `name` or `name@range` already installed. */
function nameIn(spec: string, installed: Record<string, string>): string | undefined {
  const name = spec.startsWith('@') ? `@${spec.slice(1).split('@')[0]}` : spec.split('@')[0]
  return name && name in installed ? name : undefined
}

async function tomlNames(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return []
  return (await readdir(dir)).filter((n) => n.endsWith('.toml')).map((n) => n.slice(0, -5)).sort()
}
