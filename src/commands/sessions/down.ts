import { Args, Flags } from '../../lib/oclif.js'
import { listSessions, stopSessions, type SessionsOnEngine, type StoppedSession } from '@omh/sandbox'
import { OmhError, USAGE } from '@omh/plugin-api'
import { SessionsCommand } from '../../lib/sessions-command.js'
import { table } from '../../lib/table.js'

export interface SessionsDownResult {
  sessions: readonly StoppedSession[]
}

export default class SessionsDown extends SessionsCommand<SessionsDownResult> {
  static override summary = "Stop sessions' containers; worktrees, branches and sandbox repositories stay."
  static override description =
    'Without ids, the current session (the one launched into last), as diff, commit and push take it; --all stops every session of this repository. Each session is stopped on the engine it runs on. The next launch starts the container again.'
  static override strict = false
  static override args = { session: Args.string({ description: 'Session ids, e.g. s01 s02 (default: the most recent).' }) }
  static override flags = {
    all: Flags.boolean({ summary: "Stop every session of this repository.", default: false }),
    runtime: SessionsCommand.runtimeFlag,
  }

  protected override readonly stopsOnly = true

  async run(): Promise<SessionsDownResult> {
    const { argv, flags } = await this.parse(SessionsDown)
    if (flags.all && argv.length) throw OmhError.of(USAGE, { args: ['Name sessions or give --all, not both.'], hintArgs: ['sessions down'] })
    const kernel = await this.kernel()
    const repo = await this.repository()
    const named = argv as string[]
    const ids = flags.all ? await listSessions(kernel.omhState, repo) : await Promise.all((named.length ? named : [undefined]).map((sid) => this.session(sid)))
    const context = this.runtimeContext()
    const groups: SessionsOnEngine[] = []
    for (const [engine, group] of await this.byEngine(ids, flags.runtime)) groups.push({ runtime: (await this.runtime(engine)).runtime, context, sessions: group })
    const sessions = await stopSessions(kernel.omhState, repo, groups)
    if (!this.jsonEnabled()) {
      if (!sessions.length) this.notice('No sessions to stop.')
      else this.log(table(sessions.map((r) => [this.style.bold(r.session), r.stopped ? 'stopped; worktree and branch kept' : this.style.dim('was not running')])))
    }
    return { sessions }
  }
}
