import { request } from 'node:http'
import { describe, expect, it } from 'vitest'
import { carriesToken, forwardHeaders, serveRoute, sessionAddresses, TOKEN_VARIABLE, type CredentialRoute } from './credential-proxy.js'
import { proxiedKeys } from './credentials.js'

const PLACEHOLDER = 'omh-credential-proxy-0123456789abcdef0123456789abcdef'

const anthropic = { variable: 'ANTHROPIC_API_KEY', base_url: 'ANTHROPIC_BASE_URL', header: 'x-api-key', upstream: 'https://api.anthropic.com' }
const openai = { variable: 'OPENAI_API_KEY', base_url: 'OPENAI_BASE_URL', path: '/v1', header: 'Authorization', prefix: 'Bearer ', upstream: 'https://api.openai.com' }

describe('keys kept outside', () => {
  it('routes only the keys the host holds, giving the harness a placeholder and the proxy address', () => {
    expect(proxiedKeys({ keys: [anthropic, openai] }, () => undefined, PLACEHOLDER)).toBeUndefined()
    const kept = proxiedKeys({ keys: [anthropic, openai] }, (name) => (name === 'OPENAI_API_KEY' ? 'sk-real' : undefined), PLACEHOLDER)!
    expect(kept.env).toEqual({ OPENAI_API_KEY: PLACEHOLDER, OPENAI_BASE_URL: 'http://omh-creds:4481/v1' })
    expect(kept.keys).toEqual({ OPENAI_API_KEY: 'sk-real' })
    expect(kept.routes).toEqual([{ port: 4481, upstream: 'https://api.openai.com', header: 'Authorization', prefix: 'Bearer ', variable: 'OPENAI_API_KEY' }])
    expect(JSON.stringify(kept.env)).not.toContain('sk-real')
  })

  it('points a harness that reads no base URL variable at the proxy through its arguments', () => {
    const codex = { variable: 'OPENAI_API_KEY', args: ['-c', 'p={base_url="{url}"}'], path: '/v1', header: 'authorization', prefix: 'Bearer ', upstream: 'https://api.openai.com' }
    const kept = proxiedKeys({ keys: [anthropic, codex] }, (name) => (name === 'OPENAI_API_KEY' ? 'sk-real' : undefined), PLACEHOLDER)!
    expect(kept.env).toEqual({ OPENAI_API_KEY: PLACEHOLDER })
    expect(kept.args).toEqual(['-c', 'p={base_url="http://omh-creds:4481/v1"}'])
    expect(proxiedKeys({ keys: [anthropic, codex] }, (name) => (name === 'ANTHROPIC_API_KEY' ? 'sk-real' : undefined), PLACEHOLDER)!.args).toEqual([])
    const opencode = { ...codex, args: undefined, env: { OPENCODE_CONFIG_CONTENT: '{"provider":{"openai":{"options":{"baseURL":"{url}"}}}}' } }
    expect(proxiedKeys({ keys: [anthropic, opencode] }, () => 'sk-real', PLACEHOLDER)!.env).toEqual({
      ANTHROPIC_API_KEY: PLACEHOLDER,
      ANTHROPIC_BASE_URL: 'http://omh-creds:4480',
      OPENAI_API_KEY: PLACEHOLDER,
      OPENCODE_CONFIG_CONTENT: '{"provider":{"openai":{"options":{"baseURL":"http://omh-creds:4481/v1"}}}}',
    })
  })

  it('puts the key in the named header in place of what the harness sent, and drops hop-by-hop headers', () => {
    const route: CredentialRoute = { port: 1, upstream: 'https://h', header: 'Authorization', prefix: 'Bearer ', variable: 'K' }
    const out = forwardHeaders({ authorization: `Bearer ${PLACEHOLDER}`, host: 'omh-creds:4480', connection: 'keep-alive', 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, route, 'sk-real')
    expect(out).toEqual({ authorization: 'Bearer sk-real', 'content-type': 'application/json', 'anthropic-version': '2023-06-01' })
  })

  it('forwards over TLS only', () => {
    expect(() => serveRoute({ port: 0, upstream: 'http://api.example', header: 'x-api-key', prefix: '', variable: 'K' }, {})).toThrow(/TLS only/)
  })

  it('answers a failed upstream with the reason, never the key', async () => {
    const key = 'sk-never-shown-3f9a'
    const { port, close } = await serveRoute({ port: 0, upstream: 'https://127.0.0.1:1', header: 'x-api-key', prefix: '', variable: 'K' }, { K: key, [TOKEN_VARIABLE]: PLACEHOLDER }, '127.0.0.1')
    try {
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const q = request({ host: '127.0.0.1', port, path: '/v1/messages', method: 'POST', headers: { 'x-api-key': PLACEHOLDER } }, (s) => {
          let text = ''
          s.on('data', (d) => (text += d))
          s.on('end', () => resolve({ status: s.statusCode ?? 0, text: `${JSON.stringify(s.headers)}${text}` }))
        })
        q.on('error', reject)
        q.end('{}')
      })
      expect(answer.status).toBe(502)
      expect(answer.text).toContain('127.0.0.1:1')
      expect(answer.text).not.toContain(key)
    } finally {
      close()
    }
  })

  it("refuses, before reaching upstream, any request that lacks the session's placeholder", async () => {
    const route: CredentialRoute = { port: 0, upstream: 'https://127.0.0.1:1', header: 'authorization', prefix: 'Bearer ', variable: 'K' }
    expect(carriesToken({ authorization: `Bearer ${PLACEHOLDER}` }, route, PLACEHOLDER)).toBe(true)
    expect(carriesToken({ authorization: PLACEHOLDER }, route, PLACEHOLDER)).toBe(true)
    expect(carriesToken({ authorization: 'Bearer omh-credential-proxy-holds-the-key' }, route, PLACEHOLDER)).toBe(false)
    expect(carriesToken({}, route, PLACEHOLDER)).toBe(false)
    expect(carriesToken({ authorization: 'Bearer ' }, route, undefined)).toBe(false)
    for (const env of [{ K: 'sk-real', [TOKEN_VARIABLE]: PLACEHOLDER }, { K: 'sk-real' }]) {
      const { port, close } = await serveRoute(route, env, '127.0.0.1')
      try {
        for (const headers of [{}, { authorization: 'Bearer sk-guess' }, { authorization: 'Bearer omh-credential-proxy-holds-the-key' }]) {
          const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
            const q = request({ host: '127.0.0.1', port, path: '/v1/models', headers }, (s) => {
              let text = ''
              s.on('data', (d) => (text += d))
              s.on('end', () => resolve({ status: s.statusCode ?? 0, text }))
            })
            q.on('error', reject)
            q.end()
          })
          expect(answer.status).toBe(403)
          expect(answer.text).toContain("serves only its session")
          expect(answer.text).not.toContain('sk-real')
        }
      } finally {
        close()
      }
    }
  })

  it("listens on the session network's addresses it has at start, never loopback or a link-local one", () => {
    const nic = (address: string, family: 'IPv4' | 'IPv6', internal = false) => ({ address, family, internal, netmask: '', mac: '', cidr: null, ...(family === 'IPv6' ? { scopeid: 0 } : {}) })
    expect(sessionAddresses({ lo: [nic('127.0.0.1', 'IPv4', true), nic('::1', 'IPv6', true)], eth0: [nic('10.89.1.5', 'IPv4'), nic('fe80::1', 'IPv6'), nic('fd00::5', 'IPv6')] } as never)).toEqual(['10.89.1.5', 'fd00::5'])
  })
})
