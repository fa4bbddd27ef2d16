// npm run bench: every benchmark, one run, figures as ratios to a floor measured alongside.
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { compare, median, peakRss, report, timeOnce } from './lib.js'
import { profileBench } from './profile.js'
import { benchRuntimes } from './runtimes.js'
import { benchRemote } from './remote.js'
import { benchSessions } from './sessions.js'
import { benchCredentials } from './credentials.js'
import { benchCaches } from './caches.js'

const root = path.resolve(import.meta.dirname, '..')
const bin = path.join(root, 'bin/run.js')
// OMH_HOME holds the example profile and is a git repository, so every short command has its real work to do.
const home = mkdtempSync(path.join(os.tmpdir(), 'omh-bench-'))
cpSync(path.join(root, 'examples/profile'), home, { recursive: true })
execFileSync('git', ['init', '-q'], { cwd: home })
// Answers are kept per user (packages/fast-path/src/answers.ts): a cache of the bench's own, and for
// the cold figures a cache directory that cannot be made, so every run reads,
// checks, renders and records as on a first run.
const cache = mkdtempSync(path.join(os.tmpdir(), 'omh-bench-cache-'))
const state = mkdtempSync(path.join(os.tmpdir(), 'omh-bench-state-'))
const env = { ...process.env, OMH_HOME: home, OMH_STATE: state, NO_COLOR: '1', XDG_CACHE_HOME: cache }
const unwritable = { ...env, XDG_CACHE_HOME: '/proc/omh-bench-no-cache' }
// A first run: an empty cache each time, so every run reads, checks, renders, records and keeps.
const firstRun = () => ({ ...env, XDG_CACHE_HOME: mkdtempSync(path.join(cache, 'first-')) })
const runs = Number(process.env.OMH_BENCH_RUNS ?? 15)
const short = [
  ['omh --version', ['--version']],
  ['omh --help', ['--help']],
  ['omh adapters ls', ['adapters', 'ls']],
  ['omh render claude', ['render', 'claude']],
  ['omh sessions ls', ['sessions', 'ls']],
  ['omh plugins', ['plugins']],
]
const floor = { label: 'node -e 0', argv: [process.execPath, '-e', '0'] }
const commands = (label, target = 1.5, ownEnv) => short.map(([name, args]) => ({ label: `${name}${label}`, argv: [process.execPath, bin, ...args], target, ...(ownEnv ? { env: ownEnv } : {}) }))

