/**
 * The egress self-test (`omh doctor --network`): from inside a live session, every allow rule is
 * asked of its proxy, and a fixed set of destinations that must stay closed is tried, through the
 * proxy and past it: the cloud metadata address, loopback by name and by address, a name nothing
 * allows, a direct address on the internet over IPv4 and IPv6, the container's gateway, and another
 * session's container. A result that differs from what the rules say fails doctor, naming the rule.
 *
 * The probe runs with omh's own Node, which every session image has, and only Node's built-ins.
 */
import type { RuntimeContext, RuntimePlugin } from '@omh/plugin-api'
import type { Adapter } from '@omh/kernel'
import type { KernelView } from '@omh/sandbox'
import { TOOLSET_NODE } from '@omh/image'
import { containerName, egressDir, type EgressMode, LABEL, proxyName, type Repository, sessionEgress, sessionPaths } from '@omh/sandbox/parts'

/** One destination tried: through the session's proxy (`CONNECT`), or straight past it. */
export interface EgressProbe {
  readonly name: string
  /** The allow rule it tests, or why it must stay closed. */
  readonly rule: string
  readonly way: 'proxy' | 'direct'
  /** `host:port`; `gateway:port` is the container's default route, looked up inside. */
  readonly target: string
  readonly expect: 'open' | 'closed'
}

export interface EgressProbeResult extends EgressProbe {
  readonly got: 'open' | 'closed'
  /** What was seen: the proxy's status, or the connection's outcome. */
  readonly detail: string
  readonly ok: boolean
}

export interface EgressSelfTest {
  readonly session: string
  readonly mode: EgressMode
  readonly results: readonly EgressProbeResult[]
  readonly ok: boolean
}

/** A host no allowlist names: `.invalid` is reserved never to resolve (RFC 2606). */
const UNLISTED = 'omh-doctor-unlisted.invalid:443'
const METADATA = '169.254.169.254:80'

/** The probes for an allowlist: each rule open, the fixed set closed. */
export function egressProbes(allow: readonly string[], mode: EgressMode, others: readonly string[] = []): EgressProbe[] {
  // An open session goes out on the engine's network by design: nothing is held closed to test.
  if (mode === 'open') return []
  const open: EgressProbe[] =
    mode === 'allowlist'
      ? allow.map((pattern) => {
          const [host, port] = pattern.split(':') as [string, string | undefined]
          // A subdomain pattern is asked for a name it covers.
          const name = host.startsWith('*.') ? `omh-doctor-probe.${host.slice(2)}` : host
          return { name: `allowed ${pattern}`, rule: `[network] allow "${pattern}"`, way: 'proxy', target: `${name}:${port ?? '443'}`, expect: 'open' }
        })
      : []
  const closed = (name: string, rule: string, way: EgressProbe['way'], target: string): EgressProbe => ({ name, rule, way, target, expect: 'closed' })
  return [
    ...open,
    ...(mode === 'allowlist'
      ? [
          closed('a name no rule allows', 'only allowed names pass the proxy', 'proxy', UNLISTED),
          closed('metadata through the proxy', 'link-local addresses are never reached', 'proxy', METADATA),
          closed('localhost through the proxy', 'loopback is never reached', 'proxy', 'localhost:3128'),
          closed('127.0.0.1 through the proxy', 'loopback is never reached', 'proxy', '127.0.0.1:22'),
          closed('[::1] through the proxy', 'loopback is never reached', 'proxy', '[::1]:80'),
        ]
      : []),
    closed('metadata directly', 'the session has no route out but its proxy', 'direct', METADATA),
    closed('an address on the internet directly', 'the session has no route out but its proxy', 'direct', '1.1.1.1:443'),
    closed('an IPv6 address directly', 'the session has no route out but its proxy', 'direct', '[2606:4700:4700::1111]:443'),
    closed("the container's gateway directly", 'the session has no route out but its proxy', 'direct', 'gateway:80'),
    ...others.map((address) => closed(`another session's container (${address})`, 'sessions never reach each other', 'direct', `${address.includes(':') ? `[${address}]` : address}:22`)),
  ]
}

/**
 * Runs inside the session: argv[1] is the probes as JSON; prints one JSON line of results. A direct
 * connection counts as open when anything answered, a refusal included: a route exists.
 */
