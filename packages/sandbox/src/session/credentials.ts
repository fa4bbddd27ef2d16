/**
 * API keys kept outside the session: a key the host holds (its environment, a
 * secret) never enters the session container. The harness gets a placeholder
 * and a base URL pointing at omh's credential proxy, a container of its own on
 * the session's internal network and the outside one, which alone holds the
 * real keys and forwards over TLS (credential-proxy.ts).
 */
import { execFile } from 'node:child_process'
import { chmod, copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { CONTAINER_FAILED, EGRESS_UNSUPPORTED, OmhError, isOmhError, type ContainerSpec, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import type { Adapter } from '@omh/kernel'
import type { CredentialRoute } from './credential-proxy.js'

/** The credential proxy's name on the session's network, and its first port (one per key). */
export const CREDS_HOST = 'omh-creds'
export const CREDS_PORT = 4480
/** What the harness reads instead of its key: not a secret, and the same for every session. */
export const PLACEHOLDER = 'omh-credential-proxy-holds-the-key'
export const credsName = (container: string) => `${container}-creds`
/** The volume a copied session's credential proxy runs its program from. */
export const programVolume = (container: string) => `${credsName(container)}-program`
const GUEST_DIR = '/omh/creds'
const SCRIPT = 'credential-proxy.mjs'
const CA = 'ca.pem'

export interface KeptKeys {
  /** For the session container: each key's placeholder and base URL (or the variables that hold it). */
  readonly env: Readonly<Record<string, string>>
  /** For the harness, before the user's arguments: what points it at the proxy where no variable does. */
  readonly args: readonly string[]
  readonly routes: readonly CredentialRoute[]
  /** For the proxy container alone: the real keys, by variable. */
  readonly keys: Readonly<Record<string, string>>
}

/** The adapter's keys the host holds, routed through the proxy; undefined when it holds none. */
export function keptKeys(adapter: Pick<Adapter, 'keys'>, find: (name: string) => string | undefined): KeptKeys | undefined {
  const env: Record<string, string> = {}
  const routes: CredentialRoute[] = []
  const keys: Record<string, string> = {}
  const args: string[] = []
  adapter.keys.forEach((k, n) => {
    const value = find(k.variable)
    if (value === undefined) return
    const port = CREDS_PORT + n
    const url = `http://${CREDS_HOST}:${port}${k.path ?? ''}`
    env[k.variable] = PLACEHOLDER
    if (k.base_url) env[k.base_url] = url
    for (const [name, value] of Object.entries(k.env ?? {})) env[name] = value.replaceAll('{url}', url)
    args.push(...(k.args ?? []).map((a) => a.replaceAll('{url}', url)))
    keys[k.variable] = value
    routes.push({ port, upstream: k.upstream, header: k.header, prefix: k.prefix ?? '', variable: k.variable })
  })
  return routes.length ? { env, args, routes, keys } : undefined
}

export interface CredentialsUp {
  readonly runtime: RuntimePlugin
  readonly context: RuntimeContext
  /** The session container's name; the proxy is named after it. */
  readonly container: string
  readonly labels: Readonly<Record<string, string>>
  /** The session's internal network. */
  readonly network: string
  /** The outside network (`[session] network`); absent: the engine's default. */
  readonly outside?: string
  /** An image with `node`: the harness's. */
  readonly image: string
  /** Where the host keeps the proxy's program, in the session's run directory. */
  readonly dir: string
  readonly kept: KeptKeys
  /** A PEM file of extra authorities the proxy trusts upstream (`OMH_CREDENTIAL_CA`). */
  readonly ca?: string
  /** A new session container is about to start; otherwise a running proxy is kept. */
  readonly fresh: boolean
  /** The settings file that decided egress, for the error naming it. */
  readonly file: string
  /**
   * The session's files are copied to an engine that does not share this disk: the program (and
   * the authorities) go into a volume carrying these labels (the session's) instead of a bind mount.
   */
  readonly copied?: { readonly labels: Readonly<Record<string, string>> }
}

/** The credential proxy's compiled program, as the installed package has it. */
const programFile = () => createRequire(import.meta.url).resolve('@omh/sandbox/credential-proxy')

/** Starts the session's credential proxy (or keeps the running one) and waits until it listens. */
export async function ensureCredentialProxy(at: CredentialsUp): Promise<void> {
  const { runtime, context } = at
  const name = credsName(at.container)
  const running = await runtime.inspect?.(name, context)
  if (running?.running && !at.fresh) return
  if (running) await runtime.down(name, context)
  await mkdir(at.dir, { recursive: true, mode: 0o755 })
  await copyFile(programFile(), path.join(at.dir, SCRIPT))
  if (at.ca) await copyFile(at.ca, path.join(at.dir, CA))
  const files = await programWay(at)
  const env: Record<string, string> = {
    OMH_CREDENTIAL_ROUTES: JSON.stringify(at.kept.routes),
    ...(at.ca ? { NODE_EXTRA_CA_CERTS: `${GUEST_DIR}/${CA}` } : {}),
    ...at.kept.keys,
  }
  const unsupported = (why: string) => OmhError.of(EGRESS_UNSUPPORTED, { args: [runtime.engine, why], hintArgs: [at.file] })
  await runtime.up(
    {
      image: at.image,
      name,
      ...files,
      env,
      labels: at.labels,
      workdir: '/tmp',
      user: '65534:65534',
      argv: ['node', `${GUEST_DIR}/${SCRIPT}`],
      ...(at.outside ? { network: at.outside } : {}),
      capDrop: ['ALL'],
      noNewPrivileges: true,
      init: true,
      limits: { memory: 256 * 1024 * 1024, pids: 64 },
    },
    context,
  )
  try {
    await runtime.networks!.connect(at.network, name, [CREDS_HOST], context)
  } catch (error) {
    await runtime.down(name, context).catch(() => undefined)
    throw unsupported(`it did not join the credential proxy to ${at.network} (${isOmhError(error) ? String(error.details?.['why'] ?? error.message) : String(error)})`)
  }
  // The harness's first request may come at once: wait (inside, one exec) until every port listens.
  const ports = at.kept.routes.map((r) => r.port)
  const wait = `const net=require('net');let n=0;const t=(p)=>{const s=net.connect(p,'127.0.0.1',()=>{s.end();next()});s.on('error',()=>{if(++n>200)process.exit(1);setTimeout(()=>t(p),25)})};const q=${JSON.stringify(ports)};const next=()=>q.length?t(q.shift()):process.exit(0);next()`
  const ready = await runtime.exec(name, ['node', '-e', wait], { tty: false, capture: true }, context)
  if (ready.exitCode !== 0) throw OmhError.of(CONTAINER_FAILED, { args: [runtime.engine, `start the credential proxy ${name}`, 'it did not listen within 5 seconds'], hintArgs: [] })
}

const run = promisify(execFile)

/** A bind mount of the program's directory or, for a copied session, a volume filled from it. */
async function programWay(at: CredentialsUp): Promise<Pick<ContainerSpec, 'mounts' | 'volumes'>> {
  if (!at.copied) return { mounts: [{ host: at.dir, guest: GUEST_DIR, readOnly: true }] }
  const { runtime, context } = at
  if (!runtime.volumes) throw OmhError.of(EGRESS_UNSUPPORTED, { args: [runtime.engine, "it does not share this disk, and its runtime plugin keeps no volumes for the credential proxy's program"], hintArgs: [at.file] })
  const volume = programVolume(at.container)
  const names = [SCRIPT, ...(at.ca ? [CA] : [])]
  const work = await mkdtemp(path.join(os.tmpdir(), 'omh-creds-'))
  try {
    // Readable by the proxy's user (nobody) whatever the umask; root owns them in the volume.
    for (const name of names) await chmod(path.join(at.dir, name), 0o644)
    const archive = path.join(work, 'program.tar')
    await run('tar', ['-c', '-f', archive, '-C', at.dir, ...names])
    await runtime.volumes.create(volume, at.copied.labels, context)
    await runtime.volumes.put(volume, archive, { image: at.image, owner: { uid: 0, gid: 0 } }, context)
  } finally {
    await rm(work, { recursive: true, force: true })
  }
  return { mounts: [], volumes: [{ volume, guest: GUEST_DIR, readOnly: true }] }
}
