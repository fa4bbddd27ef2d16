import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer as httpServer, request, type IncomingHttpHeaders, type Server } from 'node:http'
import { createServer as httpsServer } from 'node:https'
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { connect as tlsConnect } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueServer, makeAuthority } from './authority.js'
import { FRONT_CERT, FRONT_KEY, hostBound, keepRefreshed, serveFront, swapSecrets, type SecretBinding } from './credential-proxy.js'

const GH: SecretBinding = { name: 'GH_TOKEN', placeholder: 'omh-secret-gh-0123', variable: 'OMH_SECRET_GH_TOKEN', hosts: ['api.bound.test'] }
const OTHER: SecretBinding = { name: 'OTHER_TOKEN', placeholder: 'omh-secret-other-4567', variable: 'OMH_SECRET_OTHER_TOKEN', hosts: ['*.other.test'] }
const env = { OMH_SECRET_GH_TOKEN: 'ghp_real_value', OMH_SECRET_OTHER_TOKEN: 'other_real_value' }

describe('a refreshed login', () => {
  it('keeps the new tokens, an identity token among them, and hands back placeholders with its claims', () => {
    const vault = { access: 'a1', refresh: 'r1', id: 'h.c1.s1', placeholders: { access: 'pa', refresh: 'pr', id: 'h.c1.omh-login-00' } }
    const answer = JSON.stringify({ access_token: 'a2', id_token: 'h.c2.s2', expires_in: 60, scope: 'x' })
    const kept = keepRefreshed(answer, vault)!
    expect(JSON.parse(kept.text)).toEqual({ access_token: 'pa', id_token: 'h.c2.omh-login-00', expires_in: 60, scope: 'x' })
    expect(kept.vault).toEqual({ access: 'a2', refresh: 'r1', id: 'h.c2.s2', placeholders: { access: 'pa', refresh: 'pr', id: 'h.c2.omh-login-00' } })
    expect(keepRefreshed('{"error":"invalid_grant"}', vault)).toBeUndefined()
  })
})

describe('a login whose access token is a JWT', () => {
  const mark = `omh-login-${'ab'.repeat(16)}`
  const login: SecretBinding = { name: 'codex/default access token', placeholder: `h.c1.${mark}`, variable: 'omh-login-0-access', hosts: ['chatgpt.com'] }

  it('gets back a placeholder with the new claims, the same mark', () => {
    const vault = { access: 'h.c1.s1', refresh: 'r1', placeholders: { access: `h.c1.${mark}`, refresh: 'pr' } }
    const kept = keepRefreshed(JSON.stringify({ access_token: 'h.c2.s2', refresh_token: 'r2' }), vault)!
    expect(JSON.parse(kept.text)).toEqual({ access_token: `h.c2.${mark}`, refresh_token: 'pr' })
    expect(kept.vault.placeholders.access).toBe(`h.c2.${mark}`)
  })

  it('is swapped by its mark, whichever claims a harness still sends, and refused by its mark elsewhere', () => {
    const real = { 'omh-login-0-access': 'h.c2.real' }
    for (const sent of [`h.c1.${mark}`, `h.c0.${mark}`]) {
      expect(swapSecrets({ authorization: `Bearer ${sent}` }, '/', 'chatgpt.com', [login], real)).toEqual({ headers: { authorization: 'Bearer h.c2.real' }, target: '/' })
      expect(swapSecrets({ authorization: `Bearer ${sent}` }, '/', 'api.unbound.test', [login], real)).toEqual({ refused: login })
    }
  })
})

