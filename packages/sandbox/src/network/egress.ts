/**
 * The egress proxy: a session on an internal network whose only way out is a
 * squid of its own, joined to that network and to the outside one, letting
 * through only allowed `host[:port]` patterns and logging every decision.
  *
 * Longer than 400 lines: the proxy's image, its rules, its start beside a session and its reload belong to one squid and are read together; they leave for a network/ folder of their own when the sandbox is split by capability.
 */
import { createHash, randomBytes } from 'node:crypto'
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import {
  CONTAINER_FAILED,
  EGRESS_UNSUPPORTED,
  OmhError,
  isOmhError,
  type ContainerInfo,
  type ContainerSpec,
  type RuntimeContext,
  type RuntimePlugin,
  type VolumeHelper,
} from '@omh/plugin-api'
import { fileToChange, type Adapter, type EffectiveSettings } from '@omh/kernel'
import type { KernelView } from '../kernel-view.js'
import { HOST_PATTERN } from '@omh/plugin-kit'
import type { ImageOptions } from '@omh/image'
import { stopBeside } from './beside.js'
import { CREDS_HOST, credsName, programVolume } from './credentials.js'
import { SECRET_REFUSED, SECRETS_LOG } from './credential-proxy.js'
import { putFiles } from '../engine-files/copied.js'
import { watchFiles } from '../host/watch-files.js'

/** The proxy's name on the session's network, and its port. */
export const PROXY_HOST = 'omh-egress'
export const PROXY_PORT = 3128
const GUEST_CONF = '/omh/egress'
const GUEST_LOG = '/var/log/omh/egress.log'
/** Label on a proxy container and network: `<repo id>-<sid>`. */
export const EGRESS_LABEL = 'omh.egress'

export type EgressMode = 'allowlist' | 'open' | 'none'

export interface Egress {
  readonly mode: EgressMode
  /** Allowed patterns, adapter's first, in order, without repeats. */
  readonly allow: readonly string[]
  /** The settings file that decided the mode, for an error naming the setting. */
  readonly file: string
}

export function egressOf(settings: EffectiveSettings, adapter: Pick<Adapter, 'egress'>): Egress {
  const mode = settings.egress?.value ?? 'allowlist'
  const allow = [...new Set([...adapter.egress, ...(settings.registries?.value ?? []), ...settings.allow.map((d) => d.value)])]
  return { mode, allow, file: fileToChange(settings, settings.egress) }
}

/** Hosts allowed in one session alone (`omh sessions allow`), kept beside its proxy's rules. */
const SESSION_ALLOW = 'session-allow.json'
export const sessionAllowFile = (dir: string): string => path.join(dir, SESSION_ALLOW)

/** What `omh sessions allow` let this session reach; anything unreadable or not a host pattern is no host. */
export async function sessionAllowed(dir: string): Promise<string[]> {
  try {
    const parsed: unknown = JSON.parse(await readFile(sessionAllowFile(dir), 'utf8'))
    return Array.isArray(parsed) ? parsed.filter((h): h is string => typeof h === 'string' && h.length <= 260 && HOST_PATTERN.test(h)) : []
  } catch {
    return []
  }
}

/** Adds hosts to what this session alone may reach; resolves the whole list. */
export async function allowInSession(dir: string, hosts: readonly string[]): Promise<string[]> {
  const before = await sessionAllowed(dir)
  const all = [...before, ...hosts.filter((h) => !before.includes(h))]
  await mkdir(dir, { recursive: true })
  await writeAtomic(sessionAllowFile(dir), `${JSON.stringify(all, null, 2)}\n`)
  return all
}

/** The egress of a session: the settings' and the adapter's, and what was allowed in it alone. */
export async function sessionEgress(settings: EffectiveSettings, adapter: Pick<Adapter, 'egress'>, dir: string): Promise<Egress> {
  const egress = egressOf(settings, adapter)
  const here = await sessionAllowed(dir)
  return here.length ? { ...egress, allow: [...new Set([...egress.allow, ...here])] } : egress
}

