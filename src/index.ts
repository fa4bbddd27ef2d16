import { execute as oclifExecute } from './lib/oclif.js'
import { COMMANDS } from './commands.js'
import { routeArgv } from './lib/route.js'

const commandWords = new Set(Object.keys(COMMANDS).map((id) => id.split(':')[0]!))

/** oclif's `execute`, with argv routed so a harness's arguments reach the launch hook whole. */
export function execute(options: Parameters<typeof oclifExecute>[0]): ReturnType<typeof oclifExecute> {
  return oclifExecute({ ...options, args: routeArgv(options.args ?? process.argv.slice(2), commandWords) })
}

export { COMMANDS, commandNotFound } from './commands.js'
