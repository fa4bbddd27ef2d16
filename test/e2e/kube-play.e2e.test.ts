// The Kubernetes runtime's Pod, run for real: the objects it generates for a
// session go to `podman kube play`, a pod runner that reads Kubernetes YAML,
// and the session is checked from inside. No Kubernetes API server can run on
// these machines; what Podman 4.3 does not honour is said where it matters.
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { ContainerSpec } from '@omh/plugin-api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allObjects, manifests, readMounts, type Limits } from '../../packages/runtime-kubernetes/src/index.js'
import { SESSION_SHAPE } from '../../packages/runtime-kubernetes/test/fixtures.js'
import { RUN_LABELS, TEST_BASE, TEST_RUN } from '../helpers/engines.js'

const podman = (args: readonly string[], input?: string) => spawnSync('podman', args, { encoding: 'utf8', ...(input === undefined ? {} : { input }) })
const name = `omh-kube-e2e-${TEST_RUN}`.toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, 50)
const claims = { work: `${name}-cwork`, staged: `${name}-cstaged` }
const MEMORY = 256 * 1024 * 1024

let dir: string
let objects: Record<string, unknown>[]
/** Every podman volume, secret and pod this file makes, by name, for cleanup. */
const made = { volumes: new Set<string>([claims.work, claims.staged]), secrets: new Set<string>(), pods: new Set<string>([name]) }

/** A volume of the copied way, filled from a tar archive as `volumes.put` fills a claim. */
function filledVolume(volume: string, files: Record<string, string>): void {
  const src = path.join(dir, `src-${volume}`)
  mkdirSync(src)
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(src, file), text)
  const archive = path.join(dir, `${volume}.tar`)
  execFileSync('tar', ['-c', '-f', archive, '--owner=1000', '--group=1000', '-C', src, '.'])
  execFileSync('podman', ['volume', 'create', ...Object.entries(RUN_LABELS).flatMap(([k, v]) => ['--label', `${k}=${v}`]), volume], { stdio: 'pipe' })
  execFileSync('podman', ['volume', 'import', volume, archive], { stdio: 'pipe' })
}

const inside = (script: string) => {
  const result = podman(['exec', `${name}-session`, 'sh', '-c', script])
  return { code: result.status, out: result.stdout.trim(), err: result.stderr.trim() }
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'omh-kube-play-'))
  const staged = path.join(dir, 'staged')
  mkdirSync(path.join(staged, 'agents'), { recursive: true })
  writeFileSync(path.join(staged, 'CLAUDE.md'), '# Rules\n\nBe brief.\n')
  writeFileSync(path.join(staged, 'agents', 'reviewer.md'), '---\nname: reviewer\n---\nReview.\n')
  writeFileSync(path.join(staged, 'agents', 'lint.sh'), '#!/bin/sh\necho linted\n')
  chmodSync(path.join(staged, 'agents', 'lint.sh'), 0o755)
  filledVolume(claims.work, { 'hello.txt': 'from the worktree\n' })
  filledVolume(claims.staged, { 'profile.txt': 'staged profile\n' })

  const spec: ContainerSpec & { limits: Limits } = {
    image: TEST_BASE,
    name,
    mounts: [
      { host: path.join(staged, 'CLAUDE.md'), guest: '/home/agent/.claude/CLAUDE.md', readOnly: true },
      { host: path.join(staged, 'agents'), guest: '/home/agent/.claude/agents', readOnly: true },
    ],
    volumes: [
      { volume: claims.work, guest: '/work', readOnly: false },
      { volume: claims.staged, guest: '/omh/staged', readOnly: true },
    ],
    env: { HOME: '/home/agent', API_TOKEN: 'kept-in-a-secret' },
    labels: { ...RUN_LABELS, 'omh.session': 's01', 'omh.worktree': '/not/a/label/value' },
    ...SESSION_SHAPE,
    limits: { memory: MEMORY, cpus: 0.5, pids: 512 },
  }
  objects = allObjects(manifests({ spec, name, namespace: 'default', content: await readMounts(spec.mounts), storage: '1Gi' }))

  // Podman 4.3 cannot read a Secret from YAML: it takes one made beforehand, as a JSON map of base64 values.
  const secret = objects.find((o) => o['kind'] === 'Secret') as { metadata: { name: string }; stringData: Record<string, string> }
  const values = Object.fromEntries(Object.entries(secret.stringData).map(([k, v]) => [k, Buffer.from(v).toString('base64')]))
  const secretFile = path.join(dir, 'secret.json')
  writeFileSync(secretFile, JSON.stringify(values))
  execFileSync('podman', ['secret', 'create', secret.metadata.name, secretFile], { stdio: 'pipe' })
  made.secrets.add(secret.metadata.name)
  for (const o of objects) if (o['kind'] === 'ConfigMap') made.volumes.add((o['metadata'] as { name: string }).name)

  // Podman 4.3 also refuses an annotation value longer than 63 characters (Kubernetes allows
  // 256 KiB in all), so the annotation holding every label stays out of what it plays.
  const played = objects.filter((o) => o['kind'] !== 'Secret').map((o) => ({ ...o, metadata: { ...(o['metadata'] as object), annotations: {} } }))
  const yaml = path.join(dir, 'pod.yaml')
  writeFileSync(yaml, played.map((o) => `---\n${JSON.stringify(o)}\n`).join(''))
  const play = podman(['kube', 'play', yaml])
  if (play.status !== 0) throw new Error(`podman kube play failed: ${play.stderr}`)
}, 120_000)

