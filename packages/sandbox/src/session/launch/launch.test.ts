import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { failure, fakeRuntime, gitRepo, testdir, write, type FakeRuntime } from '@omh/test-utils'
import { IMAGE_BUILD_FAILED, OmhError, type LaunchPlan } from '@omh/plugin-api'
import { Kernel, type LaunchTaps } from '@omh/kernel'
import type { KernelView } from '../../kernel-view.js'
import { KEPT_LAUNCH } from '../kept.js'
import { launch, previewLaunch, type LaunchAnnouncement, type LaunchHost, type LaunchRequest } from './index.js'
import { repository } from '../../host/repo.js'
import { takeDown } from '../teardown.js'
import { readCopied } from '../../engine-files/copied.js'
import { applyAllowlist, egressDir } from '../../network/egress.js'

const g = globalThis as { __omhFakeRuntime?: FakeRuntime; __omhOtherRuntime?: FakeRuntime }
afterEach(() => {
  delete g.__omhFakeRuntime
  delete g.__omhOtherRuntime
})

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd, encoding: 'utf8', stdio: 'pipe' }).trim()

const renderer = `export default { kind: 'renderer', apiVersion: 1, meta: { name: 'r', version: '0' }, formats: ['r'], classes: ['rules', 'skills'],
  render(input) { return { files: input.items.length ? [{ kind: 'file', guest: input.binding.path, content: input.items.map((i) => i.text).join('\\n') }] : [], dropped: [] } } }\n`

async function setup(adapterExtra = '', fake = fakeRuntime(), more: { settings?: string; env?: Record<string, string> } = {}) {
  const dir = testdir({
    ...(more.settings ? { 'home/settings.toml': more.settings } : {}),
    'omh/defaults.toml': 'plugins = ["./r.mjs", "./fake.mjs", "./other.mjs"]\nruntime = "fake"\n[network]\negress = "open"\n',
    'omh/r.mjs': renderer,
    'omh/fake.mjs': 'export default globalThis.__omhFakeRuntime\n',
    'omh/other.mjs': 'export default globalThis.__omhOtherRuntime\n',
    'omh/adapters/h.toml': `name = "h"\nbin = "h-bin"\ninstall = "true"\ncreds = ["$HOME/.h/"]\n${adapterExtra}[capabilities.rules]\npath = "/work/RULES.md"\nrender = "r"\n`,
    'home/rules/style.md': 'Be brief.\n',
  })
  const root = gitRepo({ 'README.md': 'hi\n' })
  const other = fakeRuntime({ engine: 'other' })
  g.__omhFakeRuntime = fake
  g.__omhOtherRuntime = other
  const home = path.join(dir, 'home')
  const state = path.join(dir, 'state')
  const kernel = await Kernel.create({
    cwd: root,
    env: { ...process.env, ...more.env, OMH_HOME: home, OMH_STATE: state },
    defaultsFile: path.join(dir, 'omh/defaults.toml'),
    bundledAdapters: path.join(dir, 'omh/adapters'),
  })
  const announced: LaunchAnnouncement[] = []
  const notices: string[] = []
  const host: LaunchHost = {
    images: { tag: () => 'img:1', ensure: async () => 'img:1' },
    context: { env: process.env, progress: () => undefined, verbose: false },
    notice: (line) => notices.push(line),
    announce: (a) => announced.push(a),
  }
  return { dir, root, home, state, fake, other, kernel, host, announced, notices, repo: repository(root) }
}

const request = (over: Partial<LaunchRequest> = {}): LaunchRequest => ({ harness: 'h', args: ['--flag'], tty: false, ...over })

