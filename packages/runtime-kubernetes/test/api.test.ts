// The runtime's API code against recorded exchanges: the official client
// talks HTTP and WebSocket to a scripted API server that answers as a
// cluster does, and fails on any request the recording does not expect.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { ContainerSpec, RuntimeContext } from '@omh/plugin-api'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { defineKubernetesRuntime, kubernetesSettings } from '../src/index.js'
import { sessionSpec } from './fixtures.js'
import { exchanges, replay, type Replay } from './replay.js'

let dir: string
let server: Replay | undefined
const progress: string[] = []

// The client is large; loading it once up front keeps each test's time its own.
beforeAll(async () => {
  await import('@kubernetes/client-node')
}, 60_000)

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'omh-kube-'))
  progress.length = 0
})
afterEach(async () => {
  await server?.close()
  server = undefined
  rmSync(dir, { recursive: true, force: true })
})

const against = async (name: string): Promise<RuntimeContext> => {
  server = await replay(exchanges(name))
  return { env: { KUBECONFIG: server.kubeconfig(dir), HOME: dir }, progress: (line) => progress.push(line), verbose: false }
}

const done = () => {
  expect(server!.unexpected).toEqual([])
  expect(server!.pending()).toEqual([])
}

/** The session fixture with its host paths made real. */
function sessionOnDisk(): ContainerSpec {
  const at = (p: string) => path.join(dir, 'host', p)
  for (const d of ['work', 'shadow', 'staged/agents']) mkdirSync(at(d), { recursive: true })
  writeFileSync(at('claude.json'), '{}')
  writeFileSync(at('staged/CLAUDE.md'), '# Rules\n')
  writeFileSync(at('staged/agents/reviewer.md'), 'Review.\n')
  writeFileSync(at('staged/agents/lint.sh'), '#!/bin/sh\n')
  chmodSync(at('staged/agents/lint.sh'), 0o755)
  const hosts = [at('work'), at('shadow'), at('claude.json'), at('staged/CLAUDE.md'), at('staged/agents')]
  return { ...sessionSpec, mounts: sessionSpec.mounts.map((m, n) => ({ ...m, host: hosts[n]! })) }
}

const runtime = defineKubernetesRuntime({ startTimeoutMs: 20_000 })

describe('detect', () => {
  it('answers with the server version, the context and the namespace', async () => {
    const context = await against('detect')
    expect(await runtime.detect(context)).toEqual({ engine: 'kubernetes', version: 'v1.31.2', endpoint: `replay (${server!.url}), namespace omh` })
    done()
  })

  it('says the cluster refuses the credentials, with what to do', async () => {
    const context = await against('detect-unauthorized')
    const found = await runtime.detect(context)
    expect(found).toMatchObject({ engine: 'kubernetes', reason: expect.stringMatching(/refuses these credentials/), hint: expect.stringMatching(/Log in/) })
    done()
  })

  it('says there is no kubeconfig without asking anything', async () => {
    expect(await runtime.detect({ env: { HOME: dir }, progress: () => undefined, verbose: false })).toMatchObject({ reason: expect.stringMatching(/no kubeconfig/) })
    expect(await runtime.detect({ env: { KUBECONFIG: path.join(dir, 'nope') }, progress: () => undefined, verbose: false })).toMatchObject({ reason: expect.stringMatching(/no kubeconfig/) })
  })

  it('uses the context settings name, and refuses one the kubeconfig lacks', async () => {
    const context = await against('detect')
    expect(await defineKubernetesRuntime({ context: 'other' }).detect(context)).toMatchObject({ endpoint: `other (${server!.url}), namespace elsewhere` })
    expect(await defineKubernetesRuntime({ context: 'missing' }).detect(context)).toEqual({
      engine: 'kubernetes',
      reason: 'the kubeconfig has no context missing',
      hint: expect.stringContaining('[runtimes.kubernetes] context'),
    })
  })
})

