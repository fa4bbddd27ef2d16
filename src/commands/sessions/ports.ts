import { Args } from '../../lib/oclif.js'
import { GUEST_SSH_PORT, containerName, publishedPorts, type SessionPort } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'
import { table } from '../../lib/table.js'

export interface SessionsPortsResult {
  session: string
  ports: SessionPort[]
}

export default class SessionsPorts extends SessionsCommand<SessionsPortsResult> {
  static override summary = 'Show where this machine reaches the ports a session serves: guest port → http://127.0.0.1:N.'
  static override description =
    'The ports of `[session] ports` and a devcontainer\'s `forwardPorts`, published on 127.0.0.1 at ports the engine picked when the container started (another after it restarts). Without a session id, the most recent session. Two sessions serving the same port each get their own.'
  static override args = { session: Args.string({ description: 'Session id, e.g. s01.' }) }
  static override flags = { runtime: SessionsCommand.runtimeFlag }

  async run(): Promise<SessionsPortsResult> {
    const { args, flags } = await this.parse(SessionsPorts)
    const repo = await this.repository()
    const sid = await this.session(args.session)
    const { runtime } = await this.runtimeFor(sid, flags.runtime)
    const ports = await publishedPorts(runtime, containerName(repo, sid), this.runtimeContext(), [GUEST_SSH_PORT])
    if (!this.jsonEnabled()) {
      if (!ports.length) this.notice(`${sid} publishes no port: it is not running, or [session] ports and forwardPorts name none.`)
      else this.log(table(ports.map((p) => [String(p.guest), '→', p.url])))
    }
    return { session: sid, ports }
  }
}
