import type { Hook } from '../../lib/oclif.js'

/**
 * A word oclif cannot match to a command is a harness. `execute` routes
 * such a line to the `launch` command before oclif sees it; this covers
 * what reaches oclif unrouted (a word under a topic, or oclif run by other
 * means), handing the launch the words oclif split.
 */
const hook: Hook.CommandNotFound = async function (options) {
  // Only a build whose manifest lost the command gets here; forwarding again would never end.
  if (options.id === 'launch') throw new Error('the launch command is missing from oclif.manifest.json; rebuild omh')
  await this.config.runCommand('launch', ['--', ...options.id.split(':'), ...(options.argv ?? [])])
}

export default hook
