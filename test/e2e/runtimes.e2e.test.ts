// Both runtime plugins against real engines: images built from omh's own
// recipes, a session-like container checked from inside, one-shot runs,
// listing by label, and removal.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { ensureImage, planImages, type ImageAdapter, type ImagePlan } from '@omh/sandbox'
import type { ContainerSpec, RuntimePlugin } from '@omh/plugin-api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, RUN_LABELS, TEST_LABELS, cleanupContainers, client, engineContext, freePort, requireEngine, runtimeOf, testImageOptions, testNetwork, type Engine } from '../helpers/engines.js'
import { testdir, write } from '@omh/test-utils'

/** A harness whose install reaches the npm registry over TLS as root, like real adapters do. */
const probe: ImageAdapter = {
  name: 'e2e-probe',
  bin: 'probe',
  install: 'npm install -g semver@7\nprintf \'#!/bin/sh\\necho "probe $*"\\n\' >$OMH_PREFIX/bin/probe\nchmod 755 $OMH_PREFIX/bin/probe',
  bindings: [{ capability: 'rules', path: '/home/agent/.probe/config/rules.md', also: ['/work/RULES.md'], render: 'concat', options: undefined }],
  creds: ['/home/agent/.probe-auth/'],
  token: [],
}

/** Reads what a TCP server at host:port says first; rejects when nothing listens. */
const greeting = (host: string, port: number) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(port, host)
    let text = ''
    socket.setTimeout(5000, () => socket.destroy(new Error('timeout')))
    socket.on('data', (d) => (text += String(d)))
    socket.on('end', () => resolve(text))
    socket.on('error', reject)
  })

const nonLoopbackAddress = () =>
  Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address

