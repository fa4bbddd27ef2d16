import { readFile, writeFile } from 'node:fs/promises'
import type { ContainerInfo, ContainerSpec, ExecOptions, FileWay, PublishedPort, RunResult, RuntimeContext, RuntimePlugin } from '@omh/plugin-api'

type FakeContainer = { spec: ContainerSpec; running: boolean; ports?: readonly PublishedPort[] }

/** A volume the fake engine keeps: its labels and the last archive put into it (an empty volume has none). */
export type FakeVolume = { labels: Readonly<Record<string, string>>; archive?: Buffer }

/** A runtime that keeps containers in memory and records every call: for unit tests of the session layer. */
export interface FakeRuntime extends RuntimePlugin {
  readonly containers: Map<string, FakeContainer>
  readonly calls: string[]
  readonly execs: { container: string; argv: readonly string[]; options: ExecOptions }[]
  /** Every exec whose output was captured (a liveness check, a proxy's reload), in order. */
  readonly captured: { container: string; argv: readonly string[] }[]
  /** What the liveness check finds running, per container name. */
  busy: Map<string, string[]>
  /** The harness's exit status. */
  status: number
  /** Make the next `up` fail with this message. */
  failUp: string | undefined
  /** Called while the harness "runs", before exec resolves. */
  during: ((container: string) => Promise<void>) | undefined
  /** What the engine was asked besides running things: `detect`, `inspect <name>`, `list`, `hasImage <tag>`. */
  readonly asked: string[]
  /** Whether the engine answers at all; when it does not, every question fails. */
  answering: boolean
  /** The images that exist; absent, every image does. */
  existing: Set<string> | undefined
  /** Called once `inspect` has taken its answer, before the caller has it: what happens meanwhile. */
  meanwhile: (() => void) | undefined
  /** The host port `up` publishes the next port without one on, as an engine picks a free one. */
  nextPort: number
  /** Whether `list` and `inspect` say which ports a container publishes here; a cluster's runtime does not. */
  publishes: boolean
  /** Where `detect` says the engine is (`DOCKER_HOST`'s value, say). */
  endpoint: string | undefined
  /** The ways `fileWays` answers, as if it had looked at the probe: `['copied']` plays an engine elsewhere. */
  ways: readonly FileWay[]
  /** The image of each `fileWays` question, in order. */
  readonly probed: string[]
  /** Called as `up` is asked for a container, after it is recorded; the container starts once this resolves. */
  starting: ((spec: ContainerSpec) => void | Promise<void>) | undefined
  /** Called as `fileWays` is asked; it answers once this resolves. */
  probing: ((context: RuntimeContext) => void | Promise<void>) | undefined
  /** The volumes the engine keeps, by name. */
  readonly volumeStore: Map<string, FakeVolume>
  /** The networks the engine has, by name, with the containers joined to each (only with `networks: true`). */
  readonly networkStore: Map<string, Set<string>>
}

/**
 * Options for a fake; `inspect: false` makes a runtime that cannot be asked for a container by name,
 * `ways: ['copied']` one whose engine does not see this disk (its containers get volumes),
 * `client: false` one without a client program to describe (its launches are never kept),
 * `networks: true` one that makes networks (a session behind an egress proxy).
 */
