// Real container engines for end-to-end tests. Every test runs against both;
// an engine that does not answer fails the run, it is never skipped.
import { execFileSync, spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createServer } from 'node:net'
import type { ImageOptions } from '@omh/sandbox'
import type { RuntimeContext, RuntimeInfo, RuntimePlugin } from '@omh/plugin-api'
import docker from '../../packages/runtime-docker/src/index.js'
import podman from '../../packages/runtime-podman/src/index.js'

export type Engine = 'docker' | 'podman'
const ALL_ENGINES: readonly Engine[] = ['docker', 'podman']

/**
 * The engines this run tests: both, or the one OMH_TEST_ENGINES names. The
 * e2e projects set it, one project per engine, so the two run side by side.
 */
export const ENGINES: readonly Engine[] = enginesNamed(process.env['OMH_TEST_ENGINES'])

export function enginesNamed(list: string | undefined): readonly Engine[] {
  if (!list) return ALL_ENGINES
  const named = list.split(',').map((e) => e.trim())
  const unknown = named.filter((e) => !ALL_ENGINES.includes(e as Engine))
  if (unknown.length) throw new Error(`OMH_TEST_ENGINES names ${unknown.join(', ')}: the engines are ${ALL_ENGINES.join(' and ')}`)
  return ALL_ENGINES.filter((e) => named.includes(e))
}

/**
 * The image test builds start from: Debian with Node, built offline by
 * ../shared/runtimes/provision.sh (OMH_FLAVOR=debian). Override with OMH_TEST_BASE.
 */
export const TEST_BASE = process.env['OMH_TEST_BASE'] ?? 'localhost/omh-base:debian'

/**
 * Every image a test builds carries this label (it is part of the tag's
 * digest, so test images never share a tag with a user's), and so does every
 * container and network, with the run's own id besides.
 */
export const TEST_LABEL = 'omh.test'
export const TEST_LABELS: Readonly<Record<string, string>> = { [TEST_LABEL]: 'e2e' }

/**
 * This test run, so cleanup removes its own containers and networks and never
 * those of a run going on beside it on the same engines. The e2e global setup
 * sets OMH_TEST_RUN before any worker starts.
 */
export const TEST_RUN = process.env['OMH_TEST_RUN'] ?? `pid${process.pid}`
export const RUN_LABELS: Readonly<Record<string, string>> = { ...TEST_LABELS, 'omh.test.run': TEST_RUN }

const plugins: Record<Engine, RuntimePlugin> = { docker, podman }

export function runtimeOf(engine: Engine): RuntimePlugin {
  return plugins[engine]
}

/** A runtime context over this process's environment; progress lines are kept and echoed to stderr. */
export function engineContext(engine: Engine): RuntimeContext & { lines: string[] } {
  const lines: string[] = []
  return {
    env: process.env,
    progress: (line) => {
      lines.push(line)
      process.stderr.write(`  [${engine}] ${line}\n`)
    },
    verbose: false,
    lines,
  }
}

/** Image options for tests: the offline base, host network, and the test label (which changes every tag). */
export function testImageOptions(): ImageOptions {
  return { from: TEST_BASE, network: 'host', labels: TEST_LABELS }
}

/** The engine's answer, or a failure saying why it is unusable and what to do. */
export async function requireEngine(engine: Engine): Promise<RuntimeInfo> {
  const found = await runtimeOf(engine).detect(engineContext(engine))
  if ('version' in found) return found
  throw new Error(`${engine} is required by the end-to-end tests: ${found.reason}. ${found.hint ?? ''}`)
}

/** Runs the engine's own client, for setup and for checking what a runtime did. */
export function client(engine: Engine, args: readonly string[]): { status: number; stdout: string; stderr: string } {
  const result = spawnSync(engine, args, { encoding: 'utf8', timeout: 120_000 })
  return { status: result.status ?? -1, stdout: result.stdout ?? '', stderr: result.stderr ?? '' }
}

