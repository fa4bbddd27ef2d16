import { mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { isOmhError, type RuntimePlugin } from '@omh/plugin-api'
import { fakeRuntime } from '@omh/test-utils'
import { allowRules, applyAllowlist, deniedDestinations, egressDir, ensureEgress, freshNetwork, startEgress, networkName, parseDecisions, recordedNetwork, removeEgress, watchAllowlist } from './egress.js'

describe('egress', () => {
  it('allows each pattern on its port (80 and 443 without one), subdomains by *., addresses by dst, a forbidden address refused before', () => {
    expect(allowRules(['api.example.com', '*.example.org:8443', '10.0.0.5:80'])).toBe(
      [
        '# Written by omh at each launch; edits are replaced.',
        'acl host0 dstdomain -n api.example.com',
        'acl port0 port 80 443',
        'http_access deny host0 port0 forbidden',
        'http_access allow host0 port0',
        'acl host1 dstdomain -n .example.org',
        'acl port1 port 8443',
        'http_access deny host1 port1 forbidden',
        'http_access allow host1 port1',
        'acl host2 dst 10.0.0.5',
        'acl port2 port 80',
        'http_access deny host2 port2 forbidden',
        'http_access allow host2 port2',
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

  it("reports a request the proxy could not read as refused, never as allowed to a host like '/' or a port like NaN", () => {
    const log = [
      '1796300920.000 NONE_NONE 400 NONE error:invalid-request',
      '1796300921.000 TAG_NONE 400 CONNECT error:invalid-request',
      '1796300922.000 NONE_NONE 400 GET /',
      '1796300923.000 TCP_MISS 404 GET http://web.test/missing',
    ].join('\n')
    expect(parseDecisions(log)).toEqual([
      { time: new Date(1796300920000).toISOString(), allowed: false, method: 'NONE', host: 'error:invalid-request', port: 0, status: 400 },
      { time: new Date(1796300921000).toISOString(), allowed: false, method: 'CONNECT', host: 'error:invalid-request', port: 0, status: 400 },
      { time: new Date(1796300922000).toISOString(), allowed: false, method: 'GET', host: '/', port: 0, status: 400 },
      { time: new Date(1796300923000).toISOString(), allowed: true, method: 'GET', host: 'web.test', port: 80, status: 404 },
    ])
  })

  it('lists each refused destination once, most refused first, with when it was last refused', () => {
    const log = ['1796300900 TCP_DENIED 403 CONNECT a.test:443', '1796300901 TCP_MISS 200 GET http://ok.test/', '1796300902 TCP_DENIED 403 CONNECT b.test:443', '1796300903 TCP_DENIED 403 CONNECT a.test:443'].join('\n')
    expect(deniedDestinations(parseDecisions(log))).toEqual([
      { host: 'a.test', port: 443, count: 2, last: new Date(1796300903000).toISOString() },
      { host: 'b.test', port: 443, count: 1, last: new Date(1796300902000).toISOString() },
    ])
  })

  it('refuses, naming the setting, on an engine that cannot make networks: never runs open', async () => {
    const runtime = { engine: 'plain' } as RuntimePlugin
    const failure = await ensureEgress({
      runtime,
      context: { env: {}, progress: () => undefined, verbose: false },
      container: 'omh-r-s01',
      session: 's01', label: 'r-s01',
      dir: path.join(mkdtempSync(path.join(os.tmpdir(), 'omh-egress-')), 'egress'),
      egress: { mode: 'allowlist', allow: [], file: '/home/u/.omh/settings.toml' },
      image: { from: 'debian' },
      fresh: true,
    }).catch((error: unknown) => error)
    expect(isOmhError(failure) && failure.code).toBe('EGRESS_UNSUPPORTED')
    expect(String((failure as Error).message)).toContain('plain cannot give the session a network')
  })

  it('names a network per container start, never one used before', () => {
    const names = new Set(Array.from({ length: 50 }, () => freshNetwork('omh-r-s01')))
    expect(names.size).toBe(50)
    for (const name of names) expect(name).toMatch(/^omh-r-s01-net-[0-9a-f]{8}$/)
    expect(networkName('omh-r-s01')).toBe('omh-r-s01-net')
  })

  it('gives a new container a new network after taking the old one away, endpoints first, and reuses it for a running one without making it again', async () => {
    const { runtime, calls } = recordingRuntime()
    const dir = egressDir(mkdtempSync(path.join(os.tmpdir(), 'omh-egress-')))
    const up = (fresh: boolean) =>
      ensureEgress({ runtime, context, container: 'omh-r-s01', session: 's01', label: 'r-s01', dir, egress: { mode: 'allowlist', allow: [], file: 'settings.toml' }, image: { from: 'debian' }, fresh })
    const first = await up(true)
    expect(first).toMatch(/^omh-r-s01-net-[0-9a-f]{8}$/)
    expect(await recordedNetwork(dir)).toBe(first)
    // A first container has no network to take away.
    expect(calls.filter((c) => /^(rm|disconnect)/.test(c))).toEqual([])
    expect(calls).toContain(`create --internal ${first}`)
    expect(calls).toContain(`connect ${first} omh-r-s01-egress`)

    // The proxy runs on it, so the engine keeps it: nothing is made.
    calls.length = 0
    expect(await up(false)).toBe(first)
    expect(calls.filter((c) => /^(create|rm|disconnect)/.test(c))).toEqual([])
    // A proxy gone since is started again on the recorded network, made if need be.
    await runtime.down('omh-r-s01-egress', context)
    calls.length = 0
    expect(await up(false)).toBe(first)
    expect(calls.filter((c) => /^(create|rm|disconnect)/.test(c))).toEqual([`create --internal ${first}`])

    calls.length = 0
    const second = await up(true)
    expect(second).not.toBe(first)
    expect(calls.slice(0, 6)).toEqual([
      'down omh-r-s01-egress',
      'down omh-r-s01-creds',
      `disconnect -f ${first} omh-r-s01`,
      `disconnect -f ${first} omh-r-s01-egress`,
      `disconnect -f ${first} omh-r-s01-creds`,
      `rm ${first}`,
    ])

    calls.length = 0
    await removeEgress(runtime, 'omh-r-s01', dir, context)
    expect(calls).toEqual([
      'down omh-r-s01-egress',
      'down omh-r-s01-creds',
      `disconnect -f ${second} omh-r-s01`,
      `disconnect -f ${second} omh-r-s01-egress`,
      `disconnect -f ${second} omh-r-s01-creds`,
      `rm ${second}`,
      'disconnect -f omh-r-s01-net omh-r-s01',
      'disconnect -f omh-r-s01-net omh-r-s01-egress',
      'disconnect -f omh-r-s01-net omh-r-s01-creds',
      'rm omh-r-s01-net',
    ])
    expect(await recordedNetwork(dir)).toBeUndefined()
  })

  it('leaves a running proxy alone when its rules are the ones in force, and has it reread them when they changed', async () => {
    const { runtime, calls } = recordingRuntime()
    const dir = egressDir(mkdtempSync(path.join(os.tmpdir(), 'omh-egress-')))
    const up = (fresh: boolean, allow: string[] = []) =>
      ensureEgress({ runtime, context, container: 'omh-r-s01', session: 's01', label: 'r-s01', dir, egress: { mode: 'allowlist', allow, file: 'settings.toml' }, image: { from: 'debian' }, fresh })
    await up(true)
    calls.length = 0
    await up(false)
    expect(calls.filter((c) => c.startsWith('exec'))).toEqual([])
    await up(false, ['more.test'])
    expect(calls.filter((c) => c.startsWith('exec'))).toEqual(['exec omh-r-s01-egress squid -k reconfigure -f /omh/egress/squid.conf'])
    expect(readFileSync(path.join(dir, 'allow.conf'), 'utf8')).toBe(allowRules(['more.test']))
  })

  it('asks whether a proxy runs and whether its image is there while the network is made, and starts the proxy after', async () => {
    const { runtime, calls } = recordingRuntime()
    const asked: string[] = []
    const base = runtime as unknown as Record<string, unknown> & { networks: Record<string, unknown> }
    const inspect = base['inspect'] as RuntimePlugin['inspect'] & {}
    Object.assign(base, {
      inspect: (name: string, c: never) => (asked.push(`inspect ${name}`), inspect(name, c)),
      hasImage: async (tag: string) => (asked.push(`hasImage ${tag.split(':')[0]}`), true),
    })
    const create = base.networks['create'] as (name: string, o: { internal: boolean }) => Promise<void>
    base.networks['create'] = async (name: string, o: { internal: boolean }) => {
      // The questions were asked before the network's creation answers.
      const by = Date.now() + 5000
      while (asked.length < 2 && Date.now() < by) await new Promise((resolve) => setTimeout(resolve, 5))
      asked.push('created')
      return create(name, o)
    }
    const dir = egressDir(mkdtempSync(path.join(os.tmpdir(), 'omh-egress-')))
    const started = await startEgress({ runtime, context, container: 'omh-r-s01', session: 's01', label: 'r-s01', dir, egress: { mode: 'allowlist', allow: [], file: 'settings.toml' }, image: { from: 'debian' }, fresh: true })
    expect(asked).toEqual(['inspect omh-r-s01-egress', 'hasImage localhost/omh-egress', 'created'])
    await started.ready
    expect(calls).toEqual([`create --internal ${started.network}`, 'up omh-r-s01-egress', `connect ${started.network} omh-r-s01-egress`])
  })

  it('removes what it can even when the engine refuses a disconnect or a network removal', async () => {
    const { runtime, calls } = recordingRuntime({ failing: /^(disconnect|rm) / })
    const dir = egressDir(mkdtempSync(path.join(os.tmpdir(), 'omh-egress-')))
    await expect(removeEgress(runtime, 'omh-r-s02', dir, context)).resolves.toBeUndefined()
    expect(calls[0]).toBe('down omh-r-s02-egress')
    expect(calls).toContain('rm omh-r-s02-net')
  })
})

const context = { env: {}, progress: () => undefined, verbose: false }

/** A runtime that records what it is asked, in the engine's words, and holds containers by name. */
describe('a live allowlist', () => {
  it('hands the running proxy the allowlist an edited settings file gives, keeps the one in force when the edit is not valid, and stops when told', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'omh-egress-watch-'))
    const settings = path.join(root, 'home', 'settings.toml')
    mkdirSync(path.dirname(settings))
    const dir = egressDir(root)
    mkdirSync(dir)
    writeFileSync(path.join(dir, 'allow.conf'), allowRules(['a.test']))
    const execs: string[] = []
    const runtime = {
      engine: 'recording',
      async exec(name: string, argv: readonly string[]) {
        execs.push(`${name} ${argv.join(' ')}`)
        return { exitCode: 0, stdout: '', stderr: '' }
      },
    } as unknown as RuntimePlugin
    const heard: unknown[] = []
    const next = () => new Promise<void>((resolve) => (wake = resolve))
    let wake = () => undefined as void
    // An editor's save: a new file renamed over the old one.
    const save = (text: string) => {
      writeFileSync(`${settings}.swp`, text)
      renameSync(`${settings}.swp`, settings)
    }
    const stop = watchAllowlist({
      runtime,
      context: { env: {}, progress: () => undefined, verbose: false },
      container: 'omh-r-s01',
      dir,
      files: [settings, path.join(root, 'nowhere', 'settings.toml')],
      allow: async () => JSON.parse(readFileSync(settings, 'utf8')) as string[],
      heard: (outcome) => {
        heard.push(outcome)
        wake()
      },
    })
    try {
      let arrived = next()
      save('["a.test", "b.test:8443"]')
      await arrived
      expect(heard.at(-1)).toEqual({ ok: true, allow: ['a.test', 'b.test:8443'] })
      expect(readFileSync(path.join(dir, 'allow.conf'), 'utf8')).toBe(allowRules(['a.test', 'b.test:8443']))
      expect(execs).toEqual(['omh-r-s01-egress squid -k reconfigure -f /omh/egress/squid.conf'])

      arrived = next()
      save('["a.test", ')
      await arrived
      expect(heard.at(-1)).toMatchObject({ ok: false })
      expect(readFileSync(path.join(dir, 'allow.conf'), 'utf8')).toBe(allowRules(['a.test', 'b.test:8443']))
      expect(execs).toHaveLength(1)
    } finally {
      stop()
    }
    save('["c.test"]')
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect(heard).toHaveLength(2)
  })
  it('lets two writers apply at once (the session\'s watch and `omh sessions allow`), both succeeding, the file whole', async () => {
    const dir = egressDir(mkdtempSync(path.join(os.tmpdir(), 'omh-egress-both-')))
    mkdirSync(dir)
    writeFileSync(path.join(dir, 'allow.conf'), allowRules(['a.test']))
    const runtime = { engine: 'recording', exec: async () => ({ exitCode: 0, stdout: '', stderr: '' }) } as unknown as RuntimePlugin
    const heard: { ok: boolean }[] = []
    const apply = (allow: string[]) => applyAllowlist({ runtime, context, container: 'omh-r-s01', dir, allow: async () => allow, heard: (o) => heard.push(o) })
    await Promise.all([apply(['a.test', 'b.test']), apply(['a.test', 'b.test']), apply(['a.test', 'c.test'])])
    expect(heard).toEqual([{ ok: true, allow: expect.any(Array) }, { ok: true, allow: expect.any(Array) }, { ok: true, allow: expect.any(Array) }])
    expect([allowRules(['a.test', 'b.test']), allowRules(['a.test', 'c.test'])]).toContain(readFileSync(path.join(dir, 'allow.conf'), 'utf8'))
  })
})

describe('a copied proxy\'s rules', () => {
  it('keeps the rules in force, on the host as in the volume, when the volume cannot be refilled', async () => {
    const runtime = fakeRuntime({ ways: ['copied'], networks: true })
    const dir = egressDir(mkdtempSync(path.join(os.tmpdir(), 'omh-egress-')))
    const egress = { mode: 'allowlist' as const, allow: ['a.test'], file: 'settings.toml' }
    await ensureEgress({ runtime, context, container: 'omh-r-s01', session: 's01', label: 'r-s01', dir, egress, image: { from: 'debian' }, fresh: true, copied: { labels: { 'omh.session': 's01' } } })
    const volume = runtime.volumeStore.get('omh-r-s01-egress-rules')!
    expect(volume.labels).toEqual({ 'omh.session': 's01', 'omh.egress': 'r-s01' })
    const held = volume.archive
    runtime.volumes!.put = async () => {
      throw new Error('the engine went away')
    }
    const heard: { ok: boolean }[] = []
    await applyAllowlist({ runtime, context, container: 'omh-r-s01', dir, allow: async () => ['a.test', 'b.test'], heard: (o) => heard.push(o) })
    expect(heard).toMatchObject([{ ok: false }])
    expect(readFileSync(path.join(dir, 'allow.conf'), 'utf8')).toBe(allowRules(['a.test']))
    expect(volume.archive).toBe(held)
    expect(runtime.captured.filter((c) => c.argv[0] === 'squid')).toEqual([])
  })
})

function recordingRuntime(options: { failing?: RegExp } = {}) {
  const calls: string[] = []
  const running = new Set<string>()
  const call = async (line: string) => {
    calls.push(line)
    if (options.failing?.test(line)) throw new Error(`refused: ${line}`)
  }
  const runtime = {
    engine: 'recording',
    async down(name: string) {
      running.delete(name)
      await call(`down ${name}`)
    },
    async inspect(name: string) {
      return running.has(name) ? { id: name, name, running: true, image: '', labels: {} } : undefined
    },
    async hasImage() {
      return true
    },
    async list() {
      return []
    },
    async up(spec: { name: string }) {
      running.add(spec.name)
      await call(`up ${spec.name}`)
    },
    async exec(name: string, argv: readonly string[]) {
      await call(`exec ${name} ${argv.join(' ')}`)
      return { exitCode: 0, stdout: '', stderr: '' }
    },
    networks: {
      create: (name: string, o: { internal: boolean }) => call(`create${o.internal ? ' --internal' : ''} ${name}`),
      connect: (network: string, container: string) => call(`connect ${network} ${container}`),
      disconnect: (network: string, container: string) => call(`disconnect -f ${network} ${container}`),
      remove: (name: string) => call(`rm ${name}`),
    },
  } as unknown as RuntimePlugin
  return { runtime, calls }
}
