/**
 * API keys kept outside the session: a key the host holds (its environment, a
 * secret) never enters the session container. The harness gets a placeholder
 * and a base URL pointing at omh's credential proxy, a container of its own on
 * the session's internal network and the outside one, which alone holds the
 * real keys and forwards over TLS (credential-proxy.ts).
 */
import { createHash, randomBytes } from 'node:crypto'
import { chmod, copyFile, lstat, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { CONTAINER_FAILED, EGRESS_UNSUPPORTED, OmhError, isOmhError, type ContainerSpec } from '@omh/plugin-api'
import type { Adapter } from '@omh/kernel'
import { FRONT_CERT, FRONT_KEY, READY_FILE, TOKEN_VARIABLE, type CredentialRoute, type FrontLogin, type FrontRoute } from './credential-proxy.js'
import { issueServer, type Authority } from './authority.js'
import { keepLoginOutside, restoreLogin, type PlannedLogin } from './logins.js'
import { handToAgent } from '../host/ownership.js'
import { userSpec, type AgentUser } from '../agent-user.js'
import type { BesideSession } from './beside.js'
import { putFiles } from '../engine-files/copied.js'
import { TOOLSET_NODE } from '@omh/image'

/** The credential proxy's name on the session's network, and its first port (one per key). */
export const CREDS_HOST = 'omh-creds'
export const CREDS_PORT = 4480
/**
 * What the harness reads instead of its key begins with this; the rest is the
 * session's own, so only the session can use its proxy. It is worth nothing
 * anywhere else.
 */
export const PLACEHOLDER_PREFIX = 'omh-credential-proxy-'
const TOKEN_FILE = 'credential-token'

/**
 * The session's placeholder, made once and kept in its run directory (which
 * no container mounts), so every launch of the session gives the same one and
 * its container's plan stays the same.
 */
export async function sessionToken(run: string, options: { readonly make: boolean } = { make: true }): Promise<string> {
  const file = path.join(run, TOKEN_FILE)
  const found = await lstat(file).catch(() => undefined)
  if (found?.isFile() && found.size < 256) {
    const kept = (await readFile(file, 'utf8')).trim()
    if (new RegExp(`^${PLACEHOLDER_PREFIX}[0-9a-f]{32}$`).test(kept)) return kept
  }
  // A dry run makes nothing: it shows where the session's own placeholder will go.
  if (!options.make) return `${PLACEHOLDER_PREFIX}${'0'.repeat(32)}`
  const token = `${PLACEHOLDER_PREFIX}${randomBytes(16).toString('hex')}`
  await mkdir(run, { recursive: true })
  await writeFile(`${file}.${process.pid}`, `${token}\n`, { mode: 0o600 })
  await rename(`${file}.${process.pid}`, file)
  return token
}
export const credsName = (container: string) => `${container}-creds`
/** The volume a copied session's credential proxy runs its program from. */
export const programVolume = (container: string) => `${credsName(container)}-program`
const GUEST_DIR = '/omh/creds'
const SCRIPT = 'credential-proxy.mjs'
const CA = 'ca.pem'

/**
 * What the credential proxy serves a session: the adapter's keys held on the host, secrets bound to
 * hosts and subscription logins, with what the session gets instead of each.
 */
export interface Proxied {
  /** For the session container: each key's placeholder and base URL (or the variables that hold it). */
  readonly env: Readonly<Record<string, string>>
  /** For the harness, before the user's arguments: what points it at the proxy where no variable does. */
  readonly args: readonly string[]
  readonly routes: readonly CredentialRoute[]
  /** For the proxy container alone: the real keys, by variable. */
  readonly keys: Readonly<Record<string, string>>
  /** The session's placeholder: the harness sends it where its key would go, and the proxy serves nothing without it. */
  readonly token: string
  /** The session's HTTP proxy, where secrets bound to hosts are put in (bound-secrets.ts). */
  readonly front?: FrontRoute
  /** The session's authority, which signs the certificate the front answers bound hosts with. */
  readonly authority?: Authority
  /** Subscription logins kept outside (logins.ts): their vaults are the proxy's to read and keep current. */
  readonly logins?: readonly PlannedLogin[]
}

/** The adapter's keys the host holds, routed through the proxy; undefined when it holds none. */
export function proxiedKeys(adapter: Pick<Adapter, 'keys'>, find: (name: string) => string | undefined, token: string): Proxied | undefined {
  const env: Record<string, string> = {}
  const routes: CredentialRoute[] = []
  const keys: Record<string, string> = {}
  const args: string[] = []
  adapter.keys.forEach((k, n) => {
    const value = find(k.variable)
    if (value === undefined) return
    const port = CREDS_PORT + n
    const url = `http://${CREDS_HOST}:${port}${k.path ?? ''}`
    env[k.variable] = token
    if (k.base_url) env[k.base_url] = url
    for (const [name, value] of Object.entries(k.env ?? {})) env[name] = value.replaceAll('{url}', url)
    args.push(...(k.args ?? []).map((a) => a.replaceAll('{url}', url)))
    keys[k.variable] = value
    routes.push({ port, upstream: k.upstream, header: k.header, prefix: k.prefix ?? '', variable: k.variable })
  })
  return routes.length ? { env, args, routes, keys, token } : undefined
}

export interface CredentialsUp extends BesideSession {
  /** An image with `node`: the harness's. */
  readonly image: string
  /** Where the host keeps the proxy's program, in the session's run directory. */
  readonly dir: string
  readonly proxied: Proxied
  /** A PEM file of extra authorities the proxy trusts upstream (`OMH_CREDENTIAL_CA`). */
  readonly ca?: string
  /** A new session container is about to start; otherwise a running proxy is kept. */
  readonly fresh: boolean
  /** The settings file that decided egress, for the error naming it. */
  readonly file: string
  /** The session's agent: the proxy runs as it when it keeps a login's vault, which is the agent's to write. */
  readonly agent?: AgentUser
  /**
   * The session's files are copied to an engine that does not share this disk: the program (and
   * the authorities) go into a volume carrying these labels (the session's) instead of a bind mount.
   */
  readonly copied?: { readonly labels: Readonly<Record<string, string>> }
}

/** The credential proxy's compiled program, as the installed package has it. */
const programFile = () => createRequire(import.meta.url).resolve('@omh/sandbox/credential-proxy')

/** The digest of what a credential proxy was started with, on its container. */
const PLAN_LABEL = 'omh.creds-plan'

/** Starts the session's credential proxy (or keeps the running one) and waits until it listens. */
export async function ensureCredentialProxy(at: CredentialsUp): Promise<void> {
  const { runtime, context } = at
  const name = credsName(at.container)
  const running = await runtime.inspect?.(name, context)
  // What the proxy was started with (its routes, image) is in its environment: a change to any,
  // such as an adapter's `upstream` edited, needs a proxy started anew.
  // Every launch moves a login made anew into the vault, whether or not the proxy is kept running.
  const logins = await keptLogins(at)
  const front = at.proxied.front ? { ...at.proxied.front, ...(logins.length ? { logins: logins.map((l) => l.front) } : {}) } : undefined
  const plan = createHash('sha256')
    .update(JSON.stringify({ routes: at.proxied.routes, front: front ?? null, authority: at.proxied.authority?.cert ?? null, token: at.proxied.token, image: at.image, ca: at.ca ?? null, agent: logins.length ? (at.agent ?? null) : null }))
    .digest('hex')
    .slice(0, 32)
  if (running?.running && !at.fresh && running.labels[PLAN_LABEL] === plan) return
  if (running) await runtime.down(name, context)
  await mkdir(at.dir, { recursive: true, mode: 0o755 })
  await copyFile(programFile(), path.join(at.dir, SCRIPT))
  if (at.ca) await copyFile(at.ca, path.join(at.dir, CA))
  const way = await programWay(at)
  const files = { ...way, mounts: [...way.mounts, ...logins.map((l) => ({ host: l.dir, guest: path.posix.dirname(l.front.vault), readOnly: false }))] }
  // Made at each start, for the bound hosts alone; its key lives in the proxy's environment and nowhere else.
  const served = front && at.proxied.authority ? issueServer(at.proxied.authority, frontNames(front)) : undefined
  const env: Record<string, string> = {
    OMH_CREDENTIAL_ROUTES: JSON.stringify(at.proxied.routes),
    ...(front && served ? { OMH_CREDENTIAL_FRONT: JSON.stringify(front), [FRONT_CERT]: served.cert, [FRONT_KEY]: served.key } : {}),
    [TOKEN_VARIABLE]: at.proxied.token,
    ...(at.ca ? { NODE_EXTRA_CA_CERTS: `${GUEST_DIR}/${CA}` } : {}),
    ...at.proxied.keys,
  }
  const unsupported = (why: string) => OmhError.of(EGRESS_UNSUPPORTED, { args: [runtime.engine, why], hintArgs: [at.file] })
  const networks = runtime.networks!
  const why = (error: unknown) => (isOmhError(error) ? String(error.details?.['why'] ?? error.message) : String(error))
  // Started on the session's network alone, the proxy listens on the addresses it has there; the
  // outside network it joins afterwards, to reach the upstream, never gets a listener.
  await runtime.up(
    {
      image: at.image,
      name,
      ...files,
      env,
      labels: { ...at.labels, [PLAN_LABEL]: plan },
      workdir: '/tmp',
      // A login's vault is the agent's, so the proxy that keeps it current runs as the agent; else as nobody.
      ...(logins.length && at.agent ? { user: userSpec(at.agent), ...(at.agent.hostUser ? { hostUser: at.agent.hostUser } : {}) } : { user: '65534:65534' }),
      argv: [TOOLSET_NODE, `${GUEST_DIR}/${SCRIPT}`],
      network: at.network,
      aliases: [CREDS_HOST],
      capDrop: ['ALL'],
      noNewPrivileges: true,
      init: true,
      limits: { memory: 256 * 1024 * 1024, pids: 64 },
    },
    context,
  ).catch((error: unknown) => {
    throw isOmhError(error) && error.code === CONTAINER_FAILED.code ? unsupported(`it did not start the credential proxy on ${at.network} (${why(error)})`) : error
  })
  // The harness's first request may come at once: wait (inside, one exec) until every port listens.
  const wait = `const fs=require('fs');let n=0;const t=()=>fs.existsSync(${JSON.stringify(READY_FILE)})?process.exit(0):++n>200?process.exit(1):setTimeout(t,25);t()`
  const ready = await runtime.exec(name, [TOOLSET_NODE, '-e', wait], { tty: false, capture: true }, context)
  if (ready.exitCode !== 0) {
    await runtime.down(name, context).catch(() => undefined)
    throw OmhError.of(CONTAINER_FAILED, { args: [runtime.engine, `start the credential proxy ${name}`, 'it did not listen within 5 seconds'], hintArgs: [] })
  }
  const outside = at.outside ?? networks.defaultNetwork
  if (!outside) return
  try {
    await networks.connect(outside, name, [], context)
  } catch (error) {
    // An engine whose default is no network at all leaves the proxy as offline as that default.
    if (!at.outside) return
    await runtime.down(name, context).catch(() => undefined)
    throw unsupported(`it did not join the credential proxy to ${outside} (${why(error)})`)
  }
}


/** A bind mount of the program's directory or, for a copied session, a volume filled from it. */
async function programWay(at: CredentialsUp): Promise<Pick<ContainerSpec, 'mounts' | 'volumes'>> {
  if (!at.copied) return { mounts: [{ host: at.dir, guest: GUEST_DIR, readOnly: true }] }
  const { runtime, context } = at
  if (!runtime.volumes) throw OmhError.of(EGRESS_UNSUPPORTED, { args: [runtime.engine, "it does not share this disk, and its runtime plugin keeps no volumes for the credential proxy's program"], hintArgs: [at.file] })
  const volume = programVolume(at.container)
  const names = [SCRIPT, ...(at.ca ? [CA] : [])]
  // Readable by the proxy's user (nobody) whatever the umask; root owns them in the volume.
  for (const name of names) await chmod(path.join(at.dir, name), 0o644)
  await runtime.volumes.create(volume, at.copied.labels, context)
  await putFiles(runtime, volume, at.dir, names, { image: at.image, owner: { uid: 0, gid: 0 } }, context)
  return { mounts: [], volumes: [{ volume, guest: GUEST_DIR, readOnly: true }] }
}

/** The names the front's certificate covers: every bound host, a login's hosts and its token endpoint's. */
function frontNames(front: FrontRoute): string[] {
  const hosts = [
    ...front.bindings.flatMap((b) => b.hosts),
    ...(front.logins ?? []).flatMap((l) => [...l.hosts, ...(l.refreshUrl ? [new URL(l.refreshUrl).hostname] : [])]),
  ]
  return [...new Set(hosts.flatMap((h) => (h.startsWith('*.') ? [h.slice(2), h] : [h])))]
}

/**
 * The session's logins, each moved into its vault, which the proxy mounts. On an engine that does
 * not share this disk the proxy cannot keep a vault current: the real tokens go back into the
 * account's files, and the login stays inside, as before.
 */
async function keptLogins(at: CredentialsUp): Promise<{ front: FrontLogin; dir: string }[]> {
  const out: { front: FrontLogin; dir: string }[] = []
  for (const [n, login] of (at.proxied.logins ?? []).entries()) {
    if (at.copied) {
      await restoreLogin(login)
      continue
    }
    const kept = await keepLoginOutside(login.accountFile, login.vault, login.facts)
    if (!('vault' in kept)) continue
    await handToAgent(login.vault)
    out.push({
      dir: login.vault,
      front: { name: login.name, vault: `/omh/logins/${n}/vault.json`, hosts: login.facts.hosts, ...(login.facts.refresh_url ? { refreshUrl: login.facts.refresh_url } : {}) },
    })
  }
  return out
}
