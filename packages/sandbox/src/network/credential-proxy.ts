/**
 * omh's credential proxy: the one holder of a session's API keys. It runs in
 * a container of its own beside the session, on the session's internal
 * network and the outside one. The harness is given a placeholder key and a
 * base URL pointing here; the proxy puts the real key in the header the
 * adapter names and forwards the request over TLS to the real API host.
 * Its compiled file imports nothing but Node's built-ins, so it runs with the
 * `node` of any image that has one:
 *
 *   OMH_CREDENTIAL_ROUTES='[...]' node credential-proxy.mjs
 *
 * Each route listens on a port of its own; its key is read from the
 * proxy's environment by name, never from the request or a file.
 *
 * Secrets bound to hosts go the other way: the session's clients use the proxy's
 * front (`OMH_CREDENTIAL_FRONT`) as their HTTP proxy. It passes every tunnel
 * through the egress proxy as it came, except one to a host a secret is bound
 * to: that one it answers with the session's certificate for the host, reads
 * each request, puts the secret in place of its placeholder, and sends it on,
 * through the egress proxy again, over TLS to the real host. A placeholder
 * seen on its way to a host its secret is not bound to is refused, and the
 * refusal logged (`SECRETS_LOG`).
 *
 * A subscription login kept outside (logins.ts) is bound the same way, its
 * tokens read from the login's vault at each request; a refresh sent to its
 * token endpoint is made here, with the real refresh token, and what comes back
 * goes to the vault while the harness gets the placeholders again.
 *
 * Longer than 400 lines: it is one program, copied alone into a container and
 * run with Node's built-ins only, so its parts cannot live in modules of their own.
 *
 * Only the session may use it. The proxy starts on the session's internal
 * network alone and listens on the addresses it has then, before it is joined
 * to the outside one; and every request must carry, where the key goes, the
 * session's own placeholder (`OMH_CREDENTIAL_TOKEN`), which nothing outside
 * the session holds. A host or a container that reaches the proxy some other
 * way is refused before anything is sent upstream.
 */
import { appendFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { networkInterfaces } from 'node:os'
import { pathToFileURL } from 'node:url'

// Taken when the program runs, not when this module is imported: omh's CLI reads this file's
// constants and types, and loading a server's networking at every command would cost each one.
const http = () => process.getBuiltinModule('node:http')
const https = () => process.getBuiltinModule('node:https')
const net = () => process.getBuiltinModule('node:net')
const tls = () => process.getBuiltinModule('node:tls')

export interface CredentialRoute {
  /** The port this route listens on. */
  readonly port: number
  /** The real API host, `https://` only. */
  readonly upstream: string
  /** The header that carries the key upstream. */
  readonly header: string
  /** What precedes the key in that header (`Bearer `). */
  readonly prefix: string
  /** The proxy's variable holding the key. */
  readonly variable: string
}

// Hop-by-hop headers (RFC 9110 §7.6.1) end at the proxy; `host` is the upstream's.
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host'])

/** The request's headers as the upstream gets them: hop-by-hop ones dropped, the key in place of whatever the harness sent. */
export function forwardHeaders(incoming: IncomingHttpHeaders, route: CredentialRoute, key: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  const carrier = route.header.toLowerCase()
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || HOP.has(name) || name === carrier) continue
    out[name] = value
  }
  out[carrier] = `${route.prefix}${key}`
  return out
}

/** The response's headers as the harness gets them. */
function backHeaders(incoming: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(incoming)) if (value !== undefined && !HOP.has(name)) out[name] = value
  return out
}

function refuse(res: ServerResponse, status: number, message: string) {
  if (res.headersSent) return res.destroy()
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ type: 'error', error: { type: 'omh_credential_proxy', message } }))
}

/** The variable holding the session's placeholder, which every request must carry. */
export const TOKEN_VARIABLE = 'OMH_CREDENTIAL_TOKEN'
/** The file the proxy makes once every route listens. */
export const READY_FILE = '/tmp/omh-credential-proxy.ready'

/** Whether a request carries the session's placeholder where the key goes, with or without the route's prefix. */
export function carriesToken(incoming: IncomingHttpHeaders, route: CredentialRoute, token: string | undefined): boolean {
  if (!token) return false
  const sent = incoming[route.header.toLowerCase()]
  const value = Array.isArray(sent) ? sent[0] : sent
  return value === `${route.prefix}${token}` || value === token
}