describe('swapping placeholders', () => {
  it('binds a pattern to a host, `*.` to the domain and below', () => {
    expect(hostBound('api.bound.test', 'api.bound.test')).toBe(true)
    expect(hostBound('api.bound.test', 'x.api.bound.test')).toBe(false)
    expect(hostBound('*.other.test', 'other.test')).toBe(true)
    expect(hostBound('*.other.test', 'a.b.other.test')).toBe(true)
    expect(hostBound('*.other.test', 'notother.test')).toBe(false)
  })

  it('puts the value in headers, the target and a Basic login toward a bound host', () => {
    const basic = `Basic ${Buffer.from(`x-access-token:${GH.placeholder}`).toString('base64')}`
    const out = swapSecrets({ 'x-token': GH.placeholder, authorization: basic, host: 'api.bound.test' }, `/q?t=${GH.placeholder}`, 'api.bound.test', [GH, OTHER], env)
    expect(out).toEqual({
      headers: { 'x-token': 'ghp_real_value', authorization: `Basic ${Buffer.from('x-access-token:ghp_real_value').toString('base64')}`, host: 'api.bound.test' },
      target: '/q?t=ghp_real_value',
    })
  })

  it('refuses a placeholder on its way to a host its secret is not bound to', () => {
    expect(swapSecrets({ authorization: `Bearer ${OTHER.placeholder}` }, '/', 'api.bound.test', [GH, OTHER], env)).toEqual({ refused: OTHER })
    expect(swapSecrets({}, `/?k=${GH.placeholder}`, 'evil.other.test', [GH, OTHER], env)).toEqual({ refused: GH })
  })
})

/** An egress proxy like the session's: tunnels to any name (all lead to `upstream`), but refuses `denied.test`. */
function egressProxy(upstream: () => number, seen: string[]): Server {
  const server = httpServer((_req, res) => res.writeHead(400).end())
  server.on('connect', (req, client: Socket, head) => {
    seen.push(req.url!)
    if (req.url!.startsWith('denied.test')) return client.end('HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: 14\r\n\r\nnot on the list')
    const up = netConnect(upstream(), '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n')
      up.write(head)
      up.pipe(client)
      client.pipe(up)
    })
  })
  return server
}

