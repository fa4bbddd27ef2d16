// The Kubernetes runtime against a real cluster: runs only when KUBECONFIG
// names one, and says so plainly when it does not. The image must be one the
// cluster can pull (OMH_KUBE_TEST_IMAGE, any image with sh, tar and id).
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { ContainerSpec, RuntimeContext } from '@omh/plugin-api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defineKubernetesRuntime } from '../../packages/runtime-kubernetes/src/index.js'
import { SESSION_SHAPE } from '../../packages/runtime-kubernetes/test/fixtures.js'
import { RUN_LABELS, TEST_RUN } from '../helpers/engines.js'

const KUBECONFIG = process.env['KUBECONFIG']
const IMAGE = process.env['OMH_KUBE_TEST_IMAGE'] ?? 'docker.io/library/debian:bookworm-slim'

describe.runIf(!KUBECONFIG)('the Kubernetes runtime against a real cluster', () => {
  it('is SKIPPED: KUBECONFIG is not set, so no cluster was asked anything', () => {
    process.stderr.write('\n  kubernetes.e2e: SKIPPED, KUBECONFIG is not set. Point it at a cluster (and OMH_KUBE_TEST_IMAGE at an image it can pull) to run it.\n\n')
  })
})

describe.runIf(Boolean(KUBECONFIG))('the Kubernetes runtime against a real cluster', () => {
  const runtime = defineKubernetesRuntime({ ...(process.env['OMH_KUBE_TEST_NAMESPACE'] ? { namespace: process.env['OMH_KUBE_TEST_NAMESPACE'] } : {}), storage: '100Mi' })
  const context: RuntimeContext = { env: process.env, progress: (line) => process.stderr.write(`  [kubernetes] ${line}\n`), verbose: false }
  const name = `omh-kube-${TEST_RUN}`.toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, 40)
  const work = `${name}-work`
  const helper = { image: IMAGE, owner: { uid: 1000, gid: 1000 } }
  let dir: string

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'omh-kube-e2e-'))
    mkdirSync(path.join(dir, 'staged', 'agents'), { recursive: true })
    writeFileSync(path.join(dir, 'staged', 'CLAUDE.md'), '# Rules\n')
    writeFileSync(path.join(dir, 'staged', 'agents', 'reviewer.md'), 'Review.\n')
    mkdirSync(path.join(dir, 'tree'))
    writeFileSync(path.join(dir, 'tree', 'hello.txt'), 'from this machine\n')
    execFileSync('tar', ['-c', '-f', path.join(dir, 'in.tar'), '-C', path.join(dir, 'tree'), '.'])
  })

  afterAll(async () => {
    await runtime.down(name, context).catch(() => undefined)
    await runtime.volumes!.remove(work, context).catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  })

  it('detects the cluster', async () => {
    expect(await runtime.detect(context)).toMatchObject({ engine: 'kubernetes', version: expect.stringMatching(/^v1\./) })
  })

  it('runs a session Pod, hardened, with its files, and brings the work back', async () => {
    expect(await runtime.volumes!.create(work, RUN_LABELS, context)).toBe(true)
    await runtime.volumes!.put(work, path.join(dir, 'in.tar'), helper, context)
    const spec: ContainerSpec & { limits: { memory: number; cpus: number } } = {
      image: IMAGE,
      name,
      mounts: [
        { host: path.join(dir, 'staged', 'CLAUDE.md'), guest: '/home/agent/.claude/CLAUDE.md', readOnly: true },
        { host: path.join(dir, 'staged', 'agents'), guest: '/home/agent/.claude/agents', readOnly: true },
      ],
      volumes: [{ volume: work, guest: '/work', readOnly: false }],
      env: { HOME: '/home/agent', OMH_SESSION: 's01' },
      labels: { ...RUN_LABELS, 'omh.session': 's01', 'omh.worktree': dir },
      ...SESSION_SHAPE,
      limits: { memory: 256 * 1024 * 1024, cpus: 0.5 },
    }
    expect(await runtime.up(spec, context)).toBe(name)
    const sh = (script: string) => runtime.exec(name, ['sh', '-c', script], { tty: false, capture: true, user: '1000:1000', workdir: '/work' }, context)
    expect((await sh('id -u; id -g')).stdout).toBe('1000\n1000\n')
    const status = (await sh('grep -E "^(CapEff|NoNewPrivs):" /proc/self/status')).stdout
    expect(status).toMatch(/CapEff:\s+0000000000000000/)
    expect(status).toMatch(/NoNewPrivs:\s+1/)
    expect((await sh('cat /home/agent/.claude/CLAUDE.md /home/agent/.claude/agents/reviewer.md hello.txt')).stdout).toBe('# Rules\nReview.\nfrom this machine\n')
    expect((await sh('echo $OMH_SESSION; echo made > made.txt')).stdout).toBe('s01\n')
    expect((await sh('exit 7')).exitCode).toBe(7)

    expect((await runtime.list({ 'omh.session': 's01', 'omh.worktree': dir }, context)).map((c) => c.name)).toEqual([name])
    await runtime.down(name, context)
    await runtime.volumes!.get(work, path.join(dir, 'out.tar'), helper, context)
    const listing = execFileSync('tar', ['-t', '-f', path.join(dir, 'out.tar')], { encoding: 'utf8' })
    expect(listing).toMatch(/made\.txt/)
    execFileSync('tar', ['-x', '-f', path.join(dir, 'out.tar'), '-C', dir, './made.txt'])
    expect(readFileSync(path.join(dir, 'made.txt'), 'utf8')).toBe('made\n')
    await runtime.volumes!.remove(work, context)
  })
})
