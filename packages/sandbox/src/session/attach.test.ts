import { failure } from '@omh/test-utils'
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { gitRepo, testdir } from '@omh/test-utils'
import { fakeRuntime, type FakeRuntime } from '@omh/test-utils'
import { Kernel } from '@omh/kernel'
import { attach, type AttachHost } from './attach.js'
import { createSession } from './create.js'
import { egressDir } from '../network/egress.js'
import { LABEL, sessionPaths } from '../host/layout.js'
import { repository, resolveBase } from '../host/repo.js'

const g = globalThis as { __omhFakeRuntime?: FakeRuntime }
afterEach(() => {
  delete g.__omhFakeRuntime
})

async function setup(sessions: readonly string[]) {
  const dir = testdir({
    'omh/defaults.toml': 'plugins = ["./fake.mjs"]\nruntime = "fake"\n',
    'omh/fake.mjs': 'export default globalThis.__omhFakeRuntime\n',
  })
  const root = gitRepo({ 'README.md': 'hi\n' })
  const fake = fakeRuntime()
  g.__omhFakeRuntime = fake
  const home = path.join(dir, 'home')
  const state = path.join(dir, 'state')
  const kernel = await Kernel.create({ cwd: root, env: { ...process.env, OMH_HOME: home, OMH_STATE: state, HOME: path.join(dir, 'user') }, defaultsFile: path.join(dir, 'omh/defaults.toml'), bundledAdapters: path.join(dir, 'omh/adapters') })
  const repo = repository(root)
  const base = await resolveBase(repo, process.env)
  for (const sid of sessions) await createSession(state, repo, sid, base, process.env)
  const host: AttachHost = { context: { env: process.env, progress: () => undefined, verbose: false } }
  return { dir, home, state, fake, kernel, host, repo }
}

/** Something on 127.0.0.1 that greets as an SSH server does. */
async function greeter(): Promise<{ port: number; close(): void }> {
  const server = createServer((socket) => socket.end('SSH-2.0-fake\r\n'))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as AddressInfo).port, close: () => server.close() }
}