describe('settings', () => {
  it('takes context, namespace and the claims\' size and class from its settings table, over what it was defined with', async () => {
    const context = await against('configured')
    const configured = defineKubernetesRuntime({ startTimeoutMs: 20_000, context: 'missing', storage: '1Gi' })
    configured.configure!({ context: 'other', namespace: 'team-a', claim: '50Gi', storage_class: 'fast-ssd' })
    expect(await configured.detect(context)).toMatchObject({ endpoint: `other (${server!.url}), namespace team-a` })
    expect(await configured.volumes!.create('omh-3f2a9c0d1e4b-s01-work', { 'omh.repo': '3f2a9c0d1e4b', 'omh.session': 's01', 'omh.volume': 'work', 'omh.worktree': '/home/me/w' }, context)).toBe(true)
    done()
  })

  it('goes back to what it was defined with when the table is empty', async () => {
    const context = await against('volumes')
    const configured = defineKubernetesRuntime({ startTimeoutMs: 20_000 })
    configured.configure!({ namespace: 'team-a', claim: '50Gi' })
    configured.configure!({})
    expect(await configured.volumes!.create('omh-3f2a9c0d1e4b-s01-work', { 'omh.repo': '3f2a9c0d1e4b', 'omh.session': 's01', 'omh.volume': 'work', 'omh.worktree': '/home/me/w' }, context)).toBe(true)
    expect(server!.received.at(-1)!.body).toMatchObject({ spec: { resources: { requests: { storage: '10Gi' } } } })
    expect((server!.received.at(-1)!.body as { spec: object }).spec).not.toHaveProperty('storageClassName')
  })

  it('refuses unknown keys and values Kubernetes would not take, key by key', () => {
    const parse = (table: unknown) => kubernetesSettings.safeParse(table)
    expect(parse({ context: 'prod', namespace: 'omh-sessions', claim: '500Mi', storage_class: 'fast.ssd-1' }).success).toBe(true)
    const paths = (table: unknown) => (parse(table).error?.issues ?? []).map((i) => [i.code, ...i.path].join(' '))
    expect(paths({ clam: '10Gi' })).toEqual(['unrecognized_keys'])
    expect(paths({ namespace: 'Team_A', claim: '10 GB', storage_class: 'Fast', context: '' })).toEqual(['too_small context', 'invalid_format namespace', 'invalid_format claim', 'invalid_format storage_class'])
    expect(paths({ namespace: 'a'.repeat(64), claim: 10 })).toEqual(['too_big namespace', 'invalid_type claim'])
  })
})

