/**
 * `omh attach`: reach a running session over SSH. Starts sshd in the session
 * container (as the agent, on the port the plan publishes on 127.0.0.1),
 * makes the repository's key pair on first use, and writes the session's ssh
 * config entry with the host port the engine picked, included from the
 * user's `~/.ssh/config`.
 */
import { connect } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { GUEST_SSH_PORT, SSHD_SCRIPT, ensureInclude, ensureKeyPair, hostEntry, sshAlias, sshPaths, sshUrl, writeHostEntry, type IncludeChange } from '../ssh.js'
import { ATTACH_FAILED, ATTACH_NEEDS_TUNNEL, ATTACH_UNREACHABLE, OmhError, SESSION_NOT_RUNNING, type RuntimeContext } from '@omh/plugin-api'
import type { KernelView } from '../kernel-view.js'
import { agentUser, userSpec } from '../agent-user.js'
import { egressDir, egressOf, recordedNetwork } from '../network/egress.js'
import { readCopied } from '../engine-files/copied.js'
import { LABEL } from '../host/layout.js'
import { Sessions } from './sessions.js'

export interface AttachRequest {
  /** `--session`: that one; absent: the session launched into last. */
  readonly session?: string
  /** `auto` or an engine name; absent: the `runtime` setting. */
  readonly engine?: string
  /**
   * `--port`: a port on this machine's 127.0.0.1 that already reaches the container's sshd port (a
   * forward the user made); absent: the port the engine published.
   */
  readonly port?: number
}

export interface AttachHost {
  readonly context: RuntimeContext
  /** How long sshd may take to answer once started; absent: 10 s. */
  readonly readyMs?: number
}

export interface Attached {
  readonly session: string
  /** The ssh alias: `ssh <alias>` reaches the session. */
  readonly alias: string
  /** What editors that take a URL open. */
  readonly url: string
  /** Where sshd is published: always 127.0.0.1. */
  readonly host: '127.0.0.1'
  /** The host port the engine picked for this container; another after it restarts. */
  readonly port: number
  /** The session's ssh config entry. */
  readonly entry: string
  /** The user's ssh config, and what omh did to it. */
  readonly sshConfig: string
  readonly include: IncludeChange
}

/** How long sshd may take to answer after it was started. */
const READY_MS = 10_000

