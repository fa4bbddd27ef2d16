import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { isOmhError, type RuntimePlugin } from '@omh/plugin-api'
import { allowRules, ensureEgress, parseDecisions } from './egress.js'

describe('egress', () => {
  it('allows each pattern on its port (80 and 443 without one), subdomains by *., addresses by dst, never a forbidden address', () => {
    expect(allowRules(['api.example.com', '*.example.org:8443', '10.0.0.5:80'])).toBe(
      [
        '# Written by omh at each launch; edits are replaced.',
        'acl host0 dstdomain -n api.example.com',
        'acl port0 port 80 443',
        'http_access allow host0 port0 !forbidden',
        'acl host1 dstdomain -n .example.org',
        'acl port1 port 8443',
        'http_access allow host1 port1 !forbidden',
        'acl host2 dst 10.0.0.5',
        'acl port2 port 80',
        'http_access allow host2 port2 !forbidden',
        '',
      ].join('\n'),
    )
  })

  it('reads decisions from the log: host, port, method, allowed or not', () => {
    const log = '1796300897.123 TCP_MISS 200 GET http://web.test/x\n1796300902 TCP_TUNNEL 200 CONNECT web.test:8443\n1796300919 TCP_DENIED 403 CONNECT localhost:3128\n'
    expect(parseDecisions(log)).toEqual([
      { time: new Date(1796300897123).toISOString(), allowed: true, method: 'GET', host: 'web.test', port: 80, status: 200 },
      { time: new Date(1796300902000).toISOString(), allowed: true, method: 'CONNECT', host: 'web.test', port: 8443, status: 200 },
      { time: new Date(1796300919000).toISOString(), allowed: false, method: 'CONNECT', host: 'localhost', port: 3128, status: 403 },
    ])
  })

  it('refuses, naming the setting, on an engine that cannot make networks: never runs open', async () => {
    const runtime = { engine: 'plain' } as RuntimePlugin
    const failure = await ensureEgress({
      runtime,
      context: { env: {}, progress: () => undefined, verbose: false },
      container: 'omh-r-s01',
      label: 'r-s01',
      dir: path.join(mkdtempSync(path.join(os.tmpdir(), 'omh-egress-')), 'egress'),
      egress: { mode: 'allowlist', allow: [], file: '/home/u/.omh/settings.toml' },
      image: { from: 'debian' },
    }).catch((error: unknown) => error)
    expect(isOmhError(failure) && failure.code).toBe('EGRESS_UNSUPPORTED')
    expect(String((failure as Error).message)).toContain('plain cannot give the session a network')
  })
})
