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
import { ATTACH_FAILED, OmhError, SESSION_NOT_RUNNING, type RuntimeContext } from '@omh/plugin-api'
import type { Kernel } from '@omh/kernel'
import { agentUser, userSpec } from '../agent-user.js'
import { readCopied } from './copied.js'
import { LABEL } from './layout.js'
import { Sessions } from './sessions.js'

export interface AttachRequest {
  /** `--session`: that one; absent: the session launched into last. */
  readonly session?: string
  /** `auto` or an engine name; absent: the `runtime` setting. */
  readonly engine?: string
}

export interface AttachHost {
  readonly context: RuntimeContext
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

export async function attach(kernel: Kernel, request: AttachRequest, host: AttachHost): Promise<Attached> {
  const env = kernel.options.env
  const sessions = Sessions.of(kernel)
  const repo = sessions.repo
  // Unlike a launch, a session another omh holds is the one to attach to: its harness runs there.
  const sid = await sessions.current(request.session)

  const { runtime } = await kernel.resolveRuntime(request.engine, host.context)
  const container = (await runtime.list({ [LABEL.repo]: repo.id, [LABEL.session]: sid }, host.context)).find((c) => c.running)
  if (!container) throw OmhError.of(SESSION_NOT_RUNNING, { args: [sid], hintArgs: [sid] })

  // The engine picked the host port when the container started; it is only known by asking.
  const port = container.ports?.find((p) => p.guest === GUEST_SSH_PORT && p.hostIp === '127.0.0.1')?.host
  if (port === undefined) {
    const why =
      container.ports === undefined
        ? `the ${runtime.engine} runtime does not say which ports a container publishes`
        : `its container publishes no port for sshd on 127.0.0.1; stop it with \`omh sessions down ${sid}\` and launch again`
    throw OmhError.of(ATTACH_FAILED, { args: [sid, why] })
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
  if (!(await answers(port))) {
    // An engine elsewhere publishes the port on its own machine's 127.0.0.1, which only a tunnel reaches from here.
    const elsewhere = (await readCopied(sessions.paths(sid).run))
      ? `; the container runs on an engine that does not share this machine, so the port is on that machine's 127.0.0.1: forward it first (\`ssh -N -L ${port}:127.0.0.1:${port} <engine's host>\`) and attach again`
      : ' (its log: /tmp/omh-sshd/sshd.log in the container)'
    throw OmhError.of(ATTACH_FAILED, { args: [sid, `sshd started but nothing answers on 127.0.0.1:${port}${elsewhere}`] })
  }

  const alias = sshAlias(repo.id, sid)
  const entry = await writeHostEntry(paths, alias, hostEntry(alias, port, paths.key))
  const sshConfig = path.join(env['HOME'] ?? os.homedir(), '.ssh', 'config')
  const include = await ensureInclude(sshConfig, paths.include)
  return { session: sid, alias, url: sshUrl(alias), host: '127.0.0.1', port, entry, sshConfig, include }
}

/** Whether an SSH server greets on 127.0.0.1:port within READY_MS. */
async function answers(port: number): Promise<boolean> {
  const deadline = Date.now() + READY_MS
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