try {
  // A file changed in the last two seconds is not trusted to show its next change in its times.
  await new Promise((resolve) => globalThis.setTimeout(resolve, 2100))
  // A Tab in the shell: commands and flags from the manifest alone, then the harness names omh finds.
  const tabs = [
    { label: 'Tab: omh sessions <Tab>', argv: [process.execPath, bin, '__complete', 'sessions', ''], target: 1.5 },
    { label: 'Tab: omh doctor <Tab>', argv: [process.execPath, bin, '__complete', 'doctor', ''] },
  ]
  report(`CLI start-up, kept answers (median of ${runs} runs each, interleaved)`, compare(floor, [...commands(''), ...tabs], { runs, env, cwd: home }))
  report(`CLI start-up on a miss, a first run that records its answer (median of ${runs} runs each, interleaved)`, compare(floor, commands(', first', 2.5, firstRun), { runs, env, cwd: home }))
  report(`CLI start-up on a miss, a cache that cannot be written (median of ${runs} runs each, interleaved)`, compare(floor, commands(', cold', 2.5), { runs, env: unwritable, cwd: home }))
  // What omh writes into its state as it works (a launch's bookkeeping beside the others, the
  // stamp of a look for idle containers) must not send the commands right after it down the slow path.
  const run = path.join(state, 'run')
  mkdirSync(run, { recursive: true })
  writeFileSync(path.join(run, '.idle-checked'), '')
  await new Promise((resolve) => globalThis.setTimeout(resolve, 2100))
  timeOnce({ argv: [process.execPath, bin, 'adapters', 'ls'] }, env, home)
  const burst = []
  for (let n = 0; n < 3; n++) {
    mkdirSync(path.join(run, `bench-session-${n}`))
    writeFileSync(path.join(run, '.idle-checked'), '')
    for (let k = 0; k < 15; k++) burst.push(timeOnce({ argv: [process.execPath, bin, 'adapters', 'ls'] }, env, home))
  }
  const floorNow = median(Array.from({ length: 9 }, () => timeOnce(floor, env, home)))
  const slow = burst.filter((ms) => ms > 2.5 * floorNow).length
  report(`A burst: 15 runs of omh adapters ls right after omh wrote its state, three times (${slow} of ${burst.length} past 2.5×, target 0 ${slow === 0 ? 'met' : 'MISSED'})`, {
    floor: { label: floor.label, ms: floorNow },
    results: [
      { label: 'median of the 45 runs', ms: median(burst), ratio: median(burst) / floorNow, target: 1.5 },
      { label: 'slowest of the 45 runs', ms: Math.max(...burst), ratio: Math.max(...burst) / floorNow },
    ],
  })
  const rss = (args, e) => peakRss([process.execPath, bin, ...args], { env: e, cwd: home })
  const mb = (v) => (v === undefined ? '   n/a' : `${v.toFixed(0).padStart(6)} MB`)
  const renderCold = rss(['render', 'claude'], unwritable)
  const renderWarm = rss(['render', 'claude'], env)
  console.log('\nPeak memory (RSS, GNU time)')
  console.log(`  omh render claude, cold               ${mb(renderCold)}  (target ≤ 120 MB ${renderCold === undefined ? 'n/a' : renderCold <= 120 ? 'met' : 'MISSED'})`)
  console.log(`  omh render claude, kept answer        ${mb(renderWarm)}`)
  const profile = await profileBench({ root, runs })
  console.log('\nProfile: 500 skills, 200 MCP servers, 50 rules sections; resolve + render for claude, opencode, codex')
  const met = (ok) => (ok ? 'met' : 'MISSED')
  console.log(`  in process, median of ${runs}        ${profile.ms.toFixed(1).padStart(8)} ms  (target ≤ 50 ms ${met(profile.ms <= 50)})`)
  console.log(`  first stage: files and links written  ${String(profile.first).padStart(6)}`)
  console.log(`  re-stage of the unchanged profile     ${String(profile.again).padStart(6)}     (target 0 ${met(profile.again === 0)})`)
  benchRuntimes({ runs })
  const credentialRuns = Number(process.env.OMH_BENCH_CREDENTIAL_RUNS ?? 200)
  const creds = await benchCredentials(credentialRuns)
  report(`Credential proxy: a first turn's model request (~40 KB, streamed answer), median of ${credentialRuns}, interleaved`, {
    floor: { label: 'straight to the API host over TLS', ms: creds.direct },
    results: [{ label: 'through the credential proxy', ms: creds.through, ratio: creds.through / creds.direct }],
  })
} finally {
  rmSync(home, { recursive: true, force: true })
  rmSync(cache, { recursive: true, force: true })
  rmSync(state, { recursive: true, force: true })
}

// Sessions on each engine; OMH_BENCH_ENGINES=docker limits it to one.
const sessionRuns = Number(process.env.OMH_BENCH_SESSION_RUNS ?? 9)
for (const engine of (process.env.OMH_BENCH_ENGINES ?? 'docker,podman').split(',').filter(Boolean)) {
  const result = benchSessions(engine, sessionRuns)
  report(`Session launch on ${engine} (median of ${sessionRuns} runs each, interleaved)`, result)
  const mb = (value) => (value === undefined ? 'n/a' : `${value.toFixed(0)} MB (target ≤ 100 MB ${value <= 100 ? 'met' : 'MISSED'})`)
  console.log(`         peak memory of a warm launch (RSS)  ${mb(result.rss)}`)
  console.log(`         peak memory of a new session (RSS)  ${mb(result.rssNew)}`)
  const standing = result.standing
  if (standing) console.log(`         a spare standing: session container ${standing.container}, egress proxy ${standing.proxy}, worktree ${standing.disk[0]}, sandbox repository ${standing.disk[1]}`)
}

// Dependency caches, on an engine whose networks reach the npm registry: Podman's netavark NATs;
// a Docker daemon run with --iptables=false, as on this project's CI machines, does not.
// OMH_BENCH_CACHES=0 leaves it out.
if (process.env.OMH_BENCH_CACHES !== '0') {
  const cacheRuns = Number(process.env.OMH_BENCH_CACHE_RUNS ?? 3)
  const engine = process.env.OMH_BENCH_CACHE_ENGINE ?? 'podman'
  const caches = benchCaches(engine, cacheRuns)
  report(`Dependency caches: a new session's \`npm ci\` of ${caches.packages} packages from the npm registry (median of ${cacheRuns} pairs)`, caches)
}

// A session on an engine that does not share this disk; OMH_BENCH_REMOTE=0 leaves it out.
if (process.env.OMH_BENCH_REMOTE !== '0') {
  const remote = await benchRemote(sessionRuns)
  report(`Session launch on a nested Docker that does not share this disk (median of ${sessionRuns} runs each, interleaved)`, remote)
  console.log(`         image there by save | load            ${(remote.loadMs / 1000).toFixed(1).padStart(8)} s`)
  console.log(`         first launch (session copied in)      ${(remote.firstMs / 1000).toFixed(1).padStart(8)} s`)
}
