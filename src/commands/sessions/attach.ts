import { Args, Flags } from '../../lib/oclif.js'
import { NOTHING_IN_BACKGROUND, OmhError, USAGE } from '@omh/plugin-api'
import { agentUserSpec, attachArgv, backgroundHarnesses, statusArgv } from '@omh/sandbox'
import { GUEST_WORK } from '@omh/plugin-api'
import { SessionsCommand } from '../../lib/sessions-command.js'

export interface SessionsAttachResult {
  session: string
  harness: string
  /** The harness's exit status when it exited while attached; absent when you detached and it runs on. */
  status?: number
}

export default class SessionsAttach extends SessionsCommand<SessionsAttachResult> {
  static override summary = 'Bring a harness running in the background to this terminal.'
  static override description =
    'A harness started with `omh --detach` runs under dtach in its session. This attaches your terminal to it; Ctrl-\\ detaches again and leaves it running. When the harness exits while attached, this exits with its status. Without a session id, the most recent session; with several harnesses in the background there, --harness names one.'
  static override args = { session: Args.string({ description: 'Session id, e.g. s01 (default: the most recent).' }) }
  static override flags = {
    runtime: SessionsCommand.runtimeFlag,
    harness: Flags.string({ summary: 'The harness to attach to, when several run in the session.', helpValue: '<harness>' }),
  }
  static override examples = ['omh sessions attach', 'omh sessions attach s02', 'omh sessions attach s02 --harness codex']

  async run(): Promise<SessionsAttachResult> {
    const { args, flags } = await this.parse(SessionsAttach)
    if (!process.stdin.isTTY || !process.stdout.isTTY) throw OmhError.of(USAGE, { args: ['`omh sessions attach` gives the harness this terminal, and this is no terminal.'], hintArgs: ['sessions attach'] })
    const sid = await this.session(args.session)
    const { runtime, container } = await this.runningContainer(sid, flags.runtime)
    const context = this.runtimeContext()
    const running = (await backgroundHarnesses(runtime, container.id, context, { session: sid })).filter((h) => h.running)
    const harness = pick(sid, running.map((h) => h.harness), flags.harness, 'runs')
    const options = { user: agentUserSpec(), workdir: GUEST_WORK }
    await runtime.exec(container.id, attachArgv(harness), { ...options, tty: true, interactive: true }, context)
    const kept = await runtime.exec(container.id, statusArgv(harness), { ...options, tty: false, capture: true }, context)
    const status = /^\d{1,3}$/.test(kept.stdout.trim()) ? Number(kept.stdout.trim()) : undefined
    if (status !== undefined && status !== 0) this.passOnStatus(status)
    return { session: sid, harness, ...(status !== undefined ? { status } : {}) }
  }
}

/** The harness a command means: the one named, or the only one there. */
export function pick(sid: string, harnesses: readonly string[], named: string | undefined, verb: 'runs' | 'left output'): string {
  if (named !== undefined) {
    if (harnesses.includes(named)) return named
    throw OmhError.of(NOTHING_IN_BACKGROUND, { args: [sid, `${named} ${verb === 'runs' ? 'does not run in the background' : 'left no output'}`], hintArgs: [sid] })
  }
  if (harnesses.length === 1) return harnesses[0]!
  if (!harnesses.length) throw OmhError.of(NOTHING_IN_BACKGROUND, { args: [sid, verb === 'runs' ? 'No harness runs in the background' : 'No harness left output'], hintArgs: [sid] })
  throw OmhError.of(USAGE, { args: [`Several harnesses ${verb === 'runs' ? 'run' : 'left output'} in ${sid} (${harnesses.join(', ')}): name one with --harness.`], hintArgs: ['sessions'] })
}
