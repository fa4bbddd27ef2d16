import { Args } from '../../lib/oclif.js'
import { LABEL, listSessions, takeDown } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'
import { table } from '../../lib/table.js'

export interface SessionsDownResult {
  sessions: { session: string; stopped: boolean }[]
}

export default class SessionsDown extends SessionsCommand<SessionsDownResult> {
  static override summary = "Stop sessions' containers; worktrees, branches and sandbox repositories stay."
  static override description = 'Without ids, every session of this repository. The next launch starts the container again.'
  static override strict = false
  static override args = { session: Args.string({ description: 'Session ids, e.g. s01 s02 (default: all).' }) }
  static override flags = { runtime: SessionsCommand.runtimeFlag }

  async run(): Promise<SessionsDownResult> {
    const { argv, flags } = await this.parse(SessionsDown)
    const kernel = await this.kernel()
    const repo = await this.repository()
    const ids = argv.length ? await Promise.all((argv as string[]).map((sid) => this.session(sid))) : await listSessions(kernel.omhState, repo)
    const { runtime } = await this.runtime(flags.runtime)
    const context = this.runtimeContext()
    const containers = await runtime.list({ [LABEL.repo]: repo.id }, context)
    const sessions: SessionsDownResult['sessions'] = []
    for (const sid of ids) {
      const mine = containers.filter((c) => c.labels[LABEL.session] === sid)
      // On an engine elsewhere the agent's work is in volumes: home first, then they go.
      await takeDown(kernel.omhState, repo, sid, { runtime, context, containers: mine.map((c) => c.id), bringHome: true })
      sessions.push({ session: sid, stopped: mine.some((c) => c.running) })
    }
    if (!this.jsonEnabled()) {
      if (!sessions.length) this.notice('No sessions to stop.')
      else this.log(table(sessions.map((r) => [this.style.bold(r.session), r.stopped ? 'stopped; worktree and branch kept' : this.style.dim('was not running')])))
    }
    return { sessions }
  }
}
