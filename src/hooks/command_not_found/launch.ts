import type { Hook } from '@oclif/core'

/**
 * A bare word that is not a command is a harness: `omh claude`. Until sessions
 * exist, name what was asked for and what is there.
 */
const hook: Hook.CommandNotFound = async function (options) {
  const { Kernel, OmhError, ADAPTER_NOT_FOUND, closest } = await import('@omh/kernel')
  void Kernel
  const word = options.id.split(':')[0] ?? options.id
  const commands = [...new Set(options.config.commandIDs.map((id) => id.split(':')[0]!))]
  const near = closest(word, commands)
  const error = OmhError.of(ADAPTER_NOT_FOUND, { args: [word], hintArgs: [[], '$OMH_HOME/adapters', near] })
  this.error(`${error.message} ${error.hint ?? ''}`, { exit: 2 })
}

export default hook
