import { Args, Flags } from '../../lib/oclif.js'
import { containerName, deniedDestinations, readDecisions, type DeniedDestination, type EgressDecision } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'
import { table } from '../../lib/table.js'

export interface SessionsEgressResult {
  session: string
  decisions: EgressDecision[]
  /** With `--denied`: each refused destination once, most refused first. */
  denied?: DeniedDestination[]
}

export default class SessionsEgress extends SessionsCommand<SessionsEgressResult> {
  static override summary = "Show what a session's egress proxy let out and refused: time, host, port, decision."
  static override description =
    'Every request the session made through its proxy since its container started, oldest first, and every request the credential proxy refused for carrying a secret toward a host it is not bound to. Without a session id, the most recent session. A session running with `[network] egress = "open"` or `"none"` has no proxy and shows nothing.'
  static override args = { session: Args.string({ description: 'Session id, e.g. s01.' }) }
  static override flags = {
    denied: Flags.boolean({ summary: 'Only what was refused, once per host and port, with a count: what `omh sessions allow` would let out.', default: false }),
    runtime: SessionsCommand.runtimeFlag,
  }

  async run(): Promise<SessionsEgressResult> {
    const { args, flags } = await this.parse(SessionsEgress)
    const repo = await this.repository()
    const sid = await this.session(args.session)
    const { runtime } = await this.runtimeFor(sid, flags.runtime)
    const decisions = await readDecisions(runtime, containerName(repo, sid), this.runtimeContext())
    if (flags.denied) {
      const denied = deniedDestinations(decisions)
      if (!this.jsonEnabled()) {
        if (!denied.length) this.notice(`The egress proxy of ${sid} has refused nothing.`)
        else this.log(table(denied.map((d) => [`${d.host}:${d.port}`, `${d.count}×`, `last ${d.last}`])))
      }
      return { session: sid, decisions, denied }
    }
    if (!this.jsonEnabled()) {
      if (!decisions.length) this.notice(`No requests through the egress proxy of ${sid}.`)
      else
        this.log(
          table(decisions.map((d) => [d.time, d.allowed ? 'allowed' : this.style.bold(d.secret ? `refused: ${d.secret} is not bound to it` : 'denied'), d.method, `${d.host}:${d.port}`, String(d.status)])),
        )
    }
    return { session: sid, decisions }
  }
}