/** Serves one route; resolves once it listens, with the port (the route's, or any free one for 0). */
export function serveRoute(route: CredentialRoute, env: Readonly<Record<string, string | undefined>>, host = '0.0.0.0'): Promise<{ port: number; close: () => void }> {
  const upstream = new URL(route.upstream)
  if (upstream.protocol !== 'https:') throw new Error(`${route.upstream}: the credential proxy forwards over TLS only`)
  const base = upstream.pathname.replace(/\/+$/, '')
  const server = http().createServer((req: IncomingMessage, res: ServerResponse) => {
    if (!carriesToken(req.headers, route, env[TOKEN_VARIABLE])) {
      req.resume()
      return refuse(res, 403, `omh's credential proxy serves only its session: this request does not carry the session's placeholder in ${route.header}`)
    }
    // Read per request: the key is never kept anywhere the proxy would answer from.
    const key = env[route.variable]
    if (!key) return refuse(res, 503, `no key for ${route.variable} was given to omh's credential proxy`)
    const out = https().request(
      {
        protocol: 'https:',
        hostname: upstream.hostname,
        port: upstream.port || 443,
        method: req.method,
        path: `${base}${req.url ?? '/'}`,
        headers: forwardHeaders(req.headers, route, key),
        // SNI names a host; an address is sent without it (RFC 6066).
        ...(net().isIP(upstream.hostname) ? {} : { servername: upstream.hostname }),
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, backHeaders(answer.headers))
        answer.pipe(res)
      },
    )
    // The error's text names the upstream and what failed there; it cannot hold the key.
    out.on('error', (error: NodeJS.ErrnoException) => refuse(res, 502, `omh's credential proxy did not reach ${upstream.host}: ${error.code ?? error.message}`))
    req.on('aborted', () => out.destroy())
    req.pipe(out)
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(route.port, host, () => {
      const address = server.address()
      resolve({ port: typeof address === 'object' && address ? address.port : route.port, close: () => server.close() })
    })
  })
}

/**
 * The addresses the proxy has as it starts, on the session's network alone:
 * every interface but loopback (and IPv6 link-local ones, which need a scope).
 */
export function sessionAddresses(interfaces = networkInterfaces()): string[] {
  return Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .filter((i) => !i.internal && !(i.family === 'IPv6' && i.address.toLowerCase().startsWith('fe80:')))
    .map((i) => i.address)
}

/** A secret the session holds only as a placeholder, and the hosts it may go to. */
export interface SecretBinding {
  /** The secret's name, for the refusal and the log. */
  readonly name: string
  /** What the session holds instead of the value. */
  readonly placeholder: string
  /** The proxy's variable holding the value. */
  readonly variable: string
  /** `host`, or `*.domain` for the domain and every name under it. */
  readonly hosts: readonly string[]
}

/** A subscription login kept outside (logins.ts): its vault, as the proxy mounts it, and where its tokens go. */
export interface FrontLogin {
  /** The harness and account, for the refusal and the log. */
  readonly name: string
  /** The vault's path in the proxy's container: read at each request, rewritten at each refresh. */
  readonly vault: string
  /** The hosts the access token may go to. */
  readonly hosts: readonly string[]
  /** The token endpoint, the one place the refresh token goes. */
  readonly refreshUrl?: string
}

export interface FrontRoute {
  /** The port the front listens on: the session's HTTP proxy. */
  readonly port: number
  /** The egress proxy (`host:port`) every tunnel and request goes through. */
  readonly egress: string
  readonly bindings: readonly SecretBinding[]
  readonly logins?: readonly FrontLogin[]
}

/** A vault as the proxy reads it: the real tokens and their placeholders. */
interface VaultRead {
  readonly access: string
  readonly refresh?: string
  readonly id?: string
  readonly placeholders: { readonly access: string; readonly refresh?: string; readonly id?: string }
}

const readVaultSync = (file: string): VaultRead | undefined => {
  try {
    const read = JSON.parse(readFileSync(file, 'utf8')) as VaultRead
    return typeof read.access === 'string' && typeof read.placeholders?.access === 'string' ? read : undefined
  } catch {
    return undefined
  }
}