describe('launch', () => {
  it('creates a session, brings its container up, runs the harness and returns its status', async () => {
    const t = await setup()
    t.fake.status = 3
    expect(await launch(t.kernel, request(), t.host)).toBe(3)
    const name = `omh-${t.repo.id}-s01`
    expect(t.fake.calls).toEqual([`up ${name}`, `exec ${name} h-bin --flag`])
    expect(t.fake.execs[0]!.options).toMatchObject({ tty: false, user: '1000:1000', workdir: '/work', env: { OMH_HARNESS: 'h' } })
    expect(t.announced).toEqual([{ harness: 'h', session: 's01', branch: 'omh/s01', created: true, dropped: [], translated: [], notices: [] }])
    const spec = t.fake.containers.get(name)!.spec
    const worktree = path.join(t.state, 'worktrees', t.repo.id, 's01')
    expect(spec.mounts.find((m) => m.guest === '/work')).toEqual({ host: worktree, guest: '/work', readOnly: false })
    // sshd's port for `omh attach`, at a free host port the engine picks: no launch fails on a port taken.
    expect(spec.ports).toEqual([{ guest: 2222 }])
    const rules = spec.mounts.find((m) => m.guest === '/work/RULES.md')!
    expect(rules.readOnly).toBe(true)
    expect(readFileSync(rules.host, 'utf8')).toContain('Be brief.')
    expect(rules.host.startsWith(path.join(t.state, 'run', t.repo.id, 's01', 'h'))).toBe(true)
    expect(readFileSync(spec.mounts.find((m) => m.guest === '/work/.git')!.host, 'utf8')).toBe('gitdir: /omh/shadow\n')
    expect(spec.mounts.find((m) => m.guest === '/home/agent/.h')).toEqual({
      host: path.join(t.state, 'creds/h/default/.h'),
      guest: '/home/agent/.h',
      readOnly: false,
    })
    // The mountpoint for the rules file exists (made by omh, not the engine) while the container does.
    expect(readFileSync(path.join(worktree, 'RULES.md'), 'utf8')).toBe('')
    expect(readFileSync(path.join(t.state, 'shadow', t.repo.id, 's01.git/info/exclude'), 'utf8')).toContain('/RULES.md')
  })

  it('reuses the session and its running container on the next launch', async () => {
    const t = await setup()
    await launch(t.kernel, request(), t.host)
    await launch(t.kernel, request(), t.host)
    expect(t.fake.calls.filter((c) => c.startsWith('up'))).toHaveLength(1)
    expect(t.fake.calls.filter((c) => c.startsWith('exec'))).toHaveLength(2)
    expect(t.announced.map((a) => [a.session, a.created])).toEqual([
      ['s01', true],
      ['s01', false],
    ])
  })

  it('gives two launches at once two sessions', async () => {
    const t = await setup()
    let second: Promise<number> | undefined
    t.fake.during = async () => {
      t.fake.during = undefined
      second = launch(t.kernel, request(), t.host)
      await second
    }
    await launch(t.kernel, request(), t.host)
    await second
    expect(t.announced.map((a) => a.session).sort()).toEqual(['s01', 's02'])
    expect(git(t.root, 'branch', '--list', 'omh/*', '--format=%(refname:short)').split('\n')).toEqual(['omh/s01', 'omh/s02'])
  })

  it('refuses before anything starts when the harness would drop a required item, leaving no session behind', async () => {
    const t = await setup()
    write(t.home, { 'skills/look/SKILL.md': '---\nname: look\ndescription: Looks.\nrequired: true\n---\nLook.\n' })
    const error = await failure(() => launch(t.kernel, request(), t.host))
    expect(error).toMatchObject({ code: 'REQUIRED_DROPPED', exit: 2, problems: [{ path: 'skills.look', message: 'unsupported' }] })
    expect(error.message).toContain('h cannot express an item')
    expect(t.fake.calls).toEqual([])
    expect(t.announced).toEqual([])
    expect(git(t.root, 'branch', '--list', 'omh/*')).toBe('')
    expect(readdirSync(path.join(t.state, 'worktrees', t.repo.id))).toEqual([])
  })

  it('leaves an existing session untouched when the harness does not exist', async () => {
    const t = await setup()
    await launch(t.kernel, request(), t.host)
    const stamp = path.join(t.state, 'run', t.repo.id, 's01', 'last-used')
    const before = readFileSync(stamp, 'utf8') + String(statSync(stamp).mtimeMs)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect((await failure(() => launch(t.kernel, request({ harness: 'nope' }), t.host))).message).toContain('nope')
    expect(readFileSync(stamp, 'utf8') + String(statSync(stamp).mtimeMs)).toBe(before)
  })

  it('returns to the session launched into last', async () => {
    const t = await setup()
    await launch(t.kernel, request(), t.host)
    await launch(t.kernel, request({ fresh: true }), t.host)
    await new Promise((resolve) => setTimeout(resolve, 20))
    await launch(t.kernel, request({ session: 's01' }), t.host)
    await launch(t.kernel, request(), t.host)
    expect(t.announced.map((a) => a.session)).toEqual(['s01', 's02', 's01', 's01'])
  })

  it('starts a new session with --new and joins a named one with --session', async () => {
    const t = await setup()
    await launch(t.kernel, request(), t.host)
    await launch(t.kernel, request({ fresh: true }), t.host)
    await launch(t.kernel, request({ session: 's01' }), t.host)
    expect(t.announced.map((a) => a.session)).toEqual(['s01', 's02', 's01'])
    const error = await failure(() => launch(t.kernel, request({ session: 's09' }), t.host))
    expect(error.code).toBe('SESSION_NOT_FOUND')
    expect(error.hint).toContain('s01, s02')
  })

  it('restarts a container whose plan changed: another image, or new bytes behind a file mount', async () => {
    const t = await setup()
    const name = `omh-${t.repo.id}-s01`
    await launch(t.kernel, request(), t.host)
    write(t.home, { 'rules/style.md': 'Be briefer.\n' })
    await launch(t.kernel, request(), t.host)
    t.host.images!.tag = () => 'img:2'
    await launch(t.kernel, request(), t.host)
    expect(t.fake.calls.filter((c) => !c.startsWith('exec'))).toEqual([
      `up ${name}`,
      `check ${name}`,
      `down ${name}`,
      `up ${name}`,
      `check ${name}`,
      `down ${name}`,
      `up ${name}`,
    ])
    expect(t.notices).toEqual(Array(2).fill('restarting the container of omh/s01: its image, mounts or environment changed'))
  })

  it('never restarts a container while something runs in it', async () => {
    const t = await setup()
    await launch(t.kernel, request(), t.host)
    t.fake.busy.set(`omh-${t.repo.id}-s01`, ['h-bin --flag'])
    t.host.images!.tag = () => 'img:2'
    const error = await failure(() => launch(t.kernel, request({ session: 's01' }), t.host))
    expect(error.code).toBe('SESSION_BUSY')
    expect(error.message).toContain('h-bin --flag')
    expect(t.fake.calls.filter((c) => c.startsWith('down'))).toEqual([])
  })

  it('passes over a session busy with another plan when none was named, and starts another', async () => {
    const t = await setup()
    await launch(t.kernel, request(), t.host)
    t.fake.busy.set(`omh-${t.repo.id}-s01`, ['h-bin --flag'])
    t.host.images!.tag = () => 'img:2'
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.announced.map((a) => a.session)).toEqual(['s01', 's02'])
    expect(t.notices).toEqual(['s01 is in use and its container would have to change (its image, mounts or environment changed); using another session'])
  })

  it('removes a session it created when the container does not start, so the retry succeeds', async () => {
    const t = await setup()
    t.fake.failUp = 'engine said no'
    const error = await failure(() => launch(t.kernel, request(), t.host))
    expect(error.code).toBe('SESSION_UP_FAILED')
    expect(error.message).toContain('engine said no')
    expect(git(t.root, 'branch', '--list', 'omh/*')).toBe('')
    expect(readdirSync(path.join(t.state, 'worktrees', t.repo.id))).toEqual([])
    expect(existsSync(path.join(t.state, 'shadow', t.repo.id, 's01.git'))).toBe(false)
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.announced.map((a) => a.session)).toEqual(['s01'])
  })

  it('removes the volumes of a copied session it created when the container does not start', async () => {
    const t = await setup('', fakeRuntime({ ways: ['copied'] }))
    t.fake.failUp = 'engine said no'
    const error = await failure(() => launch(t.kernel, request(), t.host))
    expect(error.code).toBe('SESSION_UP_FAILED')
    // The volumes were made and filled before the container was asked for.
    expect(t.fake.calls.filter((c) => c.startsWith('volume create'))).not.toEqual([])
    expect([...t.fake.volumeStore.keys()]).toEqual([])
    expect(git(t.root, 'branch', '--list', 'omh/*')).toBe('')
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.fake.containers.get(`omh-${t.repo.id}-s01`)!.spec.labels['omh.files']).toBe('copied')
  })

  it('creates nothing when no engine answers', async () => {
    const t = await setup()
    t.fake.answering = false
    const error = await failure(() => launch(t.kernel, request(), t.host))
    expect(error.code).toBe('RUNTIME_NOT_FOUND')
    expect(existsSync(path.join(t.state, 'worktrees'))).toBe(false)
    expect(git(t.root, 'branch', '--list', 'omh/*')).toBe('')
  })

  it('creates nothing when the image does not build, and succeeds once it does', async () => {
    const t = await setup()
    const working = t.host.images!.ensure
    t.fake.existing = new Set()
    t.host.images!.ensure = async () => {
      throw OmhError.of(IMAGE_BUILD_FAILED, { args: ['fake', 'img:1', 'install exited 1'] })
    }
    const error = await failure(() => launch(t.kernel, request(), t.host))
    expect(error.code).toBe('IMAGE_BUILD_FAILED')
    expect(existsSync(path.join(t.state, 'worktrees'))).toBe(false)
    expect(git(t.root, 'branch', '--list', 'omh/*')).toBe('')
    t.host.images!.ensure = working
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
  })

  it('reaches a running container without asking for its image again', async () => {
    const t = await setup()
    await launch(t.kernel, request(), t.host)
    t.host.images!.ensure = async () => {
      throw new Error('not asked')
    }
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
  })

  it('reaches a running container of the same plan with one question to the engine, then exec', async () => {
    const t = await setup()
    const name = `omh-${t.repo.id}-s01`
    await launch(t.kernel, request(), t.host)
    t.fake.asked.length = 0
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.fake.asked).toEqual([`inspect ${name}`])
    expect(t.fake.calls.at(-1)).toBe(`exec ${name} h-bin --flag`)
  })

  it('offers a relaunch straight to the exec only into a session whose running container it reused, just before the exec', async () => {
    const t = await setup()
    const name = `omh-${t.repo.id}-s01`
    const offers: unknown[] = []
    ;(globalThis as Record<symbol, unknown>)[KEPT_LAUNCH] = { offer: (o: object) => offers.push({ ...o, calls: t.fake.calls.length }) }
    try {
      await launch(t.kernel, request({ session: undefined }), t.host)
      expect(offers).toEqual([])
      await launch(t.kernel, request({ session: 's01' }), t.host)
      expect(offers).toEqual([{ containers: [name], check: ['inspect', name], exec: { file: 'fake', args: ['exec', name, 'h-bin', '--flag'], env: {}, stdio: ['inherit', 'inherit', 'inherit'] }, run: path.join(t.state, 'run', t.repo.id, 's01'), harness: 'h', calls: 2 }])
      // The next call is the exec: nothing else was asked of the engine in between.
      expect(t.fake.calls).toEqual([`up ${name}`, `exec ${name} h-bin --flag`, `exec ${name} h-bin --flag`])
      // Picked as the current session it is offered too; brought up anew, or a new session, it is not.
      await launch(t.kernel, request(), t.host)
      expect(offers).toHaveLength(2)
      t.fake.containers.delete(name)
      await launch(t.kernel, request({ session: 's01' }), t.host)
      await launch(t.kernel, request({ fresh: true }), t.host)
      expect(offers).toHaveLength(2)
    } finally {
      delete (globalThis as Record<symbol, unknown>)[KEPT_LAUNCH]
    }
  })

  it('offers no relaunch on a runtime that cannot be asked again without omh (no client)', async () => {
    const t = await setup('', fakeRuntime({ client: false }))
    const offers: unknown[] = []
    ;(globalThis as Record<symbol, unknown>)[KEPT_LAUNCH] = { offer: (o: object) => offers.push(o) }
    try {
      await launch(t.kernel, request({ session: undefined }), t.host)
      expect(await launch(t.kernel, request({ session: 's01' }), t.host)).toBe(0)
      expect(offers).toEqual([])
    } finally {
      delete (globalThis as Record<symbol, unknown>)[KEPT_LAUNCH]
    }
  })

  it('asks a new session\'s engine for the container and the image together, and detects and lists nothing', async () => {
    const t = await setup()
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.fake.asked).toEqual([`inspect omh-${t.repo.id}-s01`, 'hasImage img:1'])
  })

  it('asks a new session\'s engine whether it sees this disk while the session is made, once', async () => {
    const t = await setup()
    const staged = path.join(t.state, 'run', t.repo.id, 's01', 'h')
    let stagedThen: boolean | undefined
    t.fake.probing = () => void (stagedThen = existsSync(staged))
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.fake.probed).toEqual(['img:1'])
    // The question went out before the profile was staged, not after.
    expect(stagedThen).toBe(false)
    expect(t.fake.containers.get(`omh-${t.repo.id}-s01`)!.spec.labels['omh.files']).toBe('mounted')
  })

  it('starts a harness in the background without a terminal, returns once it runs, and fires no `launched` for a harness still running', async () => {
    const t = await setup()
    const ended: number[] = []
    const kernel = withLaunchTaps(t.kernel, { beforeLaunch: [], launched: [{ name: 'ended', fn: async (_plan, status) => void ended.push(status) }] })
    expect(await launch(kernel, request({ detach: true }), t.host)).toBe(0)
    const exec = t.fake.execs.at(-1)!
    expect(exec.options).toMatchObject({ tty: false, interactive: false })
    expect(exec.argv.slice(3, 6)).toEqual(['omh-launch', 'detached', 'h'])
    expect(ended).toEqual([])
  })

  it('refuses a second harness in the background where one runs, and one in a session whose files are copied', async () => {
    const t = await setup()
    t.fake.status = 75
    expect((await failure(() => launch(t.kernel, request({ detach: true }), t.host))).code).toBe('HARNESS_RUNNING')
    const copied = await setup('', fakeRuntime({ ways: ['copied'] }))
    const error = await failure(() => launch(copied.kernel, request({ detach: true }), copied.host))
    expect(error.code).toBe('DETACH_UNSUPPORTED')
    expect(error.message).toContain('its files are copied to an engine that does not share this disk')
  })

  it('asks again about the image a beforeLaunch tap put in the plan', async () => {
    const t = await setup()
    const otherImage = async (plan: LaunchPlan) => ({ ...plan, spec: { ...plan.spec, image: 'img:2' } })
    const kernel = withLaunchTaps(t.kernel, { beforeLaunch: [{ name: 'other-image', fn: otherImage }], launched: [] })
    expect(await launch(kernel, request(), t.host)).toBe(0)
    expect(t.fake.probed).toEqual(['img:1', 'img:2'])
    expect(t.fake.containers.get(`omh-${t.repo.id}-s01`)!.spec.image).toBe('img:2')
  })

  it('refuses a new session on an engine that does not see this disk when files must be mounted, as it did', async () => {
    const t = await setup('', fakeRuntime({ ways: ['copied'] }))
    write(t.home, { 'settings.toml': '[session]\nfiles = "mounted"\n' })
    const kernel = await Kernel.create(t.kernel.options)
    const error = await failure(() => launch(kernel, request(), t.host))
    expect(error.code).toBe('ENGINE_FILES_UNREACHABLE')
    expect([...t.fake.containers.keys()]).toEqual([])
    expect(t.fake.execs).toEqual([])
    expect(git(t.root, 'branch', '--list', 'omh/*')).toBe('')
  })

  it('starts a new session\'s container while the engine\'s disk answer is on its way, and runs the harness once it is in', async () => {
    const t = await setup()
    const name = `omh-${t.repo.id}-s01`
    let answered = false
    t.fake.probing = async () => {
      const by = Date.now() + 5000
      while (!t.fake.calls.includes(`up ${name}`) && Date.now() < by) await new Promise((resolve) => setTimeout(resolve, 5))
      answered = true
    }
    t.fake.during = async () => expect(answered).toBe(true)
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.fake.calls).toEqual([`up ${name}`, `exec ${name} h-bin --flag`])
    expect(t.fake.containers.get(name)!.spec.labels['omh.files']).toBe('mounted')
  })

  it('replaces a container started before the engine said it does not see this disk with a copied one', async () => {
    const t = await setup('', fakeRuntime({ ways: ['copied'] }))
    const name = `omh-${t.repo.id}-s01`
    t.fake.probing = async () => {
      const by = Date.now() + 5000
      while (!t.fake.calls.includes(`up ${name}`) && Date.now() < by) await new Promise((resolve) => setTimeout(resolve, 5))
    }
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    const ups = t.fake.calls.filter((c) => c === `up ${name}` || c === `down ${name}`)
    expect(ups).toEqual([`up ${name}`, `down ${name}`, `up ${name}`])
    expect(t.fake.containers.get(name)!.spec.labels['omh.files']).toBe('copied')
    // The mountpoints the mounted start made are gone: a copied container links its files into place.
    expect(existsSync(path.join(t.state, 'worktrees', t.repo.id, 's01', 'RULES.md'))).toBe(false)
    expect(t.fake.calls.indexOf(`exec ${name} h-bin --flag`)).toBeGreaterThan(t.fake.calls.lastIndexOf(`up ${name}`))
    expect(t.fake.execs).toHaveLength(1)
  })

  it('reports the engine\'s failed disk question, not the container started meanwhile, and leaves nothing', async () => {
    const t = await setup()
    const name = `omh-${t.repo.id}-s01`
    t.fake.probing = async () => {
      const by = Date.now() + 5000
      while (!t.fake.calls.includes(`up ${name}`) && Date.now() < by) await new Promise((resolve) => setTimeout(resolve, 5))
      throw new Error('the probe went wrong')
    }
    await expect(launch(t.kernel, request(), t.host)).rejects.toThrow('the probe went wrong')
    expect([...t.fake.containers.keys()]).toEqual([])
    expect(t.fake.execs).toEqual([])
    expect(git(t.root, 'branch', '--list', 'omh/*')).toBe('')
  })

  it('stops the engine\'s disk question when the launch fails before the container starts', async () => {
    const t = await setup()
    let stopped = false
    t.fake.probing = (context) =>
      new Promise<void>((resolve) => {
        context.signal?.addEventListener('abort', () => {
          stopped = true
          resolve()
        })
      })
    write(t.home, { 'skills/look/SKILL.md': '---\nname: look\ndescription: Looks.\nrequired: true\n---\nLook.\n' })
    const error = await failure(() => launch(t.kernel, request(), t.host))
    expect(error.code).toBe('REQUIRED_DROPPED')
    expect(stopped).toBe(true)
    expect(git(t.root, 'branch', '--list', 'omh/*')).toBe('')
  })

  it('starts a new session\'s container beside its egress proxy, and runs the harness once both are up', async () => {
    const t = await setup('', fakeRuntime({ networks: true }))
    write(t.home, { 'settings.toml': '[network]\negress = "allowlist"\n[image]\nbase = "debian"\n' })
    const kernel = await Kernel.create(t.kernel.options)
    const name = `omh-${t.repo.id}-s01`
    let beside: boolean | undefined
    t.fake.starting = async (spec) => {
      if (spec.name !== `${name}-egress`) return
      // The proxy's start waits for the session's container's: they run together, or not at all.
      const by = Date.now() + 5000
      while (!t.fake.calls.includes(`up ${name}`) && Date.now() < by) await new Promise((resolve) => setTimeout(resolve, 5))
      beside = t.fake.calls.includes(`up ${name}`)
    }
    expect(await launch(kernel, request(), t.host)).toBe(0)
    expect(beside).toBe(true)
    const network = t.fake.containers.get(name)!.spec.network!
    expect(network).toMatch(new RegExp(`^${name}-net-[0-9a-f]{8}$`))
    const order = t.fake.calls.filter((c) => !c.startsWith('check'))
    expect(order.indexOf(`network create ${network}`)).toBeLessThan(order.indexOf(`up ${name}`))
    expect(order.at(-1)).toBe(`exec ${name} h-bin --flag`)
    expect([...t.fake.networkStore.get(network)!]).toContain(`${name}-egress`)
  })

  it('leaves no container of a new session running when its egress proxy does not start, and removes the session', async () => {
    const t = await setup('', fakeRuntime({ networks: true }))
    write(t.home, { 'settings.toml': '[network]\negress = "allowlist"\n[image]\nbase = "debian"\n' })
    const kernel = await Kernel.create(t.kernel.options)
    const name = `omh-${t.repo.id}-s01`
    t.fake.starting = async (spec) => {
      if (spec.name !== `${name}-egress`) return
      const by = Date.now() + 5000
      while (!t.fake.calls.includes(`up ${name}`) && Date.now() < by) await new Promise((resolve) => setTimeout(resolve, 5))
      throw new Error('the proxy did not start')
    }
    await expect(launch(kernel, request(), t.host)).rejects.toThrow('the proxy did not start')
    expect(t.fake.calls).toContain(`down ${name}`)
    expect([...t.fake.containers.keys()]).toEqual([])
    expect(t.fake.execs).toEqual([])
    expect(git(t.root, 'branch', '--list', 'omh/*')).toBe('')
  })

  it('replaces a container only once its egress proxy is up: one that does not start leaves the old container', async () => {
    const t = await setup('', fakeRuntime({ networks: true }))
    write(t.home, { 'settings.toml': '[network]\negress = "allowlist"\n[image]\nbase = "debian"\n' })
    const kernel = await Kernel.create(t.kernel.options)
    const name = `omh-${t.repo.id}-s01`
    expect(await launch(kernel, request(), t.host)).toBe(0)
    const before = t.fake.containers.get(name)!.spec
    write(t.home, { 'rules/style.md': 'Be briefer.\n' })
    t.fake.calls.length = 0
    t.fake.starting = (spec) => {
      if (spec.name === `${name}-egress`) throw new Error('the proxy did not start')
    }
    await expect(launch(kernel, request(), t.host)).rejects.toThrow('the proxy did not start')
    expect(t.fake.calls).not.toContain(`up ${name}`)
    expect(t.fake.containers.get(name)!.spec).toBe(before)
  })

  it('starts the container again when it was removed behind omh\'s back', async () => {
    const t = await setup()
    const name = `omh-${t.repo.id}-s01`
    await launch(t.kernel, request(), t.host)
    t.fake.containers.delete(name)
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.fake.calls.filter((c) => !c.startsWith('exec'))).toEqual([`up ${name}`, `up ${name}`])
  })

  it('replaces a container stopped behind omh\'s back', async () => {
    const t = await setup()
    const name = `omh-${t.repo.id}-s01`
    await launch(t.kernel, request(), t.host)
    t.fake.containers.get(name)!.running = false
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.fake.calls.filter((c) => !c.startsWith('exec'))).toEqual([`up ${name}`, `down ${name}`, `up ${name}`])
    expect(t.notices).toEqual(['restarting the container of omh/s01: it was stopped'])
  })

  it('keeps a session on the engine it is up on: another one asked for is refused while its container is there, and taken once it is gone', async () => {
    const t = await setup()
    const name = `omh-${t.repo.id}-s01`
    await launch(t.kernel, request(), t.host)
    const refused = await failure(() => launch(t.kernel, request({ engine: 'other' }), t.host))
    expect(refused.code).toBe('SESSION_ELSEWHERE')
    expect(t.other.calls).toEqual([])

    // The container went with its engine's restart: the record no longer holds, and the other engine serves.
    t.fake.containers.delete(name)
    expect(await launch(t.kernel, request({ engine: 'other' }), t.host)).toBe(0)
    expect(t.other.calls).toEqual([`up ${name}`, `exec ${name} h-bin --flag`])
    // Without --runtime the session follows its record, not the setting's engine.
    const before = t.fake.calls.length
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.fake.calls).toHaveLength(before)
    expect(t.other.calls.at(-1)).toBe(`exec ${name} h-bin --flag`)
  })

  it('never runs the harness in a container of the session\'s name that carries another session\'s labels', async () => {
    const t = await setup()
    const name = `omh-${t.repo.id}-s01`
    await launch(t.kernel, request(), t.host)
    const c = t.fake.containers.get(name)!
    c.spec = { ...c.spec, labels: { ...c.spec.labels, 'omh.session': 's07' } }
    t.fake.asked.length = 0
    const error = await failure(() => launch(t.kernel, request({ session: 's01' }), t.host))
    expect(error.code).toBe('SESSION_UP_FAILED')
    expect(t.fake.asked).toEqual([`inspect ${name}`, 'list'])
    expect(t.fake.calls.filter((c) => c.startsWith('exec'))).toHaveLength(1)
  })

  it('asks again when another launch went into the session between the early question and the claim', async () => {
    const t = await setup()
    const name = `omh-${t.repo.id}-s01`
    await launch(t.kernel, request(), t.host)
    t.fake.asked.length = 0
    t.fake.calls.length = 0
    t.fake.meanwhile = () => {
      t.fake.meanwhile = undefined
      // Another launch, with another plan, before this one takes the lock: it claims the session
      // (stamping last-used), replaces the container, and is done.
      const stamp = new Date(Date.now() + 1000)
      utimesSync(path.join(t.state, 'run', t.repo.id, 's01', 'last-used'), stamp, stamp)
      const c = t.fake.containers.get(name)!
      t.fake.containers.set(name, { ...c, spec: { ...c.spec, labels: { ...c.spec.labels, 'omh.plan': 'another' } } })
    }
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.fake.asked).toEqual([`inspect ${name}`, `inspect ${name}`])
    expect(t.fake.calls).toEqual([`check ${name}`, `down ${name}`, `up ${name}`, `exec ${name} h-bin --flag`])
  })

  it('detects and lists through a runtime that cannot be asked for a container by name', async () => {
    const t = await setup('', fakeRuntime({ inspect: false }))
    await launch(t.kernel, request(), t.host)
    t.fake.asked.length = 0
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.fake.asked).toEqual(['detect', 'list'])
  })

  it('says which engine does not answer when a running session\'s engine stops answering, and keeps the session', async () => {
    const t = await setup()
    await launch(t.kernel, request(), t.host)
    t.fake.answering = false
    const error = await failure(() => launch(t.kernel, request(), t.host))
    expect(error.code).toBe('RUNTIME_NOT_FOUND')
    expect(error.problems).toEqual([{ path: 'fake', message: 'installed, but the engine does not answer.' }])
    t.fake.answering = true
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.announced.map((a) => a.session)).toEqual(['s01', 's01'])
  })

  it('stops a build when the session cannot start from a commit, and reports that', async () => {
    const t = await setup()
    const empty = testdir({ 'README.md': 'never committed\n' })
    git(empty, 'init', '-q', '-b', 'main')
    const kernel = await Kernel.create({ ...t.kernel.options, cwd: empty })
    t.fake.existing = new Set()
    let aborted: boolean | undefined
    t.host.images!.ensure = (_adapter, _runtime, context) =>
      new Promise((_resolve, reject) => {
        context.signal!.addEventListener('abort', () => {
          aborted = true
          reject(new Error('build stopped'))
        })
      })
    const error = await failure(() => launch(kernel, request(), t.host))
    expect(error.code).toMatch(/^(REPOSITORY_EMPTY|BASE_UNKNOWN)$/)
    expect(aborted).toBe(true)
  })

  it('previews a launch without creating anything', async () => {
    const t = await setup()
    const preview = await previewLaunch(t.kernel, request(), t.host)
    expect(preview).toMatchObject({ session: 's01', branch: 'omh/s01', create: true, base: { name: 'main' } })
    expect(preview.spec.mounts.map((m) => m.guest)).toContain('/work/RULES.md')
    expect(existsSync(path.join(t.state, 'worktrees'))).toBe(false)
    expect(existsSync(path.join(t.state, 'run'))).toBe(false)
    expect(git(t.root, 'branch', '--list', 'omh/*')).toBe('')
    expect(t.fake.calls).toEqual([])
  })
})

