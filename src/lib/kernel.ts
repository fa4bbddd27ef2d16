import path from 'node:path'
import type { Kernel } from '@omh/kernel'

/** The kernel with omh's own defaults, adapters and editors, for the CLI rooted at `root`. */
export async function createKernel(root: string, cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): Promise<Kernel> {
  const { Kernel } = await import('@omh/kernel')
  return Kernel.create({
    cwd,
    env,
    defaultsFile: path.join(root, 'defaults', 'settings.toml'),
    bundledAdapters: path.join(root, 'adapters'),
    bundledEditors: path.join(root, 'editors'),
    fallbackDirs: [root],
  })
}
