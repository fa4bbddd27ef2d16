import { Args } from '../../lib/oclif.js'
import { GUEST_WORK } from '@omh/plugin-api'
import { agentUserSpec } from '@omh/sandbox'
import { SessionsCommand, sessionAndRest } from '../../lib/sessions-command.js'

export interface SessionsExecResult {
  session: string
  command: string[]
  /** The command's exit status, which is this command's too. */
  status: number
  /** With --json, what it printed; otherwise it went to your terminal. */
  stdout?: string
  stderr?: string
}

/** Without a command: the agent's login shell, bash where the image has it. */
const SHELL = ['/bin/sh', '-c', 'if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi']

export default class SessionsExec extends SessionsCommand<SessionsExecResult> {
  static override summary = "Run a command, or a shell, in a session's container, as the agent, in /work."
  static override description =
    "Needs no ssh and works under every egress mode: the command runs through the engine, as the agent, in the worktree, with the session's environment, network and limits. With a terminal it gets one; otherwise its output is passed through (--json captures it). Exits with the command's status. Without a session id, the most recent session; without a command, a login shell."
  static override strict = false
  static override args = { session: Args.string({ description: 'Session id, e.g. s01 (default: the most recent).' }) }
  static override flags = { runtime: SessionsCommand.runtimeFlag }
  static override examples = ['omh sessions exec', 'omh sessions exec s02 -- npm test', 'omh sessions exec -- git log --oneline']

  async run(): Promise<SessionsExecResult> {
    const { flags } = await this.parse(SessionsExec)
    const { session, rest: command } = sessionAndRest(this.argv, ['--runtime'], 'sessions exec')
    const sid = await this.session(session)
    const { runtime, container: found } = await this.runningContainer(sid, flags.runtime)
    const argv = command.length ? command : SHELL
    const capture = this.jsonEnabled()
    const ran = await runtime.exec(found.id, argv, { tty: !capture, interactive: !capture, capture, user: agentUserSpec(), workdir: GUEST_WORK }, this.runtimeContext())
    if (ran.exitCode !== 0) this.passOnStatus(ran.exitCode)
    return { session: sid, command: [...argv], status: ran.exitCode, ...(capture ? { stdout: ran.stdout, stderr: ran.stderr } : {}) }
  }
}
