import type { ContainerInfo, ContainerSpec, ExecOptions, RunResult, RuntimePlugin } from '../src/plugin.js'

/** A runtime that keeps containers in memory and records every call: for unit tests of the session layer. */
export interface FakeRuntime extends RuntimePlugin {
  readonly containers: Map<string, { spec: ContainerSpec; running: boolean }>
  readonly calls: string[]
  readonly execs: { container: string; argv: readonly string[]; options: ExecOptions }[]
  /** What the liveness check finds running, per container name. */
  busy: Map<string, string[]>
  /** The harness's exit status. */
  status: number
  /** Make the next `up` fail with this message. */
  failUp: string | undefined
  /** Called while the harness "runs", before exec resolves. */
  during: ((container: string) => Promise<void>) | undefined
}

export function fakeRuntime(): FakeRuntime {
  const containers = new Map<string, { spec: ContainerSpec; running: boolean }>()
  const info = (name: string, c: { spec: ContainerSpec; running: boolean }): ContainerInfo => ({
    id: name,
    name,
    running: c.running,
    image: c.spec.image,
    labels: c.spec.labels,
  })
  const fake: FakeRuntime = {
    kind: 'runtime',
    apiVersion: 1,
    meta: { name: 'fake-runtime', version: '0.0.0' },
    engine: 'fake',
    containers,
    calls: [],
    execs: [],
    busy: new Map(),
    status: 0,
    failUp: undefined,
    during: undefined,
    async detect() {
      return { engine: 'fake', version: '1' }
    },
    async hasImage() {
      return true
    },
    async build() {},
    async up(spec) {
      fake.calls.push(`up ${spec.name}`)
      if (fake.failUp) {
        const message = fake.failUp
        fake.failUp = undefined
        throw new Error(message)
      }
      if (containers.has(spec.name!)) throw new Error(`name ${spec.name} in use`)
      containers.set(spec.name!, { spec, running: true })
      return spec.name!
    },
    async exec(container, argv, options): Promise<RunResult> {
      const c = containers.get(container)
      if (!c?.running) throw new Error(`no running container ${container}`)
      if (options.capture) {
        fake.calls.push(`check ${container}`)
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
    async list(labels) {
      return [...containers]
        .filter(([, c]) => Object.entries(labels).every(([k, v]) => c.spec.labels[k] === v))
        .map(([name, c]) => info(name, c))
    },
    async down(container) {
      fake.calls.push(`down ${container}`)
      containers.delete(container)
    },
  }
  return fake
}
