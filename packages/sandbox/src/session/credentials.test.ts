import { request } from 'node:http'
import { describe, expect, it } from 'vitest'
import { forwardHeaders, serveRoute, type CredentialRoute } from './credential-proxy.js'
import { PLACEHOLDER, keptKeys } from './credentials.js'

const anthropic = { variable: 'ANTHROPIC_API_KEY', base_url: 'ANTHROPIC_BASE_URL', header: 'x-api-key', upstream: 'https://api.anthropic.com' }
const openai = { variable: 'OPENAI_API_KEY', base_url: 'OPENAI_BASE_URL', path: '/v1', header: 'Authorization', prefix: 'Bearer ', upstream: 'https://api.openai.com' }

describe('keys kept outside', () => {
  it('routes only the keys the host holds, giving the harness a placeholder and the proxy address', () => {
    expect(keptKeys({ keys: [anthropic, openai] }, () => undefined)).toBeUndefined()
    const kept = keptKeys({ keys: [anthropic, openai] }, (name) => (name === 'OPENAI_API_KEY' ? 'sk-real' : undefined))!
    expect(kept.env).toEqual({ OPENAI_API_KEY: PLACEHOLDER, OPENAI_BASE_URL: 'http://omh-creds:4481/v1' })
    expect(kept.keys).toEqual({ OPENAI_API_KEY: 'sk-real' })
    expect(kept.routes).toEqual([{ port: 4481, upstream: 'https://api.openai.com', header: 'Authorization', prefix: 'Bearer ', variable: 'OPENAI_API_KEY' }])
    expect(JSON.stringify(kept.env)).not.toContain('sk-real')
  })

  it('points a harness that reads no base URL variable at the proxy through its arguments', () => {
    const codex = { variable: 'OPENAI_API_KEY', args: ['-c', 'p={base_url="{url}"}'], path: '/v1', header: 'authorization', prefix: 'Bearer ', upstream: 'https://api.openai.com' }
    const kept = keptKeys({ keys: [anthropic, codex] }, (name) => (name === 'OPENAI_API_KEY' ? 'sk-real' : undefined))!
    expect(kept.env).toEqual({ OPENAI_API_KEY: PLACEHOLDER })
    expect(kept.args).toEqual(['-c', 'p={base_url="http://omh-creds:4481/v1"}'])
    expect(keptKeys({ keys: [anthropic, codex] }, (name) => (name === 'ANTHROPIC_API_KEY' ? 'sk-real' : undefined))!.args).toEqual([])
    const opencode = { ...codex, args: undefined, env: { OPENCODE_CONFIG_CONTENT: '{"provider":{"openai":{"options":{"baseURL":"{url}"}}}}' } }
    expect(keptKeys({ keys: [anthropic, opencode] }, () => 'sk-real')!.env).toEqual({
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
    const { port, close } = await serveRoute({ port: 0, upstream: 'https://127.0.0.1:1', header: 'x-api-key', prefix: '', variable: 'K' }, { K: key }, '127.0.0.1')
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
})