/** Variables that point a session's clients at the proxy. */
export function proxyEnv(): Record<string, string> {
  const url = `http://${PROXY_HOST}:${PROXY_PORT}`
  // The credential proxy is on the session's own network: it is reached directly, never through squid.
  const none = `localhost,127.0.0.1,::1,${CREDS_HOST}`
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: none, no_proxy: none }
}

/**
 * The session's internal network. A container start gets a network of its own (`launch`, a random
 * suffix): an engine may keep an endpoint of a removed container on a network, still answering to
 * its alias, and a network name used again would hand that stale endpoint to the next container.
 * Without `launch`, the name the plan carries and sessions made before the suffix use.
 */
export const networkName = (container: string, launch?: string) => (launch ? `${container}-net-${launch}` : `${container}-net`)
export const proxyName = (container: string) => `${container}-egress`
/** Where the host keeps a session's egress files, in its run directory. */
export const egressDir = (run: string) => path.join(run, 'egress')
/** The network the session's current container joined, recorded when it started. */
const RECORD = 'network'
/**
 * The volume a proxy on an engine that does not share this disk reads its rules from, recorded
 * when that proxy started: an allowlist reload refills it before the proxy rereads its rules.
 */
const VOLUME_RECORD = 'volume.json'
/** The volume of a session's proxy rules, for a session whose files are copied. */
export const rulesVolume = (container: string) => `${proxyName(container)}-rules`
const RULES = ['squid.conf', 'allow.conf']
/**
 * A digest of the rules the running proxy last took, written once it has: a launch into a running
 * session whose rules are those spares the proxy a reread (and the wait for it).
 */
const APPLIED = 'applied'
const rulesDigest = (dir: string) =>
  Promise.all(RULES.map((f) => readFile(path.join(dir, f), 'utf8'))).then((texts) => createHash('sha256').update(texts.join('\0')).digest('hex'))
const markApplied = (dir: string) =>
  rulesDigest(dir).then(
    (digest) => writeAtomic(path.join(dir, APPLIED), `${digest}\n`),
    // Rules that cannot be read back are not known to be in force: the next launch has them reread.
    () => rm(path.join(dir, APPLIED), { force: true }),
  )
const inForce = async (dir: string) => (await readFile(path.join(dir, APPLIED), 'utf8').catch(() => '')).trim() === (await rulesDigest(dir).catch(() => undefined))

interface RulesVolume {
  readonly volume: string
  readonly helper: VolumeHelper
}

export async function recordedNetwork(dir: string): Promise<string | undefined> {
  try {
    return (await readFile(path.join(dir, RECORD), 'utf8')).trim() || undefined
  } catch {
    return undefined
  }
}

/** A network name for a new container of the session, never one used before. */
export const freshNetwork = (container: string, random: () => string = () => randomBytes(4).toString('hex')) => networkName(container, random())
/**
 * What a refused request gets back, as the one line a harness shows the model: that the host is not
 * allowed, and the command that would allow it. squid fills in the host and port (`%H`, `%p`) and the
 * session (`%L`, its `err_html_text`); a page of squid's own templates, so a client asking in any
 * language gets it.
 */
const REFUSAL_PAGE = 'ERR_OMH_NOT_ALLOWED'
const REFUSAL_TEXT = 'omh: this sandbox may not reach %H:%p, which is not on its egress allowlist. To let it through, the user runs on the host: omh sessions allow %L %H:%p'

/** The proxy image: squid from Debian on omh's base image's starting point. */
export function proxyRecipe(options: ImageOptions) {
  const containerfile = `# omh egress proxy: squid, run as its own unprivileged user.
FROM ${options.from}
USER root
ARG DEBIAN_FRONTEND=noninteractive
RUN set -eu; \\
    apt-get update; \\
    apt-get install -y --no-install-recommends squid; \\
    apt-get clean; \\
    rm -rf /var/lib/apt/lists/*; \\
    install -d -o proxy -g proxy ${path.posix.dirname(GUEST_LOG)}; \\
    echo '${REFUSAL_TEXT}' > /usr/share/squid/errors/templates/${REFUSAL_PAGE}
USER proxy
`
  const labels = { ...options.labels, 'omh.kind': 'egress' }
  const digest = createHash('sha256').update(JSON.stringify({ containerfile, labels: Object.entries(labels).sort() })).digest('hex').slice(0, 16)
  return { tag: `localhost/omh-egress:${digest}`, containerfile, labels, ...(options.network ? { network: options.network } : {}) }
}