/** A host port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

const ids = (engine: Engine, args: readonly string[]) =>
  client(engine, args)
    .stdout.split('\n')
    .map((l) => l.trim())
    .filter(Boolean)

const filtersOf = (labels: Readonly<Record<string, string>>) => Object.entries(labels).flatMap(([k, v]) => ['--filter', `label=${k}=${v}`])

/** Removes this run's containers and networks from one engine; its images stay for the next test file. */
export function cleanupContainers(engine: Engine): void {
  const containers = ids(engine, ['ps', '-aq', '--no-trunc', ...filtersOf(RUN_LABELS)])
  if (containers.length) client(engine, ['rm', '-f', ...(engine === 'podman' ? ['--time', '0'] : []), ...containers])
  const networks = ids(engine, ['network', 'ls', '-q', ...filtersOf(RUN_LABELS)])
  if (networks.length) client(engine, ['network', 'rm', ...networks])
}

/**
 * Removes this run's containers and networks, then every test image no
 * container uses any more (another run's containers keep theirs). The e2e
 * global teardown calls it.
 */
export function cleanupEngine(engine: Engine): void {
  cleanupContainers(engine)
  // Newest first, so a harness layer goes before the base it was built on; never forced,
  // because forcing would take an image from under another run's container.
  for (const image of [...new Set(ids(engine, ['images', '-q', '--no-trunc', ...filtersOf(TEST_LABELS)]))]) client(engine, ['rmi', image])
}

/** What this run left in an engine; test images count once no test container of any run is left. */
export function leftovers(engine: Engine): string[] {
  const left = [
    ...ids(engine, ['ps', '-aq', ...filtersOf(RUN_LABELS)]).map((id) => `container ${id}`),
    ...ids(engine, ['network', 'ls', '-q', ...filtersOf(RUN_LABELS)]).map((id) => `network ${id}`),
  ]
  if (!ids(engine, ['ps', '-aq', ...filtersOf(TEST_LABELS)]).length) {
    left.push(...ids(engine, ['images', '-q', ...filtersOf(TEST_LABELS)]).map((id) => `image ${id}`))
  }
  return left
}

/** Creates a network of this run that ports can be published on (an engine's default may have none). */
export function testNetwork(engine: Engine, purpose: string): string {
  const name = `omh-e2e-${purpose}-${TEST_RUN}`
  const labels = Object.entries(RUN_LABELS).flatMap(([k, v]) => ['--label', `${k}=${v}`])
  execFileSync(engine, ['network', 'create', ...labels, name], { stdio: 'pipe' })
  return name
}

/** Where a run notes the images its files share, per engine: removed once, when the run ends. */
const sharedImages = (engine: Engine) => path.join(os.tmpdir(), `omh-e2e-images-${process.env['OMH_TEST_RUN'] ?? TEST_RUN}-${engine}`)

/**
 * Keeps images omh built for a test file for the rest of the run, so the next file that needs the
 * same harness image (doctor, then doctor --turn) finds it built; the run's teardown removes them.
 */
export function keepForRun(engine: Engine, tags: Iterable<string>): void {
  const list = [...tags]
  if (list.length) appendFileSync(sharedImages(engine), `${list.join('\n')}\n`)
}

/** Removes what the run's files kept for one another (keepForRun). */
export function removeRunImages(engine: Engine): void {
  const file = sharedImages(engine)
  if (!existsSync(file)) return
  removeBuiltImages(engine, new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean)))
  rmSync(file, { force: true })
}

/**
 * Removes session images omh built for a test (not labelled as test images,
 * because the CLI built them) and the harness tools each copies, once nothing
 * uses them. The toolset and the environments stay: every test file shares them.
 */
export function removeBuiltImages(engine: Engine, tags: Iterable<string>): void {
  const tools = new Set<string>()
  for (const tag of tags) {
    const from = client(engine, ['image', 'inspect', '--format', '{{index .Config.Labels "omh.tools"}}', tag]).stdout.trim()
    if (from) tools.add(from)
    client(engine, ['rmi', tag])
  }
  for (const tag of tools) client(engine, ['rmi', tag])
}
