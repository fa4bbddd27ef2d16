import { Args } from '../../lib/oclif.js'
import { GUEST_WORK, OmhError, USAGE } from '@omh/plugin-api'
import { agentUserSpec } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'

export interface SessionsTestResult {
  session: string
  command: string
  /** The test command's exit status, which is this command's too. */
  status: number
}

export default class SessionsTest extends SessionsCommand<SessionsTestResult> {
  static override summary = "Run the project's tests in a session: `[session] test`, as the agent, in its worktree."
  static override description =
    "The command `omh init` found, or the one you set, runs in the session's running container through `/bin/sh`, with the session's environment, network and limits, its output on your terminal. Exits with the tests' status. Without a session id, the most recent session."
  static override args = { session: Args.string({ description: 'Session id, e.g. s01.' }) }
  static override flags = { runtime: SessionsCommand.runtimeFlag }

  async run(): Promise<SessionsTestResult> {
    const { args, flags } = await this.parse(SessionsTest)
    const kernel = await this.kernel()
    const command = kernel.settings.last((s) => s.session?.test)?.value
    if (!command) throw OmhError.of(USAGE, { args: ['No test command is set: `omh init` writes the one it finds as `[session] test` in .omh/settings.toml, or set it yourself.'], hintArgs: ['sessions test'] })
    const sid = await this.session(args.session)
    const { runtime, container: found } = await this.runningContainer(sid, flags.runtime)
    const ran = await runtime.exec(found.id, ['/bin/sh', '-c', command], { tty: false, capture: this.jsonEnabled(), user: agentUserSpec(), workdir: GUEST_WORK }, this.runtimeContext())
    if (ran.exitCode !== 0) this.passOnStatus(ran.exitCode)
    return { session: sid, command, status: ran.exitCode }
  }
}