// Destinations never reached, whatever name leads there: loopback, "this host", link-local (cloud
// metadata at 169.254.169.254 among them), IPv6 loopback and link-local. Checked on the address the
// name resolves to, after the name was allowed, so a denied name is never even looked up.
const squidConf = (session: string) => `http_port ${PROXY_PORT}
pid_filename /tmp/squid.pid
cache deny all
cache_mem 8 MB
shutdown_lifetime 0 seconds
pinger_enable off
logformat omh %ts %Ss %>Hs %rm %ru
access_log stdio:${GUEST_LOG} omh
cache_log stdio:/dev/stderr
acl forbidden dst 127.0.0.0/8 0.0.0.0/8 169.254.0.0/16 ::1 fe80::/10
acl CONNECT method CONNECT
include ${GUEST_CONF}/allow.conf
acl not_allowed src all
deny_info ${REFUSAL_PAGE} not_allowed
${/^[\w.-]+$/.test(session) ? `err_html_text ${session}\n` : ''}http_access deny not_allowed
`

/** squid's rules for the patterns: host (`*.x` for subdomains) and port, 80 and 443 when none is named. */
export function allowRules(patterns: readonly string[]): string {
  const lines = ['# Written by omh at each launch; edits are replaced.']
  patterns.forEach((pattern, n) => {
    const [host, port] = pattern.split(':') as [string, string | undefined]
    // -n: never look an address up backwards, which stalls where no DNS answers for it.
    const match = /^[\d.]+$/.test(host) ? `dst ${host}` : `dstdomain -n ${host.startsWith('*.') ? host.slice(1) : host}`
    // An allowed name that leads somewhere forbidden gets squid's own refusal, not the hint to allow it.
    lines.push(`acl host${n} ${match}`, `acl port${n} port ${port ?? '80 443'}`, `http_access deny host${n} port${n} forbidden`, `http_access allow host${n} port${n}`)
  })
  return `${lines.join('\n')}\n`
}