/** Each kept login's tokens as bindings, read from its vault now: another session's refresh may have changed them. */
export function loginBindings(logins: readonly FrontLogin[]): { bindings: SecretBinding[]; values: Record<string, string>; vaults: (VaultRead | undefined)[] } {
  const bindings: SecretBinding[] = []
  const values: Record<string, string> = {}
  const vaults = logins.map((login, n) => {
    const vault = readVaultSync(login.vault)
    if (!vault) return undefined
    bindings.push({ name: `${login.name} access token`, placeholder: vault.placeholders.access, variable: `omh-login-${n}-access`, hosts: login.hosts })
    values[`omh-login-${n}-access`] = vault.access
    if (vault.refresh && vault.placeholders.refresh && login.refreshUrl) {
      bindings.push({ name: `${login.name} refresh token`, placeholder: vault.placeholders.refresh, variable: `omh-login-${n}-refresh`, hosts: [new URL(login.refreshUrl).hostname] })
      values[`omh-login-${n}-refresh`] = vault.refresh
    }
    return vault
  })
  return { bindings, values, vaults }
}

/** A JWT's header and claims with a placeholder's mark for its signature; any other token, the placeholder as it was. */
const reshaped = (token: string, placeholder: string): string => {
  const parts = token.split('.')
  const mark = placeholder.split('.').at(-1)!
  return parts.length === 3 && placeholder.split('.').length === 3 ? `${parts[0]}.${parts[1]}.${mark}` : placeholder
}

/**
 * A token endpoint's answer as the harness gets it: the new tokens put in the vault, the
 * placeholders in their places. Undefined when the answer holds no new access token.
 */
export function keepRefreshed(answer: string, vault: VaultRead): { readonly text: string; readonly vault: VaultRead } | undefined {
  let parsed: Record<string, unknown>
  try {
    parsed = JSON.parse(answer) as Record<string, unknown>
  } catch {
    return undefined
  }
  if (!parsed || typeof parsed !== 'object' || typeof parsed['access_token'] !== 'string') return undefined
  const refreshed = typeof parsed['refresh_token'] === 'string' ? parsed['refresh_token'] : vault.refresh
  const identity = typeof parsed['id_token'] === 'string' ? parsed['id_token'] : vault.id
  // A new JWT keeps its placeholder's mark, with the new token's header and claims: a harness reads
  // its expiry there (Codex refreshes an access token whose `exp` has passed, again and again).
  const idPlaceholder = typeof parsed['id_token'] === 'string' && vault.placeholders.id ? reshaped(parsed['id_token'], vault.placeholders.id) : vault.placeholders.id
  const placeholders = { ...vault.placeholders, access: reshaped(parsed['access_token'], vault.placeholders.access), ...(idPlaceholder ? { id: idPlaceholder } : {}) }
  const kept: VaultRead = { access: parsed['access_token'], ...(refreshed ? { refresh: refreshed } : {}), ...(identity ? { id: identity } : {}), placeholders }
  parsed['access_token'] = placeholders.access
  if (typeof parsed['refresh_token'] === 'string') parsed['refresh_token'] = vault.placeholders.refresh ?? ''
  if (typeof parsed['id_token'] === 'string') parsed['id_token'] = idPlaceholder ?? ''
  return { text: JSON.stringify(parsed), vault: kept }
}

/** The proxy's variables holding the certificate it answers bound hosts with, and its key (PEM). */
export const FRONT_CERT = 'OMH_SECRETS_CERT'
export const FRONT_KEY = 'OMH_SECRETS_KEY'
/** Where the front writes what it refused, a line each, as the egress proxy's log does. */
export const SECRETS_LOG = '/tmp/omh-secrets.log'
/** The log's result word: the secret's name follows it. */
export const SECRET_REFUSED = 'OMH_SECRET_REFUSED'

export const hostBound = (pattern: string, host: string): boolean =>
  pattern.startsWith('*.') ? host === pattern.slice(2) || host.endsWith(pattern.slice(1)) : host === pattern

/**
 * Where a placeholder stands in a text. A JWT-shaped one is known by its mark alone: it carries the
 * header and claims of the token it stands for, which change at each refresh, and a harness that
 * has not read the refreshed file yet still sends the ones before.
 */
