import { Args } from '../../lib/oclif.js'
import { containerName, readDecisions, type EgressDecision } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'
import { table } from '../../lib/table.js'

export interface SessionsEgressResult {
  session: string
  decisions: EgressDecision[]
}

export default class SessionsEgress extends SessionsCommand<SessionsEgressResult> {
  static override summary = "Show what a session's egress proxy let out and refused: time, host, port, decision."
  static override description =
    'Every request the session made through its proxy since its container started, oldest first. Without a session id, the most recent session. A session running with `[network] egress = "open"` or `"none"` has no proxy and shows nothing.'
  static override args = { session: Args.string({ description: 'Session id, e.g. s01.' }) }
  static override flags = { runtime: SessionsCommand.runtimeFlag }

  async run(): Promise<SessionsEgressResult> {
    const { args, flags } = await this.parse(SessionsEgress)
    const repo = await this.repository()
    const sid = await this.session(args.session)
    const { runtime } = await this.runtimeFor(sid, flags.runtime)
    const decisions = await readDecisions(runtime, containerName(repo, sid), this.runtimeContext())
    if (!this.jsonEnabled()) {
      if (!decisions.length) this.notice(`No requests through the egress proxy of ${sid}.`)
      else
        this.log(
          table(decisions.map((d) => [d.time, d.allowed ? 'allowed' : this.style.bold('denied'), d.method, `${d.host}:${d.port}`, String(d.status)])),
        )
    }
    return { session: sid, decisions }
  }
}