describe('up', () => {
  it('creates the claim, the Secret, the ConfigMaps, then the Pod, and waits until it runs', async () => {
    const context = await against('session-up')
    expect(await runtime.up({ ...sessionOnDisk(), ports: [{ guest: 22 }] }, context)).toBe('omh-3f2a9c0d1e4b-s01')
    done()
    expect(progress.join('\n')).toContain('`kubectl port-forward -n omh pod/omh-3f2a9c0d1e4b-s01 2222:22`) and run `omh attach --port 2222`')
    const bodies = server!.received.filter((r) => r.method === 'POST').map((r) => r.body as { kind: string; data?: Record<string, string> })
    expect(bodies.find((b) => b.kind === 'ConfigMap')!.data).toEqual({ k0: '# Rules\n' })
    expect(bodies.filter((b) => b.kind === 'ConfigMap')[1]!.data).toEqual({ k0: '#!/bin/sh\n', k1: 'Review.\n' })
    expect(progress.join('\n')).toMatch(/no process limit per Pod/)
  })

  it('keeps the claim of an earlier container of the session', async () => {
    const context = await against('session-up-claim-kept')
    expect(await runtime.up(sessionOnDisk(), context)).toBe('omh-3f2a9c0d1e4b-s01')
    done()
  })

  it('removes what it made when the image cannot be pulled, and says to push it', async () => {
    const context = await against('session-up-pull-fails')
    const error = await runtime.up(sessionOnDisk(), context).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'CONTAINER_FAILED', message: expect.stringMatching(/ErrImagePull/), hint: expect.stringMatching(/omh images push/) })
    done()
  })

  it('refuses a description a Pod cannot run before asking the cluster anything', async () => {
    const context = await against('detect')
    await expect(runtime.up({ ...sessionOnDisk(), network: 'omh-egress' }, context)).rejects.toMatchObject({ code: 'CONTAINER_FAILED', message: expect.stringMatching(/cluster's network/) })
    expect(server!.received).toEqual([])
  })
})

describe('list, inspect and down', () => {
  it('lists by label, matching labels a selector cannot hold on the annotation', async () => {
    const context = await against('list')
    const found = await runtime.list({ 'omh.repo': '3f2a9c0d1e4b', 'omh.worktree': '/home/me/.omh/state/worktrees/3f2a/s01' }, context)
    expect(found.map((c) => [c.name, c.running])).toEqual([
      ['omh-3f2a9c0d1e4b-s01', true],
      ['omh-3f2a9c0d1e4b-s03', false],
    ])
    expect(found[0]).toMatchObject({ id: 'omh-3f2a9c0d1e4b-s01', image: 'registry.example.com/omh/omh-claude:0123456789abcdef', labels: { 'omh.session': 's01', 'omh.worktree': '/home/me/.omh/state/worktrees/3f2a/s01' } })
    expect(found[0]!.ports).toBeUndefined()
    done()
  })

  it('inspects a Pod, and a missing one is undefined', async () => {
    const context = await against('inspect')
    expect(await runtime.inspect!('omh-3f2a9c0d1e4b-s01', context)).toMatchObject({ running: true, name: 'omh-3f2a9c0d1e4b-s01' })
    expect(await runtime.inspect!('omh-nothing-s09', context)).toBeUndefined()
    done()
  })

  it('removes the Pod with its ConfigMaps and Secret, and a Pod already gone is not an error', async () => {
    const context = await against('down')
    await runtime.down('omh-3f2a9c0d1e4b-s01', context)
    await runtime.down('omh-3f2a9c0d1e4b-s01', context)
    done()
  })
})

describe('exec', () => {
  it('captures stdout and stderr apart and returns the exit code', async () => {
    const context = await against('exec')
    expect(await runtime.exec('omh-3f2a9c0d1e4b-s01', ['sh', '-c', 'exit 3'], { tty: false, capture: true, user: '1000:1000', workdir: '/work', env: { OMH_HARNESS: 'claude' } }, context)).toEqual({ exitCode: 3, stdout: 'hello\n', stderr: 'careful\n' })
    expect(await runtime.exec('omh-3f2a9c0d1e4b-s01', ['true'], { tty: false, capture: true }, context)).toEqual({ exitCode: 0, stdout: 'ok\n', stderr: '' })
    await expect(runtime.exec('omh-nothing-s09', ['true'], { tty: false, capture: true }, context)).rejects.toMatchObject({ code: 'CONTAINER_FAILED', message: expect.stringMatching(/not found/) })
    done()
    const [first] = server!.received as { body: { command: string[] } }[]
    // The API takes no user, directory or environment: a prologue checks and sets them, then runs argv.
    expect(first!.body.command.slice(3)).toEqual(['omh-exec', '1000:1000', '/work', 'OMH_HARNESS=claude', 'sh', '-c', 'exit 3'])
  })
})

describe('images', () => {
  it('builds nothing, and takes only registry tags as present', async () => {
    const context = { env: {}, progress: () => undefined, verbose: false }
    expect(await runtime.hasImage('localhost/omh-claude:0123', context)).toBe(false)
    expect(await runtime.hasImage('registry.example.com/omh/omh-claude:0123', context)).toBe(true)
    await expect(runtime.build({ tag: 'localhost/omh-base:1', containerfile: 'FROM x', labels: {} }, context)).rejects.toMatchObject({ code: 'IMAGE_BUILD_FAILED', hint: expect.stringMatching(/\[image\] registry/) })
  })
})

describe('the copied way', () => {
  it('answers copied without looking', async () => {
    expect(await runtime.fileWays!({ dir: '/nowhere', file: 'x', token: 't', image: 'i' }, { env: {}, progress: () => undefined, verbose: false })).toEqual({ ways: ['copied'] })
  })

  it('keeps volumes as claims: made once, listed by label, removed, gone already is fine', async () => {
    const context = await against('volumes')
    const labels = { 'omh.repo': '3f2a9c0d1e4b', 'omh.session': 's01', 'omh.volume': 'work', 'omh.worktree': '/home/me/w' }
    expect(await runtime.volumes!.create('omh-3f2a9c0d1e4b-s01-work', labels, context)).toBe(true)
    expect(await runtime.volumes!.create('omh-3f2a9c0d1e4b-s01-work', labels, context)).toBe(false)
    expect(await runtime.volumes!.list({ 'omh.session': 's01', 'omh.worktree': '/home/me/w' }, context)).toEqual(['omh-3f2a9c0d1e4b-s01-work'])
    await runtime.volumes!.remove('omh-3f2a9c0d1e4b-s01-work', context)
    await runtime.volumes!.remove('omh-3f2a9c0d1e4b-s01-work', context)
    done()
  })

  it('moves archives in and out through a hardened helper Pod beside the Pod using the claim, and removes it', async () => {
    const context = await against('volume-archives')
    const helper = { image: 'registry.example.com/omh/omh-base:fedcba9876543210', owner: { uid: 1000, gid: 1000 } }
    const archive = path.join(dir, 'in.tar')
    writeFileSync(archive, Buffer.alloc(10240, 7))
    await runtime.volumes!.put('omh-3f2a9c0d1e4b-s01-work', archive, helper, context)
    expect(server!.stdin).toEqual([readFileSync(archive)])
    const back = path.join(dir, 'out.tar')
    await runtime.volumes!.get('omh-3f2a9c0d1e4b-s01-work', back, helper, context)
    const sent = exchanges('volume-archives').find((e) => e.frames?.[0]?.[2] === 'base64')!.frames![0]![1]
    expect(readFileSync(back)).toEqual(Buffer.from(sent, 'base64'))
    await expect(runtime.volumes!.get('omh-3f2a9c0d1e4b-s01-work', back, helper, context)).rejects.toMatchObject({ code: 'CONTAINER_FAILED', message: expect.stringMatching(/Permission denied/) })
    done()
  })

  it('reads a claim through the running Pod that mounts it, without a helper', async () => {
    const context = await against('volume-get-via')
    const back = path.join(dir, 'via.tar')
    await runtime.volumes!.get('omh-3f2a9c0d1e4b-s01-work', back, { image: 'unused', owner: { uid: 1000, gid: 1000 }, via: { container: 'omh-3f2a9c0d1e4b-s01', guest: '/work' } }, context)
    const sent = exchanges('volume-get-via').find((e) => e.frames)!.frames![0]![1]
    expect(readFileSync(back)).toEqual(Buffer.from(sent, 'base64'))
    done()
  })
})