function placeholderPattern(placeholder: string): RegExp | string {
  const jwt = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.(omh-login-[0-9a-f]{32})$/.exec(placeholder)
  return jwt ? new RegExp(`[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.${jwt[1]}(?![0-9a-f])`, 'g') : placeholder
}

/** A header value or target with each placeholder bound to `host` replaced; throws the binding of one that is not. */
function swapIn(text: string, host: string, bindings: readonly SecretBinding[], env: Readonly<Record<string, string | undefined>>): string {
  let out = text
  for (const b of bindings) {
    const pattern = placeholderPattern(b.placeholder)
    const found = typeof pattern === 'string' ? out.includes(pattern) : out.search(pattern) >= 0
    if (!found) continue
    if (!b.hosts.some((h) => hostBound(h, host))) throw b
    const value = env[b.variable] ?? b.placeholder
    out = typeof pattern === 'string' ? out.replaceAll(pattern, value) : out.replace(pattern, () => value)
  }
  return out
}

/**
 * The request's headers and target (path and query) as they go to `host`: each placeholder of a
 * secret bound to it replaced by the value, inside a Basic login too (as git sends a token).
 * `refused`: a placeholder whose secret may not go there, and nothing is sent.
 */
export function swapSecrets(
  incoming: IncomingHttpHeaders,
  target: string,
  host: string,
  bindings: readonly SecretBinding[],
  env: Readonly<Record<string, string | undefined>>,
): { readonly headers: Record<string, string | string[]>; readonly target: string } | { readonly refused: SecretBinding } {
  const swap = (text: string) => swapIn(text, host, bindings, env)
  const value = (name: string, text: string) => {
    const basic = /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(text)
    if (!basic || (name !== 'authorization' && name !== 'proxy-authorization')) return swap(text)
    const login = Buffer.from(basic[1]!, 'base64').toString('utf8')
    const swapped = swap(login)
    return swapped === login ? swap(text) : `Basic ${Buffer.from(swapped, 'utf8').toString('base64')}`
  }
  try {
    const headers: Record<string, string | string[]> = {}
    for (const [name, sent] of Object.entries(incoming)) {
      if (sent === undefined || (HOP.has(name) && name !== 'host')) continue
      headers[name] = Array.isArray(sent) ? sent.map((v) => value(name, v)) : value(name, sent)
    }
    return { headers, target: swap(target) }
  } catch (refused) {
    return { refused: refused as SecretBinding }
  }
}

const authority = (text: string | undefined) => {
  const found = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text ?? '')
  return found ? { host: found[1]!.replace(/^\[|\]$/g, '').toLowerCase(), port: Number(found[2]) } : undefined
}

