import { describe, expect, it } from 'vitest'
import { egressProbes } from './egress-check.js'

describe('the egress self-test', () => {
  it('asks each allow rule of the proxy (a subdomain for a pattern), and holds the fixed set closed, through the proxy and past it', () => {
    const probes = egressProbes(['api.example.com', '*.pkg.test:8443'], 'allowlist', ['10.89.0.5', 'fd00::5'])
    expect(probes.filter((p) => p.expect === 'open')).toEqual([
      { name: 'allowed api.example.com', rule: '[network] allow "api.example.com"', way: 'proxy', target: 'api.example.com:443', expect: 'open' },
      { name: 'allowed *.pkg.test:8443', rule: '[network] allow "*.pkg.test:8443"', way: 'proxy', target: 'omh-doctor-probe.pkg.test:8443', expect: 'open' },
    ])
    const closed = probes.filter((p) => p.expect === 'closed').map((p) => `${p.way} ${p.target}`)
    expect(closed).toEqual([
      'proxy omh-doctor-unlisted.invalid:443',
      'proxy 169.254.169.254:80',
      'proxy localhost:3128',
      'proxy 127.0.0.1:22',
      'proxy [::1]:80',
      'direct 169.254.169.254:80',
      'direct 1.1.1.1:443',
      'direct [2606:4700:4700::1111]:443',
      'direct gateway:80',
      'direct 10.89.0.5:22',
      'direct [fd00::5]:22',
    ])
  })

  it('has nothing to hold closed for an open session, and no proxy to ask for one with no network', () => {
    expect(egressProbes(['a.test'], 'open')).toEqual([])
    const none = egressProbes(['a.test'], 'none')
    expect(none.every((p) => p.way === 'direct' && p.expect === 'closed')).toBe(true)
  })
})