export const PROBE_SCRIPT = String.raw`
const http = require('http'), net = require('net'), fs = require('fs')
const probes = JSON.parse(process.argv[1])
const proxy = new URL(process.env.HTTP_PROXY || 'http://omh-egress:3128')
const split = (t) => { const m = /^\[(.*)\]:(\d+)$/.exec(t) || /^(.*):(\d+)$/.exec(t); return { host: m[1], port: Number(m[2]) } }
function gateway() {
  try {
    for (const line of fs.readFileSync('/proc/net/route', 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      if (f[1] === '00000000' && f[2] && f[2] !== '00000000') return [3, 2, 1, 0].map((i) => parseInt(f[2].slice(i * 2, i * 2 + 2), 16)).join('.')
    }
  } catch {}
  return undefined
}
const viaProxy = (target) => new Promise((done) => {
  const r = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: target, timeout: 8000 })
  // 200, or a 5xx for a host the proxy tried and could not reach: let through. Anything else: refused.
  const passed = (code) => code === 200 || code >= 500
  r.on('connect', (res, socket) => { socket.destroy(); done({ got: passed(res.statusCode) ? 'open' : 'closed', detail: 'proxy answered ' + res.statusCode }) })
  r.on('response', (res) => { res.resume(); done({ got: passed(res.statusCode) ? 'open' : 'closed', detail: 'proxy answered ' + res.statusCode }) })
  r.on('timeout', () => { r.destroy(); done({ got: 'open', detail: 'the proxy did not answer in 8 s' }) })
  r.on('error', (e) => done({ got: 'closed', detail: 'the proxy was not reached: ' + e.code }))
  r.end()
})
const direct = (target) => new Promise((done) => {
  let { host, port } = split(target)
  if (host === 'gateway') { host = gateway(); if (!host) return done({ got: 'closed', detail: 'no default route' }) }
  const s = net.connect({ host, port, timeout: 3000 })
  s.on('connect', () => { s.destroy(); done({ got: 'open', detail: 'connected to ' + host }) })
  s.on('timeout', () => { s.destroy(); done({ got: 'closed', detail: 'no answer from ' + host + ' in 3 s' }) })
  s.on('error', (e) => done({ got: e.code === 'ECONNREFUSED' ? 'open' : 'closed', detail: (e.code === 'ECONNREFUSED' ? 'refused by ' + host + ', so reached' : e.code) }))
})
Promise.all(probes.map((p) => (p.way === 'proxy' ? viaProxy(p.target) : direct(p.target)))).then((r) => process.stdout.write(JSON.stringify(r) + '\n'))
`

/** A running container's addresses, from inside it (an engine's inspect output differs by engine). */
const ADDRESSES = "process.stdout.write(JSON.stringify(Object.values(require('os').networkInterfaces()).flat().filter((i) => !i.internal && !i.address.startsWith('fe80')).map((i) => i.address)))"

export interface SelfTestAt {
  readonly kernel: KernelView
  readonly runtime: RuntimePlugin
  readonly repo: Repository
  readonly session: string
  readonly context: RuntimeContext
}

/** Runs the probes in the session's running container and judges them; undefined when its container does not run. */
export async function egressSelfTest(at: SelfTestAt): Promise<EgressSelfTest | undefined> {
  const { runtime, context } = at
  const container = containerName(at.repo, at.session)
  const info = await runtime.inspect?.(container, context)
  if (!info?.running) return undefined
  const adapter: Pick<Adapter, 'egress'> = await at.kernel.adapter(info.labels[LABEL.harness] ?? '')
  const egress = await sessionEgress(at.kernel.settings, adapter, egressDir(sessionPaths(at.kernel.omhState, at.repo, at.session).run))
  const proxyUp = (await runtime.inspect?.(proxyName(container), context))?.running === true
  const mode: EgressMode = proxyUp ? 'allowlist' : egress.mode === 'allowlist' ? 'none' : egress.mode
  const others = await otherSessions(at, container)
  const probes = egressProbes(egress.allow, mode, others)
  const ran = await runtime.exec(container, [TOOLSET_NODE, '-e', PROBE_SCRIPT, JSON.stringify(probes)], { tty: false, capture: true }, context)
  const seen = JSON.parse(ran.stdout.trim().split('\n').at(-1) ?? '[]') as { got: 'open' | 'closed'; detail: string }[]
  const results = probes.map((probe, n) => {
    const one = seen[n] ?? { got: 'open' as const, detail: `the probe did not run: ${ran.stderr.trim().split('\n').at(-1) ?? ''}` }
    return { ...probe, ...one, ok: one.got === probe.expect }
  })
  return { session: at.session, mode, results, ok: results.every((r) => r.ok) }
}

/** Addresses of the other running session containers on the engine, omh's and any repository's. */
async function otherSessions(at: SelfTestAt, container: string): Promise<string[]> {
  const running = (await at.runtime.list({}, at.context)).filter((c) => c.running && c.labels[LABEL.session] !== undefined && c.labels[LABEL.harness] !== undefined && c.name !== container)
  for (const other of running) {
    const asked = await at.runtime.exec(other.name, [TOOLSET_NODE, '-e', ADDRESSES], { tty: false, capture: true }, at.context).catch(() => undefined)
    const addresses = asked?.exitCode === 0 ? (JSON.parse(asked.stdout) as string[]) : []
    if (addresses.length) return addresses.slice(0, 2)
  }
  return []
}