/** The head of a request as it came, for the egress proxy to read it unchanged. */
const rawHead = (req: IncomingMessage) => {
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`]
  for (let n = 0; n < req.rawHeaders.length; n += 2) lines.push(`${req.rawHeaders[n]}: ${req.rawHeaders[n + 1]}`)
  return `${lines.join('\r\n')}\r\n\r\n`
}

/**
 * Serves the session's HTTP proxy front; resolves once it listens, with the port. `upstreamCa`
 * replaces the authorities the real hosts are checked against (Node's, and `NODE_EXTRA_CA_CERTS`).
 */
export function serveFront(
  route: FrontRoute,
  env: Readonly<Record<string, string | undefined>>,
  host = '0.0.0.0',
  options: { readonly upstreamCa?: string; readonly log?: string } = {},
): Promise<{ port: number; close: () => void }> {
  const egress = authority(route.egress)
  if (!egress) throw new Error(`${route.egress}: the egress proxy is named host:port`)
  const targets = new WeakMap<Socket, { host: string; port: number }>()
  // Where a login's tokens go is known without its vault: its hosts and its token endpoint's.
  const boundHosts = [...route.bindings.flatMap((b) => b.hosts), ...(route.logins ?? []).flatMap((l) => [...l.hosts, ...(l.refreshUrl ? [new URL(l.refreshUrl).hostname] : [])])]
  const bound = (name: string) => boundHosts.some((h) => hostBound(h, name))
  const log = (binding: SecretBinding, method: string, url: string) => {
    try {
      appendFileSync(options.log ?? SECRETS_LOG, `${(Date.now() / 1000).toFixed(3)} ${SECRET_REFUSED}:${binding.name} 403 ${method} ${url}\n`)
    } catch {
      // A log that cannot be written refuses nothing less.
    }
  }

  /** Opens a tunnel to `target` through the egress proxy and TLS over it; the egress proxy's refusal goes back to `res` as it is. */
  const through = (req: IncomingMessage, res: ServerResponse, target: { host: string; port: number }, go: (secure: TLSSocket) => void) => {
    const tunnel = http().request({ host: egress.host, port: egress.port, method: 'CONNECT', path: `${target.host}:${target.port}`, headers: { host: `${target.host}:${target.port}` } })
    tunnel.on('error', (error: NodeJS.ErrnoException) => refuse(res, 502, `omh's credential proxy did not reach the egress proxy: ${error.code ?? error.message}`))
    tunnel.on('connect', (answer, socket, head) => {
      if (answer.statusCode !== 200) {
        // The egress proxy's refusal, with the line that says how to allow the host, goes back as it is.
        req.resume()
        res.writeHead(answer.statusCode ?? 502, backHeaders(answer.headers))
        if (head.length) res.write(head)
        return socket.pipe(res)
      }
      go(tls().connect({ socket, ...(net().isIP(target.host) ? {} : { servername: target.host }), ALPNProtocols: ['http/1.1'], ...(options.upstreamCa ? { ca: options.upstreamCa } : {}) }))
    })
    tunnel.end()
  }

  // A request read from a tunnel to a bound host: swapped, then sent over a tunnel of its own through the egress proxy.
  const inner = http().createServer((req, res) => {
    const target = targets.get(req.socket)!
    const logins = loginBindings(route.logins ?? [])
    const bindings = [...route.bindings, ...logins.bindings]
    const values = { ...env, ...logins.values }
    const swapped = swapSecrets(req.headers, req.url ?? '/', target.host, bindings, values)
    if ('refused' in swapped) {
      req.resume()
      log(swapped.refused, req.method ?? 'GET', `https://${target.host}:${target.port}${(req.url ?? '/').split('?')[0]}`)
      const where = swapped.refused.hosts.join(', ')
      return refuse(res, 403, `omh: the secret ${swapped.refused.name} may go only to ${where}, not to ${target.host}; nothing was sent`)
    }
    const refreshing = (route.logins ?? []).findIndex((l) => {
      if (!l.refreshUrl || req.method !== 'POST') return false
      const url = new URL(l.refreshUrl)
      return url.hostname === target.host && (req.url ?? '/').split('?')[0] === url.pathname
    })
    if (refreshing >= 0 && logins.vaults[refreshing]) return refresh(req, res, target, swapped, route.logins![refreshing]!, logins.vaults[refreshing]!)
    through(req, res, target, (secure) => {
      const out = http().request({ method: req.method, path: swapped.target, headers: swapped.headers, createConnection: () => secure }, (back) => {
        res.writeHead(back.statusCode ?? 502, backHeaders(back.headers))
        back.pipe(res)
      })
      out.on('error', (error: NodeJS.ErrnoException) => refuse(res, 502, `omh's credential proxy did not reach ${target.host}: ${error.code ?? error.message}`))
      req.on('aborted', () => out.destroy())
      req.pipe(out)
    })
  })

  /**
   * A login's refresh, made by the proxy: the real refresh token in the body in place of its
   * placeholder, the new tokens into the vault, the placeholders back to the harness.
   */
  const refresh = (req: IncomingMessage, res: ServerResponse, target: { host: string; port: number }, swapped: { headers: Record<string, string | string[]>; target: string }, login: FrontLogin, vault: VaultRead) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size <= 1024 * 1024) chunks.push(chunk)
    })
    req.on('end', () => {
      if (size > 1024 * 1024) return refuse(res, 413, 'omh: a token refresh of more than 1 MiB')
      const form = /x-www-form-urlencoded/i.test(String(req.headers['content-type'] ?? ''))
      let body = Buffer.concat(chunks).toString('utf8')
      if (vault.refresh && vault.placeholders.refresh) body = body.replaceAll(vault.placeholders.refresh, form ? encodeURIComponent(vault.refresh) : vault.refresh)
      const headers: Record<string, string | string[]> = { ...swapped.headers, 'content-length': String(Buffer.byteLength(body)), 'accept-encoding': 'identity' }
      delete headers['transfer-encoding']
      through(req, res, target, (secure) => {
        const out = http().request({ method: 'POST', path: swapped.target, headers, createConnection: () => secure }, (back) => {
          const parts: Buffer[] = []
          back.on('data', (d: Buffer) => parts.push(d))
          back.on('end', () => {
            const answer = Buffer.concat(parts).toString('utf8')
            const kept = (back.statusCode ?? 0) < 300 ? keepRefreshed(answer, vault) : undefined
            if (kept) {
              const temporary = `${login.vault}.${process.pid}`
              writeFileSync(temporary, `${JSON.stringify(kept.vault, null, 2)}\n`, { mode: 0o600 })
              renameSync(temporary, login.vault)
            }
            // An answer with no new token (an error) holds none to hide; it goes back as it came.
            const text = kept?.text ?? answer
            const headersBack = backHeaders(back.headers)
            delete headersBack['content-length']
            res.writeHead(back.statusCode ?? 502, { ...headersBack, 'content-length': String(Buffer.byteLength(text)) })
            res.end(text)
          })
        })
        out.on('error', (error: NodeJS.ErrnoException) => refuse(res, 502, `omh's credential proxy did not reach ${target.host}: ${error.code ?? error.message}`))
        out.end(body)
      })
    })
  }
  inner.on('clientError', (_error, socket) => socket.destroy())

  const front = http().createServer((req, res) => {
    // Plain HTTP goes on unread: a secret is never put in a request anyone on the way could read.
    const out = http().request({ host: egress.host, port: egress.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    out.on('error', (error: NodeJS.ErrnoException) => refuse(res, 502, `omh's credential proxy did not reach the egress proxy: ${error.code ?? error.message}`))
    req.pipe(out)
  })
  front.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on('error', () => client.destroy())
    const target = authority(req.url)
    if (!target || !bound(target.host)) {
      // Every other tunnel is the egress proxy's to allow or refuse, byte for byte as the client sent it.
      const up = net().connect(egress.port, egress.host, () => {
        up.write(rawHead(req))
        if (head.length) up.write(head)
        up.pipe(client)
        client.pipe(up)
      })
      up.on('error', () => client.destroy())
      client.on('close', () => up.destroy())
      return
    }
    client.write('HTTP/1.1 200 Connection established\r\n\r\n')
    if (head.length) client.unshift(head)
    const secure = new (tls().TLSSocket)(client, { isServer: true, cert: env[FRONT_CERT], key: env[FRONT_KEY], ALPNProtocols: ['http/1.1'] })
    secure.on('error', () => secure.destroy())
    targets.set(secure, target)
    inner.emit('connection', secure)
  })
  front.on('clientError', (_error, socket) => socket.destroy())
  return new Promise((resolve, reject) => {
    front.once('error', reject)
    front.listen(route.port, host, () => {
      const address = front.address()
      resolve({ port: typeof address === 'object' && address ? address.port : route.port, close: () => front.close() })
    })
  })
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const routes = JSON.parse(process.env['OMH_CREDENTIAL_ROUTES'] ?? '[]') as CredentialRoute[]
  const addresses = sessionAddresses()
  if (!addresses.length) {
    process.stderr.write("omh credential proxy: no address on the session's network to listen on\n")
    process.exit(1)
  }
  const front = process.env['OMH_CREDENTIAL_FRONT'] ? (JSON.parse(process.env['OMH_CREDENTIAL_FRONT']) as FrontRoute) : undefined
  // Not a top-level await: one in this module would make omh's bundle load everything that imports
  // it asynchronously, and so evaluate it with the bundle rather than when a command needs it.
  void Promise.all([...routes.flatMap((r) => addresses.map((a) => serveRoute(r, process.env, a))), ...(front ? addresses.map((a) => serveFront(front, process.env, a)) : [])]).then(() => {
    writeFileSync(READY_FILE, `${addresses.join(' ')}\n`)
    process.stdout.write(`omh credential proxy on ${addresses.join(', ')}: ${routes.map((r) => `:${r.port} -> ${new URL(r.upstream).host}`).join(', ')}\n`)
  })
}
