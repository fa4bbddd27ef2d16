// What the credential proxy adds to a model request: the same request (a first turn's size, streamed
// back) sent to the scripted model over TLS directly, as a harness with its key would, and through
// omh's credential proxy, which puts the key on it and forwards it over TLS. Both are the compiled
// programs omh ships, as processes of their own; the figure is the ratio of the medians.
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { request as httpRequest, Agent as HttpAgent } from 'node:http'
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { median } from './lib.js'

const root = path.resolve(import.meta.dirname, '..')
const dist = path.join(root, 'packages/sandbox/dist')

async function waitFor(file) {
  for (let i = 0; i < 200 && !existsSync(file); i++) await new Promise((r) => globalThis.setTimeout(r, 25))
  if (!existsSync(file)) throw new Error(`${file} never appeared`)
}

async function freePort() {
  const { createServer } = await import('node:net')
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

function send(requestFn, options, body) {
  return new Promise((resolve, reject) => {
    const start = performance.now()
    const q = requestFn(options, (res) => {
      res.on('data', () => undefined)
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - start) : reject(new Error(`status ${res.statusCode}`))))
    })
    q.on('error', reject)
    q.end(body)
  })
}

export async function benchCredentials(runs) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'omh-bench-creds-'))
  const children = []
  try {
    const ssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' })
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=omh bench authority', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign')
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost')
    writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n')
    ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '1', '-extfile', 'ext.cnf')
    // Every request offers a tool and gets a text reply: the script never runs out.
    writeFileSync(path.join(dir, 'script.json'), JSON.stringify({ replies: [], done: 'done' }))
    const model = spawn(process.execPath, [path.join(root, 'packages/doctor/dist/scripted-model.js'), '--script', path.join(dir, 'script.json'), '--ready', path.join(dir, 'model-port'), '--tls-cert', path.join(dir, 'server.pem'), '--tls-key', path.join(dir, 'server.key')], { stdio: 'ignore' })
    children.push(model)
    await waitFor(path.join(dir, 'model-port'))
    const modelPort = Number(readFileSync(path.join(dir, 'model-port'), 'utf8'))
    const proxyPort = await freePort()
    const routes = [{ port: proxyPort, upstream: `https://localhost:${modelPort}`, header: 'x-api-key', prefix: '', variable: 'BENCH_KEY' }]
    const proxy = spawn(process.execPath, [path.join(dist, 'network/credential-proxy.js')], {
      // The session's placeholder, which every request must carry in place of the key.
      env: { ...process.env, OMH_CREDENTIAL_ROUTES: JSON.stringify(routes), OMH_CREDENTIAL_TOKEN: 'placeholder', BENCH_KEY: 'sk-bench', NODE_EXTRA_CA_CERTS: path.join(dir, 'ca.pem') },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    children.push(proxy)
    // It listens on this machine's own addresses, never on loopback (in a session: the session's network).
    const ready = await new Promise((resolve, reject) => {
      proxy.stdout.once('data', (data) => resolve(String(data)))
      proxy.once('exit', (code) => reject(new Error(`the credential proxy exited ${code}`)))
    })
    const proxyHost = /^omh credential proxy on ([^,:\s]+)/.exec(ready)?.[1]
    if (!proxyHost) throw new Error(`the credential proxy said: ${ready}`)

    // A first turn's request: the system prompt and tool definitions make it tens of kilobytes.
    const tools = Array.from({ length: 20 }, (_, n) => ({ name: `tool_${n}`, description: 'x'.repeat(1500), input_schema: { type: 'object', properties: { a: { type: 'string' } } } }))
    const body = JSON.stringify({ model: 'bench', max_tokens: 1024, stream: true, system: 'y'.repeat(8000), tools, messages: [{ role: 'user', content: 'hello' }] })
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'anthropic-version': '2023-06-01' }
    const ca = readFileSync(path.join(dir, 'ca.pem'))
    const tlsAgent = new HttpsAgent({ keepAlive: true, ca })
    const plainAgent = new HttpAgent({ keepAlive: true })
    const direct = () => send(httpsRequest, { host: 'localhost', port: modelPort, path: '/v1/messages', method: 'POST', agent: tlsAgent, headers: { ...headers, 'x-api-key': 'sk-bench' } }, body)
    const through = () => send(httpRequest, { host: proxyHost, port: proxyPort, path: '/v1/messages', method: 'POST', agent: plainAgent, headers: { ...headers, 'x-api-key': 'placeholder' } }, body)
    for (let i = 0; i < 5; i++) {
      await direct()
      await through()
    }
    const samples = { direct: [], through: [] }
    for (let i = 0; i < runs; i++) {
      samples.direct.push(await direct())
      samples.through.push(await through())
    }
    tlsAgent.destroy()
    plainAgent.destroy()
    return { direct: median(samples.direct), through: median(samples.through) }
  } finally {
    for (const c of children) c.kill()
    rmSync(dir, { recursive: true, force: true })
  }
}
