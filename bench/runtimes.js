// Per engine: the floor (a bare `<engine> run --rm <image> true`) and what omh's
// runtime and image steps cost against it. Launch figures measured against the
// same floor belong beside these.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { compare, median, report } from './lib.js'

const op = path.join(import.meta.dirname, 'runtime-op.js')

/** The image every runtime figure runs: Debian with Node, as the e2e tests use. */
export const BENCH_IMAGE = process.env.OMH_BENCH_IMAGE ?? process.env.OMH_TEST_BASE ?? 'localhost/omh-base:debian'

/** The floor every container figure is a ratio to: the engine's own client, nothing of omh's. */
export const engineFloor = (engine, image = BENCH_IMAGE) => ({ label: `${engine} run --rm <image> true`, argv: [engine, 'run', '--rm', image, 'true'] })

const quiet = (argv) => spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })

/** Removes the images a bench label marks. */
function removeBenchImages(engine, label) {
  const ids = [...new Set(quiet([engine, 'images', '-q', '--filter', `label=omh.bench=${label}`]).stdout.split('\n').filter(Boolean))]
  if (ids.length) quiet([engine, 'rmi', ...ids])
}

/** In one process, the steps a launch asks of a runtime (see runtime-op.js). */
function steps(engine, runs, label) {
  const result = quiet([process.execPath, op, engine, 'steps', BENCH_IMAGE, String(runs), label])
  if (result.status !== 0) throw new Error(`${engine}: runtime steps failed: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

/** Median ms of rebuilding the harness layer with the base present, each after removing the last. */
function harnessBuild(engine, tag, label, runs) {
  const times = []
  for (let n = 0; n < runs; n++) {
    quiet([engine, 'rmi', tag])
    const start = performance.now()
    const result = quiet([process.execPath, op, engine, 'steps', BENCH_IMAGE, '0', label])
    times.push(performance.now() - start)
    if (result.status !== 0) throw new Error(`${engine}: building the harness layer failed: ${result.stderr}`)
  }
  return median(times)
}

export function benchRuntimes({ runs, engines = ['docker', 'podman'] }) {
  for (const engine of engines) {
    const present = quiet([engine, 'image', 'inspect', BENCH_IMAGE])
    if (present.status !== 0) {
      throw new Error(`the runtime bench needs ${BENCH_IMAGE} in ${engine} (set OMH_BENCH_IMAGE): ${present.stderr.trim().split('\n').at(-1)}`)
    }
    const label = `b${process.pid}`
    try {
      const inProcess = steps(engine, runs, label)
      // A process of its own: node, the plugin and its client library, then the same run.
      const result = compare(engineFloor(engine), [{ label: 'node + plugin: run --rm true', argv: [process.execPath, op, engine, 'run', BENCH_IMAGE] }], { runs })
      const add = (text, ms) => result.results.push({ label: text, ms, ratio: ms / result.floor.ms })
      add('in process: detect', inProcess.detect)
      add('in process: ensureImage, present', inProcess.ensure)
      add('in process: list by labels', inProcess.list)
      add('harness layer build, base present', harnessBuild(engine, inProcess.harness, label, 3))
      report(`${engine}: runtime and image steps against a bare run (median of ${runs}, interleaved; builds median of 3)`, result)
    } finally {
      removeBenchImages(engine, label)
    }
  }
}