afterAll(() => {
  for (const pod of made.pods) podman(['pod', 'rm', '-f', '--time', '0', pod])
  for (const secret of made.secrets) podman(['secret', 'rm', secret])
  for (const volume of made.volumes) podman(['volume', 'rm', '-f', volume])
  rmSync(dir, { recursive: true, force: true })
})

describe('the generated Pod under podman kube play', () => {
  it('runs as UID 1000 with no capabilities and no way to gain privileges', () => {
    expect(inside('id -u; id -g').out).toBe('1000\n1000')
    const status = inside('grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs):" /proc/self/status').out
    expect(status).toMatch(/CapEff:\s+0000000000000000/)
    expect(status).toMatch(/CapPrm:\s+0000000000000000/)
    expect(status).toMatch(/CapBnd:\s+0000000000000000/)
    expect(status).toMatch(/NoNewPrivs:\s+1/)
  })

  it('runs under the memory and CPU limits', () => {
    const v1 = inside('cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us 2>/dev/null')
    const limits = v1.code === 0 ? v1.out.split('\n').map(Number) : inside('cat /sys/fs/cgroup/memory.max; tr " " "\\n" </sys/fs/cgroup/cpu.max').out.split('\n').map(Number)
    expect(limits[0]).toBe(MEMORY)
    expect(limits[1]! / limits[2]!).toBe(0.5)
  })

  it('has the environment from its Secret, and the Pod spec holds no value of it', () => {
    expect(inside('printf %s "$API_TOKEN"').out).toBe('kept-in-a-secret')
    expect(JSON.stringify(objects.find((o) => o['kind'] === 'Pod'))).not.toContain('kept-in-a-secret')
  })

  it('shows the staged files of its ConfigMaps, read-only', () => {
    expect(inside('cat /home/agent/.claude/agents/reviewer.md').out).toBe('---\nname: reviewer\n---\nReview.')
    expect(inside('cat /home/agent/.claude/agents/lint.sh').out).toBe('#!/bin/sh\necho linted')
    // Podman 4.3 ignores subPath: the single file appears inside a directory of its name, where
    // a cluster puts the file itself.
    const file = inside('f=/home/agent/.claude/CLAUDE.md; if [ -d "$f" ]; then cat "$f/CLAUDE.md"; else cat "$f"; fi')
    expect(file.out).toBe('# Rules\n\nBe brief.')
    expect(inside('echo x > /home/agent/.claude/agents/new.md').code).not.toBe(0)
  })

  it('has its claims: the worktree writable by the agent, the staged claim read-only', () => {
    expect(inside('cat /work/hello.txt').out).toBe('from the worktree')
    expect(inside('echo made > /work/made.txt && cat /work/made.txt').out).toBe('made')
    expect(inside('cat /omh/staged/profile.txt').out).toBe('staged profile')
    expect(inside('touch /omh/staged/x').code).not.toBe(0)
  })

  it('reaps orphans: the process namespace is shared, with an init as PID 1', () => {
    expect(inside('cat /proc/1/cmdline | tr "\\0" " "').out).not.toMatch(/^sleep/)
  })
})
