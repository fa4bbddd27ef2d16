import path from 'node:path'
import { USAGE, OmhError } from '@omh/plugin-api'
import { Args } from '../lib/oclif.js'
import { OmhCommand } from '../lib/omh-command.js'
import { completionScript, SHELLS, type Shell } from '../lib/completion-scripts.js'

export default class Completion extends OmhCommand<{ shell: Shell; script: string }> {
  static override summary = 'Print the shell completion script for bash, zsh or fish.'
  static override description =
    'It completes commands and flags, the harness names omh finds after `omh`, and the session ids of this repository after `omh sessions …`. bash: eval "$(omh completion bash)" in ~/.bashrc; zsh: eval "$(omh completion zsh)" in ~/.zshrc after compinit; fish: omh completion fish > ~/.config/fish/completions/omh.fish.'
  static override args = {
    shell: Args.string({ description: 'bash, zsh or fish; default: the one $SHELL names.', options: [...SHELLS] }),
  }

  async run(): Promise<{ shell: Shell; script: string }> {
    const { args } = await this.parse(Completion)
    const shell = (args.shell ?? path.basename(process.env['SHELL'] ?? '')) as Shell
    if (!SHELLS.includes(shell)) {
      const named = process.env['SHELL'] ? `$SHELL is ${process.env['SHELL']}` : '$SHELL is not set'
      throw OmhError.of(USAGE, { args: [`name the shell to complete in: ${SHELLS.join(', ')} (${named})`], hintArgs: ['completion'] })
    }
    const script = completionScript(shell, this.config.bin)
    if (!this.jsonEnabled()) this.answer(script)
    return { shell, script }
  }
}