describe.each(ENGINES)('%s runtime against the real engine', (engine: Engine) => {
  let runtime: RuntimePlugin
  let plan: ImagePlan
  const context = engineContext(engine)
  const name = `omh-e2e-${engine}-${process.pid}`

  beforeAll(async () => {
    await requireEngine(engine)
    runtime = runtimeOf(engine)
    plan = planImages(probe, testImageOptions())
    // Left by an interrupted run; the toolset and the environment may stay, other test files share them.
    client(engine, ['rmi', plan.harness.tag])
    client(engine, ['rmi', plan.tools.tag])
  })

  afterAll(() => cleanupContainers(engine))

  it('detect answers with the engine version', async () => {
    const found = await runtime.detect(context)
    expect(found).toMatchObject({ engine, version: expect.stringMatching(/^\d+\.\d+/) })
  })

  it('builds the toolset, the harness tools, the environment and the session image from the recipes, streaming progress, then reuses them', async () => {
    const shared = [plan.toolset, ...plan.environment.recipes]
    const there = new Set<string>()
    for (const r of shared) if (await runtime.hasImage(r.tag, context)) there.add(r.tag)
    const first = await ensureImage(runtime, plan, context)
    expect(first.tag).toBe(plan.harness.tag)
    expect(first.built).toEqual([plan.toolset, plan.tools, ...plan.environment.recipes, plan.harness].map((r) => r.tag).filter((t) => !there.has(t)))
    expect(context.lines.some((l) => l.includes('semver'))).toBe(true)
    for (const r of shared) expect(await runtime.hasImage(r.tag, context)).toBe(true)
    expect(await ensureImage(runtime, plan, context)).toEqual({ tag: plan.harness.tag, built: [] })
    const labels = JSON.parse(client(engine, ['image', 'inspect', '--format', '{{json .Config.Labels}}', plan.harness.tag]).stdout)
    expect(labels).toMatchObject({ 'omh.kind': 'harness', 'omh.adapter': 'e2e-probe', 'omh.from': plan.environment.from, 'omh.tools': plan.tools.tag, ...TEST_LABELS })
  })

  it('a missing image is false, not a failure', async () => {
    expect(await runtime.hasImage('localhost/omh-e2e-absent:0000000000000000', context)).toBe(false)
  })

  it('the image runs as agent (UID 1000, home /home/agent) with git, jq, sshd and dtach, and mount parents owned by agent', async () => {
    const result = await runtime.run(
      {
        image: plan.harness.tag,
        mounts: [],
        env: {},
        labels: RUN_LABELS,
        workdir: '/work',
        user: 'agent',
        network: 'none',
        argv: ['sh', '-c', 'id -u; id -un; echo "$HOME"; pwd; for c in git jq dtach probe semver; do command -v $c; done; test -x /opt/omh/libexec/sshd && echo sshd; stat -c %U /home/agent/.probe /home/agent/.probe/config /omh/sock; ls /etc/ssh | grep -c host_key || true'],
      },
      context,
    )
    expect(result.exitCode).toBe(0)
    expect(result.stdout.trim().split('\n')).toEqual([
      '1000',
      'agent',
      '/home/agent',
      '/work',
      '/usr/bin/git',
      '/usr/bin/jq',
      '/opt/omh/bin/dtach',
      '/opt/omh/bin/probe',
      '/opt/omh/bin/semver',
      'sshd',
      'agent',
      'agent',
      'agent',
      '0',
    ])
  })

  describe('a session container', () => {
    let dir: string
    let work: string
    let rules: string
    let config: string
    let id: string
    let port: number
    const labels = { ...RUN_LABELS, 'omh.session': `s-${engine}` }

    beforeAll(async () => {
      // Not testdir(): that is removed after each test, and these mounts live for the whole block.
      dir = mkdtempSync(path.join(os.tmpdir(), 'omh-e2e-'))
      write(dir, {
        'work/README.md': 'hello\n',
        'work/RULES.md': '',
        'stage/rules.md': 'staged rules\n',
        'stage/config/rules.md': 'staged config\n',
      })
      work = path.join(dir, 'work')
      rules = path.join(dir, 'stage/rules.md')
      config = path.join(dir, 'stage/config')
      for (const p of [work, path.join(work, 'README.md'), path.join(work, 'RULES.md')]) chmodSync(p, 0o777)
      port = await freePort()
      const network = testNetwork(engine, 'ports')
      const spec: ContainerSpec = {
        image: plan.harness.tag,
        name,
        mounts: [
          { host: work, guest: '/work', readOnly: false },
          { host: rules, guest: '/work/RULES.md', readOnly: true },
          { host: config, guest: '/home/agent/.probe/config', readOnly: true },
        ],
        env: { OMH_SESSION: 's01', PROBE_TOKEN: 'not-on-the-command-line' },
        labels,
        workdir: '/work',
        user: 'agent',
        argv: ['node', '-e', 'require("net").createServer((s) => s.end("omh\\n")).listen(8022); setInterval(() => {}, 1 << 30)'],
        network,
        ports: [{ host: port, guest: 8022 }],
        capDrop: ['ALL'],
        noNewPrivileges: true,
        init: true,
      }
      id = await runtime.up(spec, context)
    })

    afterAll(async () => {
      await runtime.down(name, context)
      rmSync(dir, { recursive: true, force: true })
    })

    const sh = (script: string) => runtime.exec(id, ['sh', '-c', script], { tty: false, capture: true }, context)

    it('runs detached and is not removed when it exits', () => {
      expect(id).toMatch(/^[0-9a-f]{64}$/)
      expect(client(engine, ['inspect', '--format', '{{.HostConfig.AutoRemove}}', id]).stdout.trim()).toBe('false')
    })

    it('runs as agent with no capabilities and no new privileges', async () => {
      const result = await sh('id -u; grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; pwd; echo "$OMH_SESSION $PROBE_TOKEN"')
      expect(result.stdout.trim().split('\n')).toEqual([
        '1000',
        'CapEff:\t0000000000000000',
        'NoNewPrivs:\t1',
        '/work',
        's01 not-on-the-command-line',
      ])
    })

    it('the worktree is writable, staged files and directories are not, and the home beside them is', async () => {
      const result = await sh(
        [
          'echo agent >/work/new.txt && echo W_WORK',
          '(echo x >/work/RULES.md) 2>/dev/null && echo W_RULES || echo RO_RULES',
          'cat /work/RULES.md',
          '(echo x >/home/agent/.probe/config/x) 2>/dev/null && echo W_CONFIG || echo RO_CONFIG',
          'cat /home/agent/.probe/config/rules.md',
          'echo y >/home/agent/.probe/beside && echo W_BESIDE',
        ].join('; '),
      )
      expect(result.stdout.trim().split('\n')).toEqual(['W_WORK', 'RO_RULES', 'staged rules', 'RO_CONFIG', 'staged config', 'W_BESIDE'])
      expect(readFileSync(path.join(work, 'new.txt'), 'utf8')).toBe('agent\n')
      expect(readFileSync(rules, 'utf8')).toBe('staged rules\n')
      expect(existsSync(path.join(config, 'x'))).toBe(false)
    })

    it('exec resolves the process exit status', async () => {
      expect((await sh('echo out; echo err >&2; exit 7'))).toEqual({ exitCode: 7, stdout: 'out\n', stderr: 'err\n' })
    })

    it('publishes ports on 127.0.0.1 only', async () => {
      expect(await greeting('127.0.0.1', port)).toBe('omh\n')
      const outside = nonLoopbackAddress()
      if (outside) await expect(greeting(outside, port)).rejects.toThrow()
      expect(client(engine, ['port', id]).stdout.trim()).toBe(`8022/tcp -> 127.0.0.1:${port}`)
    })

    it('is listed by its labels, with its name, image, state and published ports', async () => {
      const found = await runtime.list(labels, context)
      const ports = [{ guest: 8022, host: port, hostIp: '127.0.0.1' }]
      expect(found).toEqual([{ id, name, running: true, image: plan.harness.tag, labels: expect.objectContaining(labels), ports }])
      expect(await runtime.list({ ...labels, 'omh.session': 'nobody' }, context)).toEqual([])
    })

    it('is found by its name or id, with its state, labels and published ports; a name nothing has is undefined', async () => {
      const ports = [{ guest: 8022, host: port, hostIp: '127.0.0.1' }]
      const found = { id, name, running: true, image: plan.harness.tag, labels: expect.objectContaining(labels), ports }
      expect(await runtime.inspect!(name, context)).toEqual(found)
      expect(await runtime.inspect!(id, context)).toEqual(found)
      expect(await runtime.inspect!(`${name}-absent`, context)).toBeUndefined()
    })

    it('exec into a container that is gone fails with CONTAINER_FAILED when output is captured', async () => {
      await expect(runtime.exec(`${name}-absent`, ['true'], { tty: false, capture: true }, context)).rejects.toMatchObject({
        code: 'CONTAINER_FAILED',
      })
    })

    it('down removes it, and a second down is not an error', async () => {
      await runtime.down(id, context)
      expect(await runtime.list(labels, context)).toEqual([])
      expect(await runtime.inspect!(name, context)).toBeUndefined()
      await expect(runtime.down(id, context)).resolves.toBeUndefined()
    })
  })

  it('a one-shot run is removed when it exits and passes its exit status on', async () => {
    const labels = { ...RUN_LABELS, 'omh.oneshot': engine }
    const result = await runtime.run(
      { image: plan.harness.tag, mounts: [], env: {}, labels, workdir: '/work', user: 'agent', network: 'none', argv: ['sh', '-c', 'probe hi; exit 3'] },
      context,
    )
    expect(result).toEqual({ exitCode: 3, stdout: 'probe hi\n', stderr: '' })
    expect(await runtime.list(labels, context)).toEqual([])
  })

  it('a missing host path fails the container and is never created on the host', async () => {
    const dir = testdir()
    const missing = path.join(dir, 'absent')
    await expect(
      runtime.up(
        { image: plan.harness.tag, name: `${name}-bad`, mounts: [{ host: missing, guest: '/work/absent', readOnly: true }], env: {}, labels: RUN_LABELS, workdir: '/work', user: 'agent', network: 'none', argv: ['true'] },
        context,
      ),
    ).rejects.toMatchObject({ code: 'CONTAINER_FAILED', message: expect.stringMatching(new RegExp(`^${engine} could not start the container ${name}-bad: Command failed with exit code 125`)) })
    expect(existsSync(missing)).toBe(false)
    await runtime.down(`${name}-bad`, context)
  })

  it('a failing build is IMAGE_BUILD_FAILED, names the adapter file, and tags nothing', async () => {
    const broken = planImages({ ...probe, name: 'e2e-broken', install: 'echo about to fail; exit 9' }, testImageOptions())
    const error = await ensureImage(runtime, broken, context, '/adapters/e2e-broken.toml').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'IMAGE_BUILD_FAILED', exit: 1, hint: expect.stringContaining('`install` from /adapters/e2e-broken.toml') })
    expect(context.lines).toContain('about to fail')
    expect(await runtime.hasImage(broken.harness.tag, context)).toBe(false)
  })
})