export async function attach(kernel: KernelView, request: AttachRequest, host: AttachHost): Promise<Attached> {
  const env = kernel.options.env
  const sessions = Sessions.of(kernel)
  const repo = sessions.repo
  // Unlike a launch, a session another omh holds is the one to attach to: its harness runs there.
  const sid = await sessions.current(request.session)

  const { runtime, info } = await kernel.resolveRuntime(request.engine, host.context)
  const container = (await runtime.list({ [LABEL.repo]: repo.id, [LABEL.session]: sid }, host.context)).find((c) => c.running)
  if (!container) throw OmhError.of(SESSION_NOT_RUNNING, { args: [sid], hintArgs: [sid] })

  // A container behind the egress proxy has no port the host reaches, and giving it one would give
  // it a way out around the proxy: refused, not left to time out.
  if (await recordedNetwork(egressDir(sessions.paths(sid).run))) {
    throw OmhError.of(ATTACH_UNREACHABLE, { args: [sid], hintArgs: [egressOf(kernel.settings, { egress: [] }).file, sid] })
  }

  // The engine picked the host port when the container started; it is only known by asking.
  const copied = (await readCopied(sessions.paths(sid).run)) !== undefined
  const again = `omh attach${request.session ? ` --session ${sid}` : ''}`
  const port = request.port ?? container.ports?.find((p) => p.guest === GUEST_SSH_PORT && p.hostIp === '127.0.0.1')?.host
  if (port === undefined && (container.ports === undefined || copied)) {
    // A runtime that publishes nothing here (a cluster) can still be reached through a forward the
    // user makes with the engine's own tool; sshd is started once there is one.
    throw OmhError.of(ATTACH_NEEDS_TUNNEL, {
      args: [sid, `the ${runtime.engine} runtime publishes no port of its container ${container.name} on this machine`],
      hintArgs: [`Forward a port here to port ${GUEST_SSH_PORT} of ${container.name} with the engine's own tool (a cluster's port-forward, an ssh tunnel to the engine's machine) and leave it running, then run \`${again} --port <that port>\`.`],
    })
  }
  if (port === undefined) {
    throw OmhError.of(ATTACH_FAILED, { args: [sid, `its container publishes no port for sshd on 127.0.0.1; stop it with \`omh sessions down ${sid}\` and launch again`] })
  }

  const paths = sshPaths(kernel.omhState, repo.id)
  const publicKey = await ensureKeyPair(paths.key, `omh ${repo.id}`, env)
  const started = await runtime.exec(
    container.id,
    ['sh', '-c', SSHD_SCRIPT],
    { tty: false, capture: true, user: userSpec(agentUser()), env: { OMH_SSH_KEY: publicKey } },
    host.context,
  )
  if (started.exitCode !== 0) {
    throw OmhError.of(ATTACH_FAILED, { args: [sid, `${started.stderr}${started.stdout}`.trim().split('\n').slice(-3).join(' | ')] })
  }
  if (!(await answers(port, host.readyMs ?? READY_MS))) {
    if (request.port !== undefined) {
      throw OmhError.of(ATTACH_FAILED, { args: [sid, `sshd started but nothing answers on 127.0.0.1:${port} (--port): check that the forward to port ${GUEST_SSH_PORT} of ${container.name} runs`] })
    }
    // An engine elsewhere publishes the port on its own machine's 127.0.0.1, which only a tunnel reaches from here.
    if (copied) {
      throw OmhError.of(ATTACH_NEEDS_TUNNEL, {
        args: [sid, `its container runs on an engine that does not share this machine${info.endpoint ? ` (${info.endpoint})` : ''}, which publishes sshd on its own 127.0.0.1:${port}`],
        hintArgs: [`Forward that port here and leave it running: \`ssh -N -L ${port}:127.0.0.1:${port} ${engineHost(info.endpoint) ?? "<the engine's host>"}\`, then run \`${again}\`.`],
      })
    }
    throw OmhError.of(ATTACH_FAILED, { args: [sid, `sshd started but nothing answers on 127.0.0.1:${port} (its log: /tmp/omh-sshd/sshd.log in the container)`] })
  }

  const alias = sshAlias(repo.id, sid)
  const entry = await writeHostEntry(paths, alias, hostEntry(alias, port, paths.key))
  const sshConfig = path.join(env['HOME'] ?? os.homedir(), '.ssh', 'config')
  const include = await ensureInclude(sshConfig, paths.include)
  return { session: sid, alias, url: sshUrl(alias), host: '127.0.0.1', port, entry, sshConfig, include }
}

/** The machine an engine's endpoint names, as `ssh` takes it (`me@box`, `-p 2200 me@box`); undefined for a local socket or none. */
export function engineHost(endpoint: string | undefined): string | undefined {
  const url = URL.parse(endpoint ?? '')
  if (!url?.hostname || !/^(ssh|tcp|https?):$/.test(url.protocol)) return undefined
  if (url.protocol !== 'ssh:') return url.hostname
  // The client reached the engine on this port; a tunnel to port 22 may reach nothing there.
  return `${url.port ? `-p ${url.port} ` : ''}${url.username ? `${url.username}@` : ''}${url.hostname}`
}

/** Whether an SSH server greets on 127.0.0.1:port within `ms`. */
async function answers(port: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const greeting = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      let text = ''
      socket.setTimeout(1000, () => socket.destroy())
      socket.on('data', (d) => {
        text += String(d)
        if (text.includes('\n')) socket.destroy()
      })
      socket.on('close', () => resolve(text))
      socket.on('error', () => resolve(''))
    })
    if (greeting.startsWith('SSH-')) return true
    await new Promise((r) => setTimeout(r, 200))
  }
  return false
}
