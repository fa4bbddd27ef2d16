import path from 'node:path'
import type { Kernel, KernelOptions } from '@omh/kernel'
import { pluginFolderOf } from './plugin-folder.js'

/** omh's own settings layer, for the CLI rooted at `root`. */
export const defaultsFileOf = (root: string): string => path.join(root, 'defaults', 'settings.toml')

/** The kernel with omh's own defaults, adapters and editors, for the CLI rooted at `root`. */
export async function createKernel(root: string, cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env, options: Pick<KernelOptions, 'untrustedRepository'> = {}): Promise<Kernel> {
  const [{ Kernel, omhHomeOf }, { shareModules }] = await Promise.all([import('@omh/kernel'), import('./shared-modules.js')])
  shareModules()
  return Kernel.create({
    ...options,
    cwd,
    env,
    defaultsFile: defaultsFileOf(root),
    bundledAdapters: path.join(root, 'adapters'),
    bundledEditors: path.join(root, 'editors'),
    // The user's plugin folder before omh's own, so what `omh plugins add` installed is found by name.
    fallbackDirs: [pluginFolderOf(omhHomeOf(env)), root],
  })
}
