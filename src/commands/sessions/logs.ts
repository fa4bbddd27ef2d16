import { Args, Flags } from '../../lib/oclif.js'
import { GUEST_WORK } from '@omh/plugin-api'
import { agentUserSpec, backgroundHarnesses, logsArgv } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'
import { outputAsText } from '../../lib/printable.js'
import { pick } from './attach.js'

export interface SessionsLogsResult {
  session: string
  harness: string
  /** The output as text: the terminal's escape sequences taken out, other controls escaped. */
  output: string
}

export default class SessionsLogs extends SessionsCommand<SessionsLogsResult> {
  static override summary = 'Show what a harness in the background printed, without attaching.'
  static override description =
    "A harness started with `omh --detach` runs under script, which keeps its terminal output in the session's container: the last 2 MiB, running or exited, until the container is replaced. Shown as text: the terminal's escape sequences (colours, cursor moves) taken out and every other control escaped, so nothing the agent printed can act on your terminal; --raw passes the bytes through as they were. -f keeps printing what comes until interrupted."
  static override args = { session: Args.string({ description: 'Session id, e.g. s01 (default: the most recent).' }) }
  static override flags = {
    runtime: SessionsCommand.runtimeFlag,
    harness: Flags.string({ summary: 'The harness whose output to show, when several left some.', helpValue: '<harness>' }),
    follow: Flags.boolean({ char: 'f', summary: 'Keep printing what the harness prints, until interrupted.', default: false }),
    raw: Flags.boolean({ summary: 'Pass the output through as the harness wrote it, escape sequences and all.', default: false }),
  }
  static override examples = ['omh sessions logs', 'omh sessions logs s02 -f', 'omh sessions logs s02 --harness codex --json']

  async run(): Promise<SessionsLogsResult> {
    const { args, flags } = await this.parse(SessionsLogs)
    const sid = await this.session(args.session)
    const { runtime, container } = await this.runningContainer(sid, flags.runtime)
    const context = this.runtimeContext()
    const harness = pick(sid, (await backgroundHarnesses(runtime, container.id, context, { session: sid })).filter((h) => h.running || h.logAt !== undefined).map((h) => h.harness), flags.harness, 'left output')
    const show = (text: string) => (flags.raw ? text : outputAsText(text))
    const options = { user: agentUserSpec(), workdir: GUEST_WORK, tty: false, capture: true }
    const quiet = this.jsonEnabled()
    if (flags.follow && !quiet) {
      // Each line as it comes; the engine's client runs until this process is interrupted.
      await runtime.exec(container.id, logsArgv(harness, true), { ...options, stream: true }, { ...context, progress: (line) => this.answer(`${show(line)}\n`) })
      return { session: sid, harness, output: '' }
    }
    const ran = await runtime.exec(container.id, logsArgv(harness, false), options, context)
    const output = show(ran.stdout)
    if (!quiet && output) this.answer(output.endsWith('\n') ? output : `${output}\n`)
    return { session: sid, harness, output }
  }
}