describe('takeDown', () => {
  const copiedSession = async () => {
    const t = await setup('', fakeRuntime({ ways: ['copied'] }))
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    const run = path.join(t.state, 'run', t.repo.id, 's01')
    expect(await readCopied(run)).toBeDefined()
    return { ...t, run, how: { runtime: t.fake, context: t.host.context } }
  }

  it('brings a copied session\'s work home, then removes its container and volumes (sessions down)', async () => {
    const t = await copiedSession()
    const made = [...t.fake.volumeStore.keys()]
    // What the agent wrote there since the last launch brought its work home.
    const work = t.fake.volumeStore.get(`omh-${t.repo.id}-s01-work`)!
    const tree = testdir({})
    writeFileSync(path.join(tree, 'in.tar'), work.archive!)
    execFileSync('tar', ['-x', '-f', 'in.tar', '-C', '.'], { cwd: tree })
    rmSync(path.join(tree, 'in.tar'))
    write(tree, { 'later.txt': 'written after the harness exited\n' })
    const out = path.join(testdir({}), 'out.tar')
    execFileSync('tar', ['-c', '-f', out, '-C', tree, '.'])
    work.archive = readFileSync(out)
    expect(await takeDown(t.state, t.repo, 's01', { ...t.how, bringHome: true })).toBe(made.length)
    expect(readFileSync(path.join(t.state, 'worktrees', t.repo.id, 's01', 'later.txt'), 'utf8')).toBe('written after the harness exited\n')
    expect(t.fake.containers.size).toBe(0)
    expect([...t.fake.volumeStore.keys()]).toEqual([])
    expect(await readCopied(t.run)).toBeUndefined()
  })

  it('removes the volumes of a session whose last container did not start (sessions rm)', async () => {
    const t = await copiedSession()
    // Gone behind omh's back, and the next container fails: the session and its volumes stay for a retry.
    t.fake.containers.clear()
    t.fake.failUp = 'engine said no'
    expect((await failure(() => launch(t.kernel, request(), t.host))).code).toBe('SESSION_UP_FAILED')
    expect(t.fake.volumeStore.size).toBeGreaterThan(0)
    t.fake.calls.length = 0
    await takeDown(t.state, t.repo, 's01', { ...t.how, bringHome: false })
    expect(t.fake.calls.filter((c) => c.startsWith('volume get'))).toEqual([])
    expect([...t.fake.volumeStore.keys()]).toEqual([])
  })
})

