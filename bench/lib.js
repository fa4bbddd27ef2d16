// Benchmark helpers: wall time of whole processes, reported as ratios against
// a floor measured in the same run, so figures from different machines compare.
import { spawnSync } from 'node:child_process'
import { performance } from 'node:perf_hooks'

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** Median wall time in ms of `runs` runs of a command, after one warm-up run. */
export function timeCommand(argv, { runs = 15, env = process.env, cwd = process.cwd() } = {}) {
  const once = () => {
    const start = performance.now()
    const result = spawnSync(argv[0], argv.slice(1), { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] })
    const ms = performance.now() - start
    if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${result.stderr}`)
    return ms
  }
  once()
  return median(Array.from({ length: runs }, once))
}

/**
 * Measures commands interleaved with their floor (floor, a, b, floor, a, b, …),
 * so drift in machine load hits every figure alike.
 */
export function compare(floor, commands, { runs = 15, env, cwd } = {}) {
  const all = [floor, ...commands]
  const samples = all.map(() => [])
  for (const c of all) timeOnce(c, env, cwd) // warm-up
  for (let n = 0; n < runs; n++) all.forEach((c, i) => samples[i].push(timeOnce(c, env, cwd)))
  const [base, ...rest] = samples.map(median)
  return { floor: { label: floor.label, ms: base }, results: commands.map((c, i) => ({ label: c.label, ms: rest[i], ratio: rest[i] / base, target: c.target })) }
}

/** One timed run; a command's own `env` (a function: a fresh environment for each run) stands in for the shared one. */
export function timeOnce(command, env = process.env, cwd = process.cwd()) {
  const own = command.env?.()
  const start = performance.now()
  const result = spawnSync(command.argv[0], command.argv.slice(1), { env: own ?? env, cwd, stdio: ['ignore', 'ignore', 'pipe'] })
  const ms = performance.now() - start
  if (result.status !== 0) throw new Error(`${command.argv.join(' ')} exited ${result.status}: ${result.stderr}`)
  return ms
}

export function report(title, { floor, results }) {
  console.log(`\n${title}`)
  console.log(`  floor  ${floor.label.padEnd(34)} ${floor.ms.toFixed(1).padStart(8)} ms`)
  for (const r of results) {
    const verdict = r.target === undefined ? '' : r.ratio <= r.target ? `  (target ≤ ${r.target}× met)` : `  (target ≤ ${r.target}× MISSED)`
    console.log(`         ${r.label.padEnd(34)} ${r.ms.toFixed(1).padStart(8)} ms  ${r.ratio.toFixed(2)}×${verdict}`)
  }
}

/** Peak resident memory (MB) of one run, through GNU time; undefined where it is missing. */
export function peakRss(argv, { env = process.env, cwd = process.cwd() } = {}) {
  const result = spawnSync('/usr/bin/time', ['-f', '%M', ...argv], { env, cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' })
  if (result.error || result.status !== 0) return undefined
  const kb = Number(result.stderr.trim().split('\n').at(-1))
  return Number.isFinite(kb) ? kb / 1024 : undefined
}