export function fakeRuntime(options: { engine?: string; inspect?: boolean; ways?: readonly FileWay[]; client?: boolean; networks?: boolean } = {}): FakeRuntime {
  const engine = options.engine ?? 'fake'
  const containers = new Map<string, FakeContainer>()
  const volumeStore = new Map<string, FakeVolume>()
  const networkStore = new Map<string, Set<string>>()
  const matches = (have: Readonly<Record<string, string>>, want: Readonly<Record<string, string>>) =>
    Object.entries(want).every(([k, v]) => (v === '' ? k in have : have[k] === v))
  const info = (name: string, c: FakeContainer): ContainerInfo => ({
    id: name,
    name,
    running: c.running,
    image: c.spec.image,
    labels: c.spec.labels,
    ...(fake.publishes ? { ports: c.running ? (c.ports ?? []) : [] } : {}),
  })
  const fake: FakeRuntime = {
    kind: 'runtime',
    apiVersion: 1,
    meta: { name: `${engine}-runtime`, version: '0.0.0' },
    engine,
    containers,
    calls: [],
    execs: [],
    captured: [],
    busy: new Map(),
    status: 0,
    failUp: undefined,
    during: undefined,
    asked: [],
    answering: true,
    existing: undefined,
    meanwhile: undefined,
    nextPort: 40_000,
    publishes: true,
    endpoint: undefined,
    ways: options.ways ?? ['mounted'],
    probed: [],
    probing: undefined,
    starting: undefined,
    volumeStore,
    networkStore,
    async detect() {
      fake.asked.push('detect')
      if (!fake.answering) return { engine, reason: 'installed, but the engine does not answer' }
      return { engine, version: '1', ...(fake.endpoint ? { endpoint: fake.endpoint } : {}) }
    },
    async hasImage(tag) {
      fake.asked.push(`hasImage ${tag}`)
      if (!fake.answering) throw new Error('the engine does not answer')
      return fake.existing?.has(tag) ?? true
    },
    async build() {},
    async up(spec) {
      fake.calls.push(`up ${spec.name}`)
      await fake.starting?.(spec)
      if (fake.failUp) {
        const message = fake.failUp
        fake.failUp = undefined
        throw new Error(message)
      }
      if (containers.has(spec.name!)) throw new Error(`name ${spec.name} in use`)
      // An engine mounts only volumes it has; a runtime that keeps none refuses a spec naming any.
      for (const v of spec.volumes ?? []) if (!volumeStore.has(v.volume)) throw new Error(`no such volume ${v.volume}`)
      const ports = (spec.ports ?? []).map((p) => ({ guest: p.guest, host: p.host ?? fake.nextPort++, hostIp: '127.0.0.1' }))
      containers.set(spec.name!, { spec, running: true, ports })
      // Started on a network the fake made, the container is one of its members, as on an engine.
      if (spec.network) networkStore.get(spec.network)?.add(spec.name!)
      return spec.name!
    },
    async exec(container, argv, options): Promise<RunResult> {
      const c = containers.get(container)
      if (!c?.running) throw new Error(`no running container ${container}`)
      if (options.capture) {
        fake.calls.push(`check ${container}`)
        fake.captured.push({ container, argv })
        const live = fake.busy.get(container) ?? []
        return { exitCode: 0, stdout: live.map((l, n) => `${n + 100} ${l}\n`).join(''), stderr: '' }
      }
      fake.calls.push(`exec ${container} ${argv.join(' ')}`)
      fake.execs.push({ container, argv, options })
      await fake.during?.(container)
      return { exitCode: fake.status, stdout: '', stderr: '' }
    },
    async run() {
      return { exitCode: 0, stdout: '', stderr: '' }
    },
    ...(options.client === false
      ? {}
      : {
          client: {
            exec: (container: string, argv: readonly string[]) => ({ file: 'fake', args: ['exec', container, ...argv], env: {}, stdio: ['inherit', 'inherit', 'inherit'] as const }),
            containerState: (names: readonly string[]) => ['inspect', ...names],
          },
        }),
    async list(labels) {
      fake.asked.push('list')
      if (!fake.answering) throw new Error('the engine does not answer')
      return [...containers]
        .filter(([, c]) => matches(c.spec.labels, labels))
        .map(([name, c]) => info(name, c))
    },
    ...(options.inspect === false
      ? {}
      : {
          async inspect(container: string) {
            fake.asked.push(`inspect ${container}`)
            if (!fake.answering) throw new Error('the engine does not answer')
            const c = containers.get(container)
            const answer = c ? info(container, c) : undefined
            fake.meanwhile?.()
            return answer
          },
        }),
    async down(container) {
      fake.calls.push(`down ${container}`)
      containers.delete(container)
    },
    // The probe is not looked at: the fake plays an engine that does or does not see this disk.
    async fileWays(probe, context) {
      fake.probed.push(probe.image)
      await fake.probing?.(context)
      if (!fake.answering) throw new Error('the engine does not answer')
      return fake.ways.includes('mounted') ? { ways: fake.ways } : { ways: fake.ways, why: `the ${engine} engine does not see this disk` }
    },
    ...(options.networks
      ? {
          networks: {
            async create(name: string) {
              if (networkStore.has(name)) return
              fake.calls.push(`network create ${name}`)
              networkStore.set(name, new Set())
            },
            async connect(network: string, container: string) {
              const members = networkStore.get(network)
              if (!members) throw new Error(`no such network ${network}`)
              members.add(container)
            },
            async disconnect(network: string, container: string) {
              networkStore.get(network)?.delete(container)
            },
            async remove(name: string) {
              if (networkStore.delete(name)) fake.calls.push(`network rm ${name}`)
            },
          },
        }
      : {}),
    volumes: {
      async create(volume, labels) {
        if (volumeStore.has(volume)) return false
        fake.calls.push(`volume create ${volume}`)
        volumeStore.set(volume, { labels })
        return true
      },
      async list(labels) {
        return [...volumeStore].filter(([, v]) => matches(v.labels, labels)).map(([name]) => name)
      },
      async remove(volume) {
        const user = [...containers].find(([, c]) => c.spec.volumes?.some((v) => v.volume === volume))
        if (user) throw new Error(`volume ${volume} is in use by ${user[0]}`)
        if (volumeStore.delete(volume)) fake.calls.push(`volume rm ${volume}`)
      },
      async put(volume, archive) {
        const v = volumeStore.get(volume)
        if (!v) throw new Error(`no such volume ${volume}`)
        fake.calls.push(`volume put ${volume}`)
        v.archive = await readFile(archive)
      },
      async get(volume, archive) {
        const v = volumeStore.get(volume)
        if (!v) throw new Error(`no such volume ${volume}`)
        fake.calls.push(`volume get ${volume}`)
        // An empty volume reads back as an empty archive: two zero blocks.
        await writeFile(archive, v.archive ?? Buffer.alloc(1024))
      },
    },
  }
  return fake
}