describe('a copied session behind its egress proxy', () => {
  /** One file of an archive a volume holds. */
  const member = (archive: Buffer, name: string) => {
    const at = path.join(testdir({}), 'in.tar')
    writeFileSync(at, archive)
    return execFileSync('tar', ['-x', '-O', '-f', at, name], { encoding: 'utf8' })
  }
  const ALLOWLIST = '[image]\nbase = "debian"\n[network]\negress = "allowlist"\nregistries = []\n'
  const keys = 'egress = ["api.h.test"]\n[[keys]]\nvariable = "H_KEY"\nbase_url = "H_BASE_URL"\nheader = "x-api-key"\nupstream = "https://api.h.test"\n'

  it("starts the credential proxy anew when the adapter's upstream changed, and keeps it while nothing did", async () => {
    const t = await setup(keys, fakeRuntime({ networks: true }), { settings: ALLOWLIST, env: { H_KEY: 'sk-real' } })
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    const name = `omh-${t.repo.id}-s01`
    const routes = () => JSON.parse(t.fake.containers.get(`${name}-creds`)!.spec.env['OMH_CREDENTIAL_ROUTES']!) as { upstream: string }[]
    expect(routes().map((r) => r.upstream)).toEqual(['https://api.h.test'])
    const again = async () => {
      const kernel = await Kernel.create({ ...t.kernel.options })
      t.fake.calls.length = 0
      expect(await launch(kernel, request({ session: 's01' }), t.host)).toBe(0)
      return t.fake.calls.filter((c) => c.includes(`${name}-creds`))
    }
    expect(await again()).toEqual([])
    const adapter = path.join(t.dir, 'omh/adapters/h.toml')
    writeFileSync(adapter, readFileSync(adapter, 'utf8').replace('upstream = "https://api.h.test"', 'upstream = "https://gateway.h.test"'))
    expect(await again()).toEqual([`down ${name}-creds`, `up ${name}-creds`, `check ${name}-creds`])
    expect(routes().map((r) => r.upstream)).toEqual(['https://gateway.h.test'])
  })

  it('gives its proxies their rules and program in volumes, refills the rules for a reload, and takes them down with the session', async () => {
    const t = await setup(keys, fakeRuntime({ ways: ['copied'], networks: true }), { settings: ALLOWLIST, env: { H_KEY: 'sk-real' } })
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    const name = `omh-${t.repo.id}-s01`
    const session = { 'omh.repo': t.repo.id, 'omh.session': 's01' }
    // Nothing of this disk is mounted into a proxy on an engine that does not see it.
    const proxy = t.fake.containers.get(`${name}-egress`)!.spec
    expect(proxy.mounts).toEqual([])
    expect(proxy.volumes).toEqual([{ volume: `${name}-egress-rules`, guest: '/omh/egress', readOnly: true }])
    const rules = t.fake.volumeStore.get(`${name}-egress-rules`)!
    expect(rules.labels).toMatchObject(session)
    expect(member(rules.archive!, 'allow.conf')).toBe(allowRulesOf(['api.h.test']))
    expect(member(rules.archive!, 'squid.conf')).toContain('include /omh/egress/allow.conf')
    const creds = t.fake.containers.get(`${name}-creds`)!.spec
    expect(creds.mounts).toEqual([])
    expect(creds.volumes).toEqual([{ volume: `${name}-creds-program`, guest: '/omh/creds', readOnly: true }])
    expect(creds.env['H_KEY']).toBe('sk-real')
    expect(t.fake.volumeStore.get(`${name}-creds-program`)!.labels).toMatchObject(session)
    expect(member(t.fake.volumeStore.get(`${name}-creds-program`)!.archive!, 'credential-proxy.mjs')).toContain('OMH_CREDENTIAL_ROUTES')
    const sessionSpec = t.fake.containers.get(name)!.spec
    expect(sessionSpec.labels['omh.files']).toBe('copied')
    expect(t.fake.networkStore.get(sessionSpec.network!)).toEqual(new Set([`${name}-egress`, `${name}-creds`, name]))

    // An allowlist edit: the rules go into the volume before the running proxy rereads them.
    t.fake.calls.length = 0
    const run = path.join(t.state, 'run', t.repo.id, 's01')
    const heard: unknown[] = []
    await applyAllowlist({ runtime: t.fake, context: t.host.context, container: name, dir: egressDir(run), allow: async () => ['api.h.test', 'more.test'], heard: (o) => heard.push(o) })
    expect(heard).toEqual([{ ok: true, allow: ['api.h.test', 'more.test'] }])
    expect(member(rules.archive!, 'allow.conf')).toBe(allowRulesOf(['api.h.test', 'more.test']))
    expect(t.fake.calls).toEqual([`volume put ${name}-egress-rules`, `check ${name}-egress`])
    expect(t.fake.captured.at(-1)).toEqual({ container: `${name}-egress`, argv: ['squid', '-k', 'reconfigure', '-f', '/omh/egress/squid.conf'] })

    // A relaunch into the running container hands the running proxy the settings' rules the same way.
    t.fake.calls.length = 0
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    expect(t.fake.calls.filter((c) => c.startsWith('up'))).toEqual([])
    expect(t.fake.calls).toContain(`volume put ${name}-egress-rules`)
    expect(member(rules.archive!, 'allow.conf')).toBe(allowRulesOf(['api.h.test']))

    await takeDown(t.state, t.repo, 's01', { runtime: t.fake, context: t.host.context, bringHome: true })
    expect(t.fake.containers.size).toBe(0)
    expect([...t.fake.volumeStore.keys()]).toEqual([])
    // omh's outside network stays for every session to share; the session's own goes.
    expect([...t.fake.networkStore.keys()]).toEqual(['omh-outside'])
    expect(existsSync(path.join(egressDir(run), 'volume.json'))).toBe(false)
  })

  it('starts a mounted session\'s proxy from this disk, and takes away the rules volume a copied container left', async () => {
    const fake = fakeRuntime({ ways: ['copied'], networks: true })
    const t = await setup('', fake, { settings: ALLOWLIST })
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    const name = `omh-${t.repo.id}-s01`
    expect(fake.volumeStore.has(`${name}-egress-rules`)).toBe(true)
    // The engine now shares this disk: the next new container is mounted, and so is its proxy.
    fake.ways = ['mounted', 'copied']
    await fake.down(name, t.host.context)
    expect(await launch(t.kernel, request(), t.host)).toBe(0)
    const proxy = fake.containers.get(`${name}-egress`)!.spec
    expect(proxy.volumes ?? []).toEqual([])
    expect(proxy.mounts).toEqual([{ host: egressDir(path.join(t.state, 'run', t.repo.id, 's01')), guest: '/omh/egress', readOnly: true }])
    expect(fake.volumeStore.has(`${name}-egress-rules`)).toBe(false)
  })
})

function allowRulesOf(patterns: readonly string[]): string {
  return ['# Written by omh at each launch; edits are replaced.', ...patterns.flatMap((p, n) => [`acl host${n} dstdomain -n ${p}`, `acl port${n} port 80 443`, `http_access deny host${n} port${n} forbidden`, `http_access allow host${n} port${n}`]), ''].join('\n')
}

/** The kernel as the sandbox sees it, with other launch taps than its extensions'. */
function withLaunchTaps(kernel: Kernel, launchTaps: LaunchTaps): KernelView {
  return {
    settings: kernel.settings,
    options: kernel.options,
    omhHome: kernel.omhHome,
    omhState: kernel.omhState,
    repoRoot: kernel.repoRoot,
    launchTaps: async () => launchTaps,
    adapter: (name) => kernel.adapter(name),
    renderHarness: (adapter, projectDir) => kernel.renderHarness(adapter, projectDir),
    rereadSettings: () => kernel.rereadSettings(),
    resolveRuntime: kernel.resolveRuntime.bind(kernel),
  }
}
