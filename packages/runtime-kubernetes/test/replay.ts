/**
 * A scripted Kubernetes API server: it answers a recorded list of exchanges
 * in order, over real HTTP and, for exec, a real WebSocket speaking the
 * API's channel protocol, and fails any request the list does not expect.
 * The official client talks to it exactly as to a cluster.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { WebSocketServer } from 'ws'

export interface Exchange {
  readonly request: {
    readonly method: string
    /** The path, or a regular expression for it after `~` (names with a time in them). */
    readonly path: string
    /** Query parameters that must be present with these values (each value, for repeated ones). */
    readonly query?: Record<string, string | string[]>
    /** Fields the JSON body must hold, compared as a subset. */
    readonly body?: unknown
  }
  readonly response?: { readonly status: number; readonly body: unknown }
  /** For exec: frames sent on the WebSocket, each a channel number and text (base64 with a third element `base64`). */
  readonly frames?: readonly (readonly [number, string] | readonly [number, string, 'base64'])[]
  /** For exec: answer only once the client has closed its stdin (protocol v5), keeping what it sent. */
  readonly readsStdin?: boolean
}

export interface Replay {
  readonly url: string
  /** Exchanges not yet asked for, and every request that matched none. */
  readonly pending: () => readonly Exchange[]
  readonly unexpected: string[]
  /** Bodies received, by request, for assertions beyond the recording. */
  readonly received: { method: string; path: string; body: unknown }[]
  /** What exec clients wrote to stdin, one entry per exec that reads it. */
  readonly stdin: Buffer[]
  close(): Promise<void>
  /** A kubeconfig file naming this server, written into `dir`. */
  kubeconfig(dir: string, namespace?: string): string
}

export const exchanges = (name: string): Exchange[] => JSON.parse(readFileSync(new URL(`./exchanges/${name}.json`, import.meta.url), 'utf8')) as Exchange[]

/** Whether `actual` holds everything `expected` names (objects by key, arrays element by element). */
export function holds(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((e, n) => holds(actual[n], e))
  if (expected && typeof expected === 'object') return !!actual && typeof actual === 'object' && Object.entries(expected).every(([k, v]) => holds((actual as Record<string, unknown>)[k], v))
  return actual === expected
}

function matches(ex: Exchange, method: string, url: URL, body: unknown): boolean {
  const { path: want } = ex.request
  if (ex.request.method !== method || !(want.startsWith('~') ? new RegExp(`^${want.slice(1)}$`).test(url.pathname) : want === url.pathname)) return false
  for (const [k, v] of Object.entries(ex.request.query ?? {})) {
    const got = url.searchParams.getAll(k)
    if (Array.isArray(v) ? !holds(got, v) : got[0] !== v) return false
  }
  return ex.request.body === undefined || holds(body, ex.request.body)
}

export async function replay(script: readonly Exchange[]): Promise<Replay> {
  const queue = [...script]
  const unexpected: string[] = []
  const received: Replay['received'] = []
  const take = (method: string, url: URL, body: unknown): Exchange | undefined => {
    const next = queue[0]
    if (next && matches(next, method, url, body)) return queue.shift()
    unexpected.push(`${method} ${url.pathname}${url.search} (expected ${next ? `${next.request.method} ${next.request.path}` : 'nothing'})`)
    return undefined
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://replay')
      const text = Buffer.concat(chunks).toString('utf8')
      const body = text ? (JSON.parse(text) as unknown) : undefined
      received.push({ method: req.method ?? '', path: url.pathname, body })
      const ex = take(req.method ?? '', url, body)
      const status = ex?.response?.status ?? 500
      const answer = ex?.response?.body ?? { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the replay expected another request', reason: 'InternalError', code: 500 }
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer))
    })
  })
  const stdin: Buffer[] = []
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : protocols.has('v4.channel.k8s.io') ? 'v4.channel.k8s.io' : false) })
  server.on('upgrade', (req: IncomingMessage, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://replay')
    received.push({ method: 'GET', path: url.pathname, body: Object.fromEntries([...url.searchParams.keys()].map((k) => [k, url.searchParams.getAll(k)])) })
    const ex = take('GET', url, undefined)
    wss.handleUpgrade(req, socket, head, (ws) => {
      const answer = () => {
        for (const [channel, text, encoding] of ex?.frames ?? [[3, JSON.stringify({ metadata: {}, status: 'Failure', message: 'unexpected exec', reason: 'InternalError' })]]) {
          ws.send(Buffer.concat([Buffer.from([channel]), Buffer.from(text, encoding === 'base64' ? 'base64' : 'utf8')]))
        }
        ws.close()
      }
      if (!ex?.readsStdin) return answer()
      const got: Buffer[] = []
      ws.on('message', (data: Buffer) => {
        // Channel 0 carries stdin; 255 with 0 says the client closed it.
        if (data[0] === 0) got.push(data.subarray(1))
        else if (data[0] === 255 && data[1] === 0) {
          stdin.push(Buffer.concat(got))
          answer()
        }
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    pending: () => queue,
    unexpected,
    received,
    stdin,
    close: () =>
      new Promise<void>((resolve) => {
        wss.close()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
    kubeconfig(dir, namespace = 'omh') {
      const file = path.join(dir, 'kubeconfig')
      writeFileSync(
        file,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          `- name: replay`,
          `  cluster: {server: "${url}", insecure-skip-tls-verify: true}`,
          'users:',
          '- name: me',
          '  user: {token: "replay-token"}',
          'contexts:',
          '- name: replay',
          `  context: {cluster: replay, user: me, namespace: ${namespace}}`,
          '- name: other',
          '  context: {cluster: replay, user: me, namespace: elsewhere}',
          'current-context: replay',
          '',
        ].join('\n'),
      )
      return file
    },
  }
}