describe('attach', () => {
  it('takes the newest session when none was ever launched into, as a launch would', async () => {
    const t = await setup(['s01', 's02'])
    const error = await failure(() => attach(t.kernel, {}, t.host))
    expect(error.code).toBe('SESSION_NOT_RUNNING')
    expect(error.message).toContain('Session s02 ')
  })

  it('reaches sshd at the host port the engine picked, and writes the port it finds on every attach', async () => {
    const t = await setup(['s01'])
    const [first, second] = [await greeter(), await greeter()]
    const running = (port: number) =>
      t.fake.containers.set(`omh-${t.repo.id}-s01`, {
        spec: { image: 'i', mounts: [], env: {}, labels: { [LABEL.repo]: t.repo.id, [LABEL.session]: 's01' }, workdir: '/work', user: '1000:1000', argv: [], ports: [{ guest: 2222 }] },
        running: true,
        ports: [{ guest: 2222, host: port, hostIp: '127.0.0.1' }],
      })
    try {
      running(first.port)
      const attached = await attach(t.kernel, {}, t.host)
      expect(attached).toMatchObject({ session: 's01', host: '127.0.0.1', port: first.port })
      expect(readFileSync(attached.entry, 'utf8')).toContain(`\n  Port ${first.port}\n`)
      // The container was started again since, and the engine picked another port.
      running(second.port)
      expect((await attach(t.kernel, {}, t.host)).port).toBe(second.port)
      expect(readFileSync(attached.entry, 'utf8')).toContain(`\n  Port ${second.port}\n`)
    } finally {
      first.close()
      second.close()
    }
  })

  it('says so when the container publishes no port for sshd, before starting it', async () => {
    const t = await setup(['s01'])
    t.fake.containers.set(`omh-${t.repo.id}-s01`, {
      spec: { image: 'i', mounts: [], env: {}, labels: { [LABEL.repo]: t.repo.id, [LABEL.session]: 's01' }, workdir: '/work', user: '1000:1000', argv: [] },
      running: true,
      ports: [],
    })
    const error = await failure(() => attach(t.kernel, {}, t.host))
    expect(error.code).toBe('ATTACH_FAILED')
    expect(error.message).toContain('publishes no port for sshd')
    expect(t.fake.calls).toEqual([])
  })

  describe('a container this machine cannot reach by itself', () => {
    const running = (t: Awaited<ReturnType<typeof setup>>, ports?: { guest: number; host: number; hostIp: string }[]) =>
      t.fake.containers.set(`omh-${t.repo.id}-s01`, {
        spec: { image: 'i', mounts: [], env: {}, labels: { [LABEL.repo]: t.repo.id, [LABEL.session]: 's01' }, workdir: '/work', user: '1000:1000', argv: [], ports: [{ guest: 2222 }] },
        running: true,
        ...(ports ? { ports } : {}),
      })
    /** The session's record of a container whose files were copied in, as a launch on an engine elsewhere writes it. */
    const copied = (t: Awaited<ReturnType<typeof setup>>) =>
      writeFileSync(path.join(sessionPaths(t.state, t.repo, 's01').run, 'copied.json'), JSON.stringify({ container: `omh-${t.repo.id}-s01`, helper: { image: 'i', owner: { uid: 1000, gid: 1000 } }, volumes: [], links: [] }))

    it('says what to forward when the runtime publishes no port here (a cluster), before starting sshd', async () => {
      const t = await setup(['s01'])
      t.fake.publishes = false
      running(t)
      const error = await failure(() => attach(t.kernel, { session: 's01' }, t.host))
      expect(error).toMatchObject({ code: 'ATTACH_NEEDS_TUNNEL', exit: 1 })
      expect(error.message).toBe(`Session s01 runs where this machine cannot reach its sshd: the fake runtime publishes no port of its container omh-${t.repo.id}-s01 on this machine.`)
      expect(error.hint).toBe(`Forward a port here to port 2222 of omh-${t.repo.id}-s01 with the engine's own tool (a cluster's port-forward, an ssh tunnel to the engine's machine) and leave it running, then run \`omh attach --session s01 --port <that port>\`.`)
      expect(t.fake.calls).toEqual([])
    })

    it('attaches through the port the user forwarded, given with --port', async () => {
      const t = await setup(['s01'])
      t.fake.publishes = false
      running(t)
      const forwarded = await greeter()
      try {
        const attached = await attach(t.kernel, { port: forwarded.port }, t.host)
        expect(attached).toMatchObject({ session: 's01', port: forwarded.port })
        expect(readFileSync(attached.entry, 'utf8')).toContain(`\n  Port ${forwarded.port}\n`)
        expect(t.fake.calls).toEqual([`check omh-${t.repo.id}-s01`])
      } finally {
        forwarded.close()
      }
      const error = await failure(() => attach(t.kernel, { port: 1 }, { ...t.host, readyMs: 300 }))
      expect(error.code).toBe('ATTACH_FAILED')
      expect(error.message).toContain('nothing answers on 127.0.0.1:1 (--port): check that the forward to port 2222')
    })

    it.each([
      ['ssh://me@build-box', 'me@build-box'],
      // The engine's SSH port stays in the tunnel: one to port 22 may reach nothing there.
      ['ssh://me@build-box:2200/run/podman/podman.sock', '-p 2200 me@build-box'],
    ])("names the tunnel to the engine's machine when a copied session's published port does not answer here (%s)", async (endpoint, host) => {
      const t = await setup(['s01'])
      t.fake.endpoint = endpoint
      running(t, [{ guest: 2222, host: 1, hostIp: '127.0.0.1' }])
      copied(t)
      const error = await failure(() => attach(t.kernel, {}, { ...t.host, readyMs: 300 }))
      expect(error).toMatchObject({ code: 'ATTACH_NEEDS_TUNNEL', exit: 1 })
      expect(error.message).toContain(`its container runs on an engine that does not share this machine (${endpoint}), which publishes sshd on its own 127.0.0.1:1`)
      expect(error.hint).toBe(`Forward that port here and leave it running: \`ssh -N -L 1:127.0.0.1:1 ${host}\`, then run \`omh attach\`.`)
    })

    it('asks a copied session without a published sshd port for a forward too, not for a relaunch', async () => {
      const t = await setup(['s01'])
      running(t, [])
      copied(t)
      expect((await failure(() => attach(t.kernel, {}, t.host))).code).toBe('ATTACH_NEEDS_TUNNEL')
    })
  })

  it('refuses a session behind its egress proxy, naming the setting, before starting sshd', async () => {
    const t = await setup(['s01'])
    t.fake.containers.set(`omh-${t.repo.id}-s01`, {
      spec: { image: 'i', mounts: [], env: {}, labels: { [LABEL.repo]: t.repo.id, [LABEL.session]: 's01' }, workdir: '/work', user: '1000:1000', argv: [], ports: [{ guest: 2222 }] },
      running: true,
      ports: [{ guest: 2222, host: 40222, hostIp: '127.0.0.1' }],
    })
    const dir = egressDir(sessionPaths(t.state, t.repo, 's01').run)
    mkdirSync(dir, { recursive: true })
    writeFileSync(path.join(dir, 'network'), `omh-${t.repo.id}-s01-net-0a1b2c3d\n`)
    const error = await failure(() => attach(t.kernel, {}, t.host))
    expect(error.code).toBe('ATTACH_UNREACHABLE')
    expect(error.exit).toBe(2)
    expect(error.message).toContain('Session s01 runs behind its egress proxy')
    expect(error.hint).toContain('[network] egress = "open"')
    expect(error.hint).toContain('omh sessions down s01')
    expect(t.fake.calls).toEqual([])
  })

  it('takes the newer of two sessions launched into at the same moment, and the later launched into before both', async () => {
    const t = await setup(['s01', 's02', 's03'])
    const stamp = (sid: string, at: Date) => {
      const file = path.join(sessionPaths(t.state, t.repo, sid).run, 'last-used')
      writeFileSync(file, '')
      utimesSync(file, at, at)
    }
    const at = new Date('2025-01-01T00:00:00Z')
    for (const sid of ['s01', 's02']) stamp(sid, at)
    expect((await failure(() => attach(t.kernel, {}, t.host))).message).toContain('Session s02 ')
    stamp('s01', new Date(at.getTime() + 1000))
    expect((await failure(() => attach(t.kernel, {}, t.host))).message).toContain('Session s01 ')
  })
})
