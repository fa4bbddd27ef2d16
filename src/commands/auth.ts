import { Args, Flags } from '../lib/oclif.js'
import type { AuthResult } from '@omh/sandbox'
import { OmhCommand } from '../lib/omh-command.js'
import { sharedFlags } from '../lib/flags.js'

export default class Auth extends OmhCommand<AuthResult> {
  static override summary = "Log in to a harness with its own login, in its image, and keep the login as an account."
  static override description = `Runs the harness in its image with the adapter's credential paths mounted read-write from $OMH_STATE/creds/<harness>/<account>/; you log in inside it as the adapter's \`login\` says, then leave. Afterwards every \`token\` file must hold real content: a login left unfinished is reported and nothing is recorded. The account is the argument, else -a, else the \`account\` setting, else the only captured one (a re-login), else "default"; with several captured and none named, omh asks you to name one.`

  static override args = {
    harness: Args.string({ required: true, description: 'Harness name, e.g. claude.' }),
    account: Args.string({ required: false, description: 'Account name (one path component).' }),
  }

  static override flags = {
    account: Flags.string({ char: 'a', summary: 'Account name, when not given as the second argument.' }),
    runtime: sharedFlags.runtime,
  }

  async run(): Promise<AuthResult> {
    const { args, flags } = await this.parse(Auth)
    const kernel = await this.kernel()
    const { authenticate } = await import('@omh/sandbox')
    const err = this.errStyle
    const result = await authenticate(
      kernel,
      {
        harness: args.harness,
        tty: Boolean(process.stdin.isTTY && process.stdout.isTTY),
        ...(args.account ? { account: args.account } : {}),
        ...(flags.account ? { flag: flags.account } : {}),
        ...(flags.runtime ? { engine: flags.runtime } : {}),
      },
      {
        context: { env: process.env, verbose: this.verbose, progress: (line) => this.notice(err.dim(line)) },
        notice: (line) => this.notice(`${err.bold('omh:')} ${line}`),
      },
    )
    if (!this.jsonEnabled()) {
      const s = this.style
      const what = result.confirmed ? (result.reauthenticated ? 'logged in again' : 'captured') : 'recorded (the adapter names no token, so the login is not confirmed)'
      this.log(`${s.green('✓')} ${result.harness} account ${s.bold(result.account)} ${what}: ${s.dim(result.directory)}`)
      if (result.accounts.length > 1) {
        this.log(s.dim(`  ${result.harness} has ${result.accounts.length} accounts (${result.accounts.join(', ')}): pick one with -a, or \`account = "…"\` in settings`))
      }
      if (!result.confirmed) this.log(s.dim(`  check it with \`omh doctor ${result.harness} -a ${result.account}\``))
      this.log(
        s.dim(
          result.keptOutside
            ? '  kept outside: from the next launch behind the egress allowlist on, sessions hold placeholders and omh\'s credential proxy the tokens'
            : `  stays inside: omh keeps no ${result.harness} login of this kind outside (docs/accounts.md has which it keeps), so every session mounts these files and the agent can read them`,
        ),
      )
    }
    return result
  }
}