describe('the front of the credential proxy', () => {
  const session = makeAuthority()
  const real = makeAuthority()
  const received: { host: string; url: string; headers: IncomingHttpHeaders; body?: string }[] = []
  const tunnels: string[] = []
  const log = path.join(mkdtempSync(path.join(os.tmpdir(), 'omh-front-')), 'secrets.log')
  let upstream: Server
  let egress: Server
  let front: { port: number; close: () => void }
  const vault = path.join(path.dirname(log), 'vault.json')
  const LOGIN = { access: 'sk-ant-oat01-real-access', refresh: 'sk-ant-ort01-real-refresh', placeholders: { access: 'sk-ant-oat01-omh-login-aa', refresh: 'sk-ant-ort01-omh-login-bb' } }
  writeFileSync(vault, JSON.stringify(LOGIN))

  beforeAll(async () => {
    const certificate = issueServer(real, ['api.bound.test', 'api.unbound.test', 'a.other.test', 'api.login.test', 'auth.login.test'])
    upstream = httpsServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
      let body = ''
      req.on('data', (d) => (body += d))
      req.on('end', () => {
        received.push({ host: String(req.headers.host), url: req.url!, headers: req.headers, body })
        if (req.url === '/v1/oauth/token') return res.end(JSON.stringify({ access_token: 'sk-ant-oat01-new-access', refresh_token: 'sk-ant-ort01-new-refresh', expires_in: 3600 }))
        res.end(`hello from ${req.headers.host}`)
      })
    })
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
    egress = egressProxy(() => (upstream.address() as AddressInfo).port, tunnels)
    await new Promise<void>((resolve) => egress.listen(0, '127.0.0.1', resolve))
    const served = issueServer(session, ['api.bound.test', '*.other.test', 'api.login.test', 'auth.login.test'])
    front = await serveFront(
      {
        port: 0,
        egress: `127.0.0.1:${(egress.address() as AddressInfo).port}`,
        bindings: [GH, OTHER],
        logins: [{ name: 'claude/default', vault, hosts: ['api.login.test'], refreshUrl: 'https://auth.login.test/v1/oauth/token' }],
      },
      { ...env, [FRONT_CERT]: served.cert, [FRONT_KEY]: served.key },
      '127.0.0.1',
      { upstreamCa: real.cert, log },
    )
  })
  afterAll(() => {
    front.close()
    egress.close()
    upstream.close()
  })

  /** A client in the session: CONNECT through the front, TLS trusting `ca`, one request. */
  const get = (host: string, headers: Record<string, string>, ca: string, post?: { path: string; body: string }) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const tunnel = request({ host: '127.0.0.1', port: front.port, method: 'CONNECT', path: `${host}:443` })
      tunnel.on('connect', (answer, socket) => {
        if (answer.statusCode !== 200) return resolve({ status: answer.statusCode!, body: '' })
        const secure = tlsConnect({ socket, servername: host, ca })
        secure.on('error', reject)
        const req = request({ createConnection: () => secure, method: post ? 'POST' : 'GET', path: post?.path ?? '/data', headers: { host, ...headers } }, (res) => {
          let body = ''
          res.on('data', (d) => (body += d))
          res.on('end', () => resolve({ status: res.statusCode!, body }))
        })
        req.on('error', reject)
        req.end(post?.body)
      })
      tunnel.on('error', reject)
      tunnel.end()
    })

  it('sends the real value to the host the secret is bound to, which the session reached by trusting its own authority', async () => {
    const answer = await get('api.bound.test', { authorization: `Bearer ${GH.placeholder}` }, session.cert)
    expect(answer).toEqual({ status: 200, body: 'hello from api.bound.test' })
    expect(received.at(-1)!.headers.authorization).toBe('Bearer ghp_real_value')
  })

  it('passes any other tunnel through the egress proxy unread: the host gets the placeholder and nothing more', async () => {
    const answer = await get('api.unbound.test', { authorization: `Bearer ${GH.placeholder}` }, real.cert)
    expect(answer.status).toBe(200)
    expect(received.at(-1)).toMatchObject({ host: 'api.unbound.test', headers: { authorization: `Bearer ${GH.placeholder}` } })
    expect(tunnels).toContain('api.unbound.test:443')
  })

  it('refuses, and logs, a placeholder sent to a bound host its secret is not bound to', async () => {
    const before = received.length
    const answer = await get('a.other.test', { 'x-token': GH.placeholder }, session.cert)
    expect(answer.status).toBe(403)
    expect(answer.body).toContain('the secret GH_TOKEN may go only to api.bound.test, not to a.other.test')
    expect(received.length).toBe(before)
    expect(readFileSync(log, 'utf8')).toMatch(/^\d+\.\d{3} OMH_SECRET_REFUSED:GH_TOKEN 403 GET https:\/\/a\.other\.test:443\/data\n$/)
  })

  it('keeps a login outside: the access token on its API host, the refresh made with the real token, the new tokens kept and the placeholders handed back', async () => {
    const call = () => get('api.login.test', { authorization: `Bearer ${LOGIN.placeholders.access}` }, session.cert)
    expect((await call()).status).toBe(200)
    expect(received.at(-1)!.headers.authorization).toBe(`Bearer ${LOGIN.access}`)

    const body = JSON.stringify({ grant_type: 'refresh_token', refresh_token: LOGIN.placeholders.refresh, client_id: 'c' })
    const refreshed = await get('auth.login.test', { 'content-type': 'application/json' }, session.cert, { path: '/v1/oauth/token', body })
    expect(refreshed.status).toBe(200)
    expect(JSON.parse(received.at(-1)!.body!)).toEqual({ grant_type: 'refresh_token', refresh_token: LOGIN.refresh, client_id: 'c' })
    expect(JSON.parse(refreshed.body)).toEqual({ access_token: LOGIN.placeholders.access, refresh_token: LOGIN.placeholders.refresh, expires_in: 3600 })
    expect(JSON.parse(readFileSync(vault, 'utf8'))).toEqual({ access: 'sk-ant-oat01-new-access', refresh: 'sk-ant-ort01-new-refresh', placeholders: LOGIN.placeholders })

    expect((await call()).status).toBe(200)
    expect(received.at(-1)!.headers.authorization).toBe('Bearer sk-ant-oat01-new-access')
    // The refresh token goes to the token endpoint alone.
    const misplaced = await get('api.login.test', { 'x-refresh': LOGIN.placeholders.refresh }, session.cert)
    expect(misplaced.status).toBe(403)
    expect(misplaced.body).toContain('claude/default refresh token may go only to auth.login.test')
  })

  it('hands on the egress proxy’s refusal of a bound host', async () => {
    const answer = await get('denied.test', {}, session.cert)
    expect(answer.status).toBe(403)
  })
})
