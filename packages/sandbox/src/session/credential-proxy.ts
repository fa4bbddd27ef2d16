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
 * Only the session may use it. The proxy starts on the session's internal
 * network alone and listens on the addresses it has then, before it is joined
 * to the outside one; and every request must carry, where the key goes, the
 * session's own placeholder (`OMH_CREDENTIAL_TOKEN`), which nothing outside
 * the session holds. A host or a container that reaches the proxy some other
 * way is refused before anything is sent upstream.
 */
import { writeFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import { request } from 'node:https'
import { isIP } from 'node:net'
import { networkInterfaces } from 'node:os'
import { pathToFileURL } from 'node:url'

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
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (!carriesToken(req.headers, route, env[TOKEN_VARIABLE])) {
      req.resume()
      return refuse(res, 403, `omh's credential proxy serves only its session: this request does not carry the session's placeholder in ${route.header}`)
    }
    // Read per request: the key is never kept anywhere the proxy would answer from.
    const key = env[route.variable]
    if (!key) return refuse(res, 503, `no key for ${route.variable} was given to omh's credential proxy`)
    const out = request(
      {
        protocol: 'https:',
        hostname: upstream.hostname,
        port: upstream.port || 443,
        method: req.method,
        path: `${base}${req.url ?? '/'}`,
        headers: forwardHeaders(req.headers, route, key),
        // SNI names a host; an address is sent without it (RFC 6066).
        ...(isIP(upstream.hostname) ? {} : { servername: upstream.hostname }),
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

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const routes = JSON.parse(process.env['OMH_CREDENTIAL_ROUTES'] ?? '[]') as CredentialRoute[]
  const addresses = sessionAddresses()
  if (!addresses.length) {
    process.stderr.write("omh credential proxy: no address on the session's network to listen on\n")
    process.exit(1)
  }
  await Promise.all(routes.flatMap((r) => addresses.map((a) => serveRoute(r, process.env, a))))
  writeFileSync(READY_FILE, `${addresses.join(' ')}\n`)
  process.stdout.write(`omh credential proxy on ${addresses.join(', ')}: ${routes.map((r) => `:${r.port} -> ${new URL(r.upstream).host}`).join(', ')}\n`)
}
