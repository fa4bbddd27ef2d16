import { readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { OmhError, PLUGIN_NOT_INSTALLED } from '@omh/plugin-api'
import { closest } from '@omh/plugin-kit'
import { omhHomeOf, replaceFile, snapshot } from '@omh/kernel'
import { Args } from '../../lib/oclif.js'
import { OmhCommand } from '../../lib/omh-command.js'
import { installedPlugins, npm, pluginFolderOf, readManifest, recordOrigin } from '../../lib/plugin-folder.js'
import { withPlugins } from '../../lib/settings-plugins.js'

export interface PluginRemoved {
  name: string
  folder: string
  settings: string
  /** Whether the settings file named it (and no longer does). */
  unnamed: boolean
}

export default class PluginsRm extends OmhCommand<PluginRemoved> {
  static override summary = 'Remove a plugin installed with `omh plugins add`, and its name from your personal settings.'
  static override description =
    'The name goes from `plugins` in $OMH_HOME/settings.toml first, then npm uninstalls the package from $OMH_HOME/plugins. The adapters and editors it shipped go with it.'
  static override args = { name: Args.string({ required: true, description: 'The package name, as `omh plugins` lists it.' }) }

  async run(): Promise<PluginRemoved> {
    const { args } = await this.parse(PluginsRm)
    const omhHome = omhHomeOf(process.env)
    const folder = pluginFolderOf(omhHome)
    const settingsFile = path.join(omhHome, 'settings.toml')
    const installed = Object.keys(await installedPlugins(folder)).sort()
    if (!installed.includes(args.name)) {
      throw OmhError.of(PLUGIN_NOT_INSTALLED, { args: [args.name, folder], hintArgs: [installed, closest(args.name, installed)] })
    }
    const before = await snapshot(settingsFile)
    let unnamed = false
    const next = withPlugins(before.bytes?.toString('utf8') ?? '', settingsFile, (current) => {
      unnamed = current.includes(args.name)
      return current.filter((p) => p !== args.name)
    })
    if (unnamed) await replaceFile(before, next)
    const spec = (await readManifest(folder)).dependencies?.[args.name] ?? ''
    try {
      await npm(folder, ['uninstall', args.name], args.name)
    } catch (error) {
      // A plugin still installed must stay named: put the settings back as they were.
      if (unnamed) await replaceFile(await snapshot(settingsFile), before.bytes ?? '')
      throw error
    }
    await recordOrigin(folder, args.name, undefined)
    if (spec.startsWith('file:packs/')) await rm(path.join(folder, spec.slice('file:'.length)), { force: true })
    if (!(await readdir(path.join(folder, 'packs')).catch(() => ['?'])).length) await rm(path.join(folder, 'packs'), { recursive: true, force: true })
    if (!this.jsonEnabled()) {
      this.log(`Removed ${this.style.bold(args.name)} from ${folder}${unnamed ? ` and from \`plugins\` in ${settingsFile}` : ''}.`)
    }
    return { name: args.name, folder, settings: settingsFile, unnamed }
  }
}
