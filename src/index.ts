import { execute as oclifExecute } from './lib/oclif.js'
import { COMMANDS } from './commands.js'
import { routeArgv } from './lib/route.js'
import type { Dynamic } from './lib/complete.js'

// `launch` is reached by routing only: a bare word is always a harness, even that one.
const commandWords = new Set(Object.keys(COMMANDS).map((id) => id.split(':')[0]!).filter((word) => word !== 'launch'))

/** oclif's `execute`, with argv routed so a harness and its arguments reach the launch command whole. */
export function execute(options: Parameters<typeof oclifExecute>[0]): ReturnType<typeof oclifExecute> {
  return oclifExecute({ ...options, args: routeArgv(options.args ?? process.argv.slice(2), commandWords) })
}

export { COMMANDS, commandNotFound } from './commands.js'

/** The values of one kind for shell completion (lib/completion-values.ts), loaded only for a Tab. */
export async function completionValues(root: string, kind: Dynamic): Promise<string[]> {
  return (await import('./lib/completion-values.js')).completionValues(root, kind)
}

/**
 * A kept launch's reload of the egress allowlist (packages/fast-path/src/launches.ts): loads
 * omh only once a settings file changed while the harness runs.
 */
export async function keptAllowlist(root: string, at: { harness: string; engine: string; container: string; dir: string }): Promise<void> {
  const [{ createKernel }, { reloadAllowlist }] = await Promise.all([import('./lib/kernel.js'), import('@omh/sandbox')])
  await reloadAllowlist(await createKernel(root), at, { env: process.env, verbose: false, progress: () => undefined })
}
