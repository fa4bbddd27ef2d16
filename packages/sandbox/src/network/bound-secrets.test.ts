import { describe, expect, it } from 'vitest'
import type { McpServer } from '@omh/plugin-api'
import { isOmhError } from '@omh/plugin-api'
import { boundSecrets, bundleKeeper, GUEST_AUTHORITY, GUEST_BUNDLE, secretHosts, withBound, withPlaceholders } from './bound-secrets.js'
import { makeAuthority } from './authority.js'

const layer = (secrets: Record<string, { hosts: string[] }>) => ({ name: 'personal' as const, file: '/h/settings.toml', settings: { secrets } })
const remote = (name: string, url: string, headers: Record<string, string>): McpServer => ({ name, transport: 'http', url, headers })
const TOKEN = 'omh-credential-proxy-0123456789abcdef0123456789abcdef'

describe('secrets bound to hosts', () => {
  it("binds [secrets] of every layer, and a remote MCP server's header secret to that server's host", () => {
    const hosts = secretHosts({ layers: [layer({ GH_TOKEN: { hosts: ['api.github.com'] } }), layer({ GH_TOKEN: { hosts: ['*.GitHub.com'] } })] }, [
      remote('tracker', 'https://mcp.tracker.example/mcp', { Authorization: 'Bearer <secret TRACKER_TOKEN>', 'X-Team': 'core' }),
      remote('gh', 'https://api.githubcopilot.com/mcp/', { Authorization: 'Bearer <secret GH_TOKEN>' }),
      { name: 'local', transport: 'stdio', command: 'x', args: [], env: { SENTRY: '<secret SENTRY_TOKEN>' } },
    ])
    expect(Object.fromEntries(hosts)).toEqual({
      GH_TOKEN: { hosts: ['api.github.com', '*.github.com', 'api.githubcopilot.com'], declared: true },
      TRACKER_TOKEN: { hosts: ['mcp.tracker.example'], declared: false },
    })
  })

  it('gives the session placeholders, the front as its proxy and the authorities to trust; the values go to the proxy alone', () => {
    const hosts = new Map([
      ['GH_TOKEN', { hosts: ['api.github.com'], declared: true }],
      ['TRACKER_TOKEN', { hosts: ['mcp.tracker.example'], declared: false }],
    ])
    const values: Record<string, string> = { GH_TOKEN: 'ghp_real', TRACKER_TOKEN: 'tr_real' }
    const bound = boundSecrets(hosts, (n) => values[n], TOKEN, (n) => n, '/h/secrets.toml')!
    const gh = bound.placeholders.get('GH_TOKEN')!
    expect(gh).toMatch(/^omh-secret-[0-9a-f]{32}$/)
    // The same session gives the same placeholder; another session another.
    expect(boundSecrets(hosts, (n) => values[n], TOKEN, (n) => n, '')!.placeholders.get('GH_TOKEN')).toBe(gh)
    expect(boundSecrets(hosts, (n) => values[n], TOKEN.replace('0', '1'), (n) => n, '')!.placeholders.get('GH_TOKEN')).not.toBe(gh)
    expect(bound.env).toMatchObject({ GH_TOKEN: gh, HTTPS_PROXY: 'http://omh-creds:4490', SSL_CERT_FILE: GUEST_BUNDLE, NODE_EXTRA_CA_CERTS: GUEST_AUTHORITY })
    // A header secret is no variable of the session's own: only where the server's header names it.
    expect(bound.env).not.toHaveProperty('TRACKER_TOKEN')
    expect(JSON.stringify(bound.env)).not.toMatch(/ghp_real|tr_real/)
    expect(bound.values).toEqual({ OMH_SECRET_GH_TOKEN: 'ghp_real', OMH_SECRET_TRACKER_TOKEN: 'tr_real' })
    expect(bound.front).toEqual({
      port: 4490,
      egress: 'omh-egress:3128',
      bindings: [
        { name: 'GH_TOKEN', placeholder: gh, variable: 'OMH_SECRET_GH_TOKEN', hosts: ['api.github.com'] },
        { name: 'TRACKER_TOKEN', placeholder: bound.placeholders.get('TRACKER_TOKEN'), variable: 'OMH_SECRET_TRACKER_TOKEN', hosts: ['mcp.tracker.example'] },
      ],
    })
    expect(withPlaceholders({ OMH_MCP_TRACKER_AUTHORIZATION: 'Bearer <secret TRACKER_TOKEN>', SENTRY: '<secret SENTRY_TOKEN>' }, bound.placeholders)).toEqual({
      OMH_MCP_TRACKER_AUTHORIZATION: `Bearer ${bound.placeholders.get('TRACKER_TOKEN')}`,
      SENTRY: '<secret SENTRY_TOKEN>',
    })
  })

  it('stops the launch when a bound secret has no value', () => {
    try {
      boundSecrets(new Map([['GH_TOKEN', { hosts: ['api.github.com'], declared: true }]]), () => undefined, TOKEN, () => '[secrets.GH_TOKEN]', '/h/secrets.toml')
      expect.unreachable()
    } catch (error) {
      expect(isOmhError(error) && error.code).toBe('SECRET_MISSING')
    }
    expect(boundSecrets(new Map(), () => 'x', TOKEN, () => '', '')).toBeUndefined()
  })

  it('serves the kept keys and the bound secrets from one proxy', () => {
    const bound = boundSecrets(new Map([['GH_TOKEN', { hosts: ['api.github.com'], declared: true }]]), () => 'ghp_real', TOKEN, () => '', '')!
    const authority = makeAuthority()
    const keys = { env: { ANTHROPIC_API_KEY: TOKEN }, args: [], routes: [], keys: { ANTHROPIC_API_KEY: 'sk-real' }, token: TOKEN }
    expect(withBound(keys, bound, authority, TOKEN)).toMatchObject({ env: { ANTHROPIC_API_KEY: TOKEN, GH_TOKEN: bound.placeholders.get('GH_TOKEN') }, keys: { ANTHROPIC_API_KEY: 'sk-real', OMH_SECRET_GH_TOKEN: 'ghp_real' }, front: bound.front, authority })
    expect(withBound(keys, undefined, undefined, TOKEN)).toBe(keys)
  })

  it("makes the bundle from the image's own authorities and the session's, then keeps the container", () => {
    const argv = bundleKeeper(['/opt/omh/libexec/sleep', 'infinity'])
    expect(argv.slice(0, 2)).toEqual(['sh', '-c'])
    expect(argv.slice(3)).toEqual(['omh-keeper', '/opt/omh/libexec/sleep', 'infinity'])
    expect(argv[2]).toContain(`cat ${GUEST_AUTHORITY} >> ${GUEST_BUNDLE}.new`)
    expect(argv[2]).toMatch(/exec "\$@"$/)
  })
})