async function writeAtomic(file: string, text: string) {
  // A name of this write's own: the session's watch and `omh sessions allow` apply the same edit at once.
  const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`
  try {
    await writeFile(tmp, text, { mode: 0o644 })
    // Readable by the proxy's user whatever the umask: a copied proxy gets these files' modes by tar.
    await chmod(tmp, 0o644)
    await rename(tmp, file)
  } catch (error) {
    await rm(tmp, { force: true })
    throw error
  }
}


/** Puts the rules the host keeps into the proxy's volume, in place of what it held. */
const putRules = (runtime: RuntimePlugin, rules: RulesVolume, dir: string, context: RuntimeContext): Promise<void> =>
  putFiles(runtime, rules.volume, dir, RULES, rules.helper, context)

async function recordedVolume(dir: string): Promise<RulesVolume | undefined> {
  try {
    return JSON.parse(await readFile(path.join(dir, VOLUME_RECORD), 'utf8')) as RulesVolume
  } catch {
    return undefined
  }
}

export interface EgressUp {
  readonly runtime: RuntimePlugin
  readonly context: RuntimeContext
  /** The session container's name; the proxy and network are named after it. */
  readonly container: string
  /** The session's id, as the refusal's hint names it. */
  readonly session: string
  readonly label: string
  /** Where the proxy's configuration is kept on the host. */
  readonly dir: string
  readonly egress: Egress
  /** The outside network the proxy joins (`[session] network`); absent: the engine's default. */
  readonly outside?: string
  readonly image: ImageOptions
  /** A new session container is about to start: it gets a new network, and the old one goes. */
  readonly fresh: boolean
  /**
   * The session's files are copied to an engine that does not share this disk: a proxy started
   * now reads its rules from a volume carrying these labels (the session's), filled from here.
   */
  readonly copied?: { readonly labels: Readonly<Record<string, string>> }
  /** The engine's answer about the proxy, when one was asked beside the session container's; else it is asked here. */
  readonly seen?: Promise<ContainerInfo | undefined>
}

/**
 * Makes the session's internal network and its proxy, or tells a running
 * proxy the current allowlist (squid rereads its rules without dropping
 * connections). Resolves the network the session joins.
 */
export async function ensureEgress(at: EgressUp): Promise<string> {
  const started = await startEgress(at)
  await started.ready
  return started.network
}

/** The session's network, made, and its proxy on the way: `ready` settles once the proxy serves the current allowlist. */
export interface EgressStarted {
  readonly network: string
  readonly ready: Promise<void>
}

/**
 * `ensureEgress` in two parts: resolves once the session's network exists, so the session's
 * container can start on it while the proxy starts beside it. `ready` settles once the
 * proxy serves the current rules; nothing may reach the network through it before.
 */
export async function startEgress(at: EgressUp): Promise<EgressStarted> {
  const { runtime, context } = at
  const unsupported = (why: string) => OmhError.of(EGRESS_UNSUPPORTED, { args: [runtime.engine, why], hintArgs: [at.egress.file] })
  if (!runtime.networks) throw unsupported('its runtime plugin cannot make networks')
  const networks = runtime.networks
  await mkdir(at.dir, { recursive: true, mode: 0o755 })
  await writeAtomic(path.join(at.dir, 'squid.conf'), squidConf(at.session))
  await writeAtomic(path.join(at.dir, 'allow.conf'), allowRules(at.egress.allow))
  const previous = await recordedNetwork(at.dir)
  let network = previous ?? networkName(at.container)
  if (at.fresh) {
    // The proxy joins the new network only when started anew, so it goes with the old network.
    if (previous) await dropEgress(runtime, at.container, [previous], context)
    network = freshNetwork(at.container)
    await writeAtomic(path.join(at.dir, RECORD), `${network}\n`)
  }
  const proxy = proxyName(at.container)
  const labels = { [EGRESS_LABEL]: at.label }
  const recipe = proxyRecipe(at.image)
  // Read-only questions, asked while the network is made: whether a proxy runs and, for a proxy
  // that will be started anew, whether its image is there.
  const running = at.seen ?? Promise.resolve(runtime.inspect?.(proxy, context))
  const image = at.fresh ? runtime.hasImage(recipe.tag, context) : undefined
  const asked = Promise.allSettled([running, image])
  try {
    // A proxy that runs on the network recorded for it keeps that network: the engine removes no
    // network a container is on, so only a proxy started anew needs it made.
    const kept = !at.fresh && previous !== undefined && (await running.catch(() => undefined))?.running === true
    if (!kept) await networks.create(network, { internal: true, labels }, context)
  } catch (error) {
    await asked
    throw isOmhError(error) ? unsupported(`it did not make the internal network ${network} (${String(error.details?.['why'] ?? error.message)})`) : error
  }
  const ready = (async () => {
    const found: ContainerInfo | undefined = await running
    if (found?.running && !at.fresh) {
      if (await inForce(at.dir)) return
      const rules = await recordedVolume(at.dir)
      if (rules) await putRules(runtime, rules, at.dir, context)
      await reconfigure(runtime, proxy, context)
      return markApplied(at.dir)
    }
    await rm(path.join(at.dir, APPLIED), { force: true })
    if (found) await runtime.down(proxy, context)
    if (!(await (image ?? runtime.hasImage(recipe.tag, context)))) {
      context.progress(`Building the egress proxy image ${recipe.tag} (once)`)
      await runtime.build(recipe, context)
    }
    await upProxy(at, networks, recipe.tag, network, unsupported)
    await markApplied(at.dir)
  })()
  // Its failure is the caller's to hear when it waits for the proxy, not a rejection nobody handled meanwhile.
  ready.catch(() => undefined)
  return { network, ready }
}

/** Starts the proxy on the outside network (the engine's default when none is set), then joins it to the session's. */
async function upProxy(at: EgressUp, networks: NonNullable<RuntimePlugin['networks']>, image: string, network: string, unsupported: (why: string) => OmhError): Promise<void> {
  const { runtime, context } = at
  const proxy = proxyName(at.container)
  const files = await rulesWay(at, image)
  const spec = (network: string | undefined, aliases: readonly string[] = []): ContainerSpec => ({
      image,
      name: proxy,
      ...files,
      env: {},
      labels: { [EGRESS_LABEL]: at.label },
      workdir: '/tmp',
      user: 'proxy',
      argv: ['squid', '-N', '-f', `${GUEST_CONF}/squid.conf`],
      ...(network ? { network } : {}),
      aliases,
      capDrop: ['ALL'],
      noNewPrivileges: true,
      // squid will not signal PID 1 (its reload is \`squid -k reconfigure\`), so it must not be it.
      init: true,
      limits: { memory: 256 * 1024 * 1024, pids: 256 },
  })
  await runtime.up(spec(at.outside), context)
  try {
    await networks.connect(network, proxy, [PROXY_HOST], context)
  } catch (error) {
    await runtime.down(proxy, context).catch(() => undefined)
    // An engine whose default is no network at all (`netns = "none"` in its configuration) cannot join a
    // container started there to another: the proxy then lives on the session's network alone,
    // as offline as the engine's default.
    const why = (e: unknown) => (isOmhError(e) ? String(e.details?.['why'] ?? e.message) : String(e))
    if (at.outside) throw unsupported(`it did not join the proxy to ${network} (${why(error)})`)
    try {
      await runtime.up(spec(network, [PROXY_HOST]), context)
    } catch (again) {
      await runtime.down(proxy, context).catch(() => undefined)
      throw unsupported(`it did not start the proxy on ${network} (${why(again)})`)
    }
  }
}

/**
 * How a proxy about to start gets its rules: a bind mount of the host's directory or, for a copied
 * session, a volume filled from it (recorded, so a reload refills it). A proxy of a mounted session
 * takes away the volume a copied one left.
 */
async function rulesWay(at: EgressUp, image: string): Promise<Pick<ContainerSpec, 'mounts' | 'volumes'>> {
  const { runtime, context } = at
  const volume = rulesVolume(at.container)
  if (!at.copied) {
    if (await recordedVolume(at.dir)) await runtime.volumes?.remove(volume, context).catch(() => undefined)
    await rm(path.join(at.dir, VOLUME_RECORD), { force: true })
    return { mounts: [{ host: at.dir, guest: GUEST_CONF, readOnly: true }] }
  }
  if (!runtime.volumes) throw OmhError.of(EGRESS_UNSUPPORTED, { args: [runtime.engine, 'it does not share this disk, and its runtime plugin keeps no volumes for the proxy\'s rules'], hintArgs: [at.egress.file] })
  // The helper that fills the volume runs the proxy's own image; root owns the rules, the proxy reads them.
  const rules: RulesVolume = { volume, helper: { image, owner: { uid: 0, gid: 0 } } }
  await runtime.volumes.create(volume, { ...at.copied.labels, [EGRESS_LABEL]: at.label }, context)
  await putRules(runtime, rules, at.dir, context)
  await writeAtomic(path.join(at.dir, VOLUME_RECORD), `${JSON.stringify(rules)}\n`)
  return { mounts: [], volumes: [{ volume, guest: GUEST_CONF, readOnly: true }] }
}

/** Has a running squid reread its rules; it keeps open tunnels. */
async function reconfigure(runtime: RuntimePlugin, proxy: string, context: RuntimeContext): Promise<void> {
  const reload = await runtime.exec(proxy, ['squid', '-k', 'reconfigure', '-f', `${GUEST_CONF}/squid.conf`], { tty: false, capture: true }, context)
  if (reload.exitCode !== 0) throw OmhError.of(CONTAINER_FAILED, { args: [runtime.engine, `reload the egress proxy ${proxy}`, reload.stderr.trim().split('\n').at(-1) ?? ''], hintArgs: [] })
  // squid answers from the new rules once it has reread them; a request in between gets the old ones.
  await new Promise((resolve) => setTimeout(resolve, 500))
}

export interface AllowlistWatch {
  readonly runtime: RuntimePlugin
  readonly context: RuntimeContext
  readonly container: string
  /** The session's egress directory. */
  readonly dir: string
  /** Settings files whose change may change the allowlist (they need not exist yet). */
  readonly files: readonly string[]
  /** The allowlist as the settings now say; throws when they are not valid, which keeps the one in force. */
  readonly allow: () => Promise<readonly string[]>
  /** Hears each reload that changed the rules, and each that failed. */
  readonly heard?: (outcome: { ok: true; allow: readonly string[] } | { ok: false; error: unknown }) => void
}

/**
 * Watches the settings files while a harness runs and hands the running proxy the allowlist they
 * now give: an edit applies to the session at once, with no restart and no other omh command.
 * Directories are watched, not files: an editor saves by renaming a new file over the old one.
 * Returns a function that stops watching.
 */
export function watchAllowlist(at: AllowlistWatch): () => void {
  let running: Promise<void> = Promise.resolve()
  return watchFiles(at.files, () => (running = running.then(() => applyAllowlist(at))))
}

/**
 * Hands the running proxy the allowlist the settings now give, when it differs from the one in
 * force; an allowlist that cannot be read keeps the one in force. What happened goes to `heard`.
 */
export async function applyAllowlist(at: Omit<AllowlistWatch, 'files'>): Promise<void> {
  try {
    const allow = await at.allow()
    const text = allowRules(allow)
    const file = path.join(at.dir, 'allow.conf')
    const before = await readFile(file, 'utf8').catch(() => '')
    if (before === text) return
    await writeAtomic(file, text)
    // A proxy on an engine elsewhere reads the rules from its volume: they go there first. The host's
    // copy says what is in force, so a volume left as it was takes the old rules back.
    const rules = await recordedVolume(at.dir)
    if (rules) await putRules(at.runtime, rules, at.dir, at.context).catch(async (error: unknown) => {
      await writeAtomic(file, before)
      throw error
    })
    await reconfigure(at.runtime, proxyName(at.container), at.context)
    await markApplied(at.dir)
    at.heard?.({ ok: true, allow })
  } catch (error) {
    at.heard?.({ ok: false, error })
  }
}

/** One decision of the proxy. */
export interface EgressDecision {
  /** ISO 8601. */
  readonly time: string
  readonly allowed: boolean
  readonly method: string
  readonly host: string
  readonly port: number
  /** The status the proxy answered with (0: the client went away first). */
  readonly status: number
  /** A request the credential proxy refused for carrying this secret's placeholder to a host it is not bound to. */
  readonly secret?: string
}

/** Parses the proxy's log (`omh` format: seconds, squid's result, status, method, URL). */
export function parseDecisions(log: string): EgressDecision[] {
  const out: EgressDecision[] = []
  for (const line of log.split('\n')) {
    const [seconds, result, status, method, url] = line.trim().split(/\s+/)
    if (!seconds || !result || !method || !url) continue
    // What the proxy could not read as a request (squid's 400: `error:invalid-request`, a bare
    // path) named no host it could allow: the text stands as the host, with no port, refused.
    let host = url
    let port = 0
    const connect = method === 'CONNECT' ? /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(url) : null
    if (connect) {
      host = connect[1]!
      port = Number(connect[2])
    } else if (method !== 'CONNECT' && /^https?:\/\//i.test(url)) {
      try {
        const u = new URL(url)
        host = u.hostname
        port = Number(u.port || (u.protocol === 'https:' ? 443 : 80))
      } catch {
        // Not a URL after all: left as the proxy wrote it.
      }
    }
    const code = Number(status)
    const read = port !== 0 && code !== 400
    const secret = result.startsWith(`${SECRET_REFUSED}:`) ? result.slice(SECRET_REFUSED.length + 1) : undefined
    out.push({ time: new Date(Number(seconds) * 1000).toISOString(), allowed: read && !/DENIED/.test(result) && code !== 403 && !secret, method, host, port, status: code, ...(secret ? { secret } : {}) })
  }
  return out
}

/** A destination the proxy refused, once, with how often and when last. */
export interface DeniedDestination {
  readonly host: string
  readonly port: number
  readonly count: number
  readonly last: string
}

/** Each refused destination once, most refused first (then the latest first). */
export function deniedDestinations(decisions: readonly EgressDecision[]): DeniedDestination[] {
  const by = new Map<string, DeniedDestination>()
  for (const d of decisions) {
    // A secret refused is no host to allow: the request went to an allowed host, with the wrong placeholder.
    if (d.allowed || d.secret) continue
    const key = `${d.host}:${d.port}`
    const seen = by.get(key)
    by.set(key, { host: d.host, port: d.port, count: (seen?.count ?? 0) + 1, last: seen && seen.last > d.time ? seen.last : d.time })
  }
  return [...by.values()].sort((a, b) => b.count - a.count || b.last.localeCompare(a.last))
}

/** The proxies' decisions so far, oldest first: the egress proxy's, and the secrets the credential proxy refused; empty when the session has no proxy running. */
export async function readDecisions(runtime: RuntimePlugin, container: string, context: RuntimeContext): Promise<EgressDecision[]> {
  const read = async (name: string, argv: string[]) => {
    const found = await runtime.inspect?.(name, context)
    if (!found?.running) return []
    return parseDecisions((await runtime.exec(name, argv, { tty: false, capture: true }, context)).stdout)
  }
  // The credential proxy writes its log only once it refuses something.
  const [egress, secrets] = await Promise.all([read(proxyName(container), ['cat', GUEST_LOG]), read(credsName(container), ['sh', '-c', `cat ${SECRETS_LOG} 2>/dev/null || true`])])
  return secrets.length ? [...egress, ...secrets].sort((a, b) => a.time.localeCompare(b.time)) : egress
}

/**
 * Removes the session's proxy and networks (the recorded one, and the unsuffixed one of sessions
 * made before names had a suffix), if any, from the egress directory of the session, and the
 * volumes a copied session's proxies read from.
 */
export async function removeEgress(runtime: RuntimePlugin, container: string, dir: string, context: RuntimeContext): Promise<void> {
  const recorded = await recordedNetwork(dir)
  await dropEgress(runtime, container, [...new Set([recorded ?? networkName(container), networkName(container)])], context)
  // Found again by the session's labels when the session's volumes go; one left here stops nothing.
  for (const volume of [rulesVolume(container), programVolume(container)]) await runtime.volumes?.remove(volume, context).catch(() => undefined)
  await rm(path.join(dir, RECORD), { force: true })
  await rm(path.join(dir, VOLUME_RECORD), { force: true })
}

/** Stops the proxies (egress and credentials) and takes the networks away, endpoints first. */
export async function dropEgress(runtime: RuntimePlugin, container: string, networks: readonly string[], context: RuntimeContext): Promise<void> {
  await runtime.down(proxyName(container), context)
  await runtime.down(credsName(container), context)
  // Its services and its port forwarder live on that network too.
  const beside = await stopBeside(runtime, container, context)
  const ignore = () => undefined
  for (const network of networks) {
    // An engine may keep the endpoint of a removed container, which makes `network rm` fail; a
    // forced disconnect by name drops it whether or not the container still exists.
    for (const member of [container, proxyName(container), credsName(container), ...beside]) await runtime.networks?.disconnect(network, member, context).catch(ignore)
    // A network left behind is no reason to fail a removal the user asked for: its name is never used again.
    await runtime.networks?.remove(network, context).catch(ignore)
  }
}

/**
 * The reload `watchAllowlist` does, for a harness run by a kept launch (which loaded none of omh):
 * the kernel, the adapter and the engine are found only when a settings file changed.
 */
export async function reloadAllowlist(kernel: KernelView, at: { harness: string; engine: string; container: string; dir: string }, context: RuntimeContext): Promise<void> {
  const adapter = await kernel.adapter(at.harness)
  const { runtime } = await kernel.resolveRuntime(at.engine, context)
  await applyAllowlist({ runtime, context, container: at.container, dir: at.dir, allow: async () => (await sessionEgress(await kernel.rereadSettings(), adapter, at.dir)).allow })
}
