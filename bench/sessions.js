// Session launches on real engines, as ratios to a bare `docker run` / `podman run`
// of the same image and mounts measured in the same run.
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { median, peakRss } from './lib.js'

const root = path.resolve(import.meta.dirname, '..')
const bin = path.join(root, 'bin/run.js')
const base = process.env.OMH_BENCH_BASE ?? 'localhost/omh-base:debian'

function timed(argv, options) {
  const start = performance.now()
  const result = spawnSync(argv[0], argv.slice(1), { ...options, stdio: ['ignore', 'ignore', 'pipe'] })
  const ms = performance.now() - start
  if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${result.stderr}`)
  return ms
}

/** The bare engine command that starts what a session container runs, with its image, mounts and hardening. */
function bareRun(engine, plan) {
  const c = plan.container
  const args = [engine, 'run', '--rm', '--pull=never', '--init', '--user', c.user, '--workdir', c.workdir, '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges']
  for (const v of c.volumes ?? []) args.push('--mount', `type=volume,source=${v.volume},target=${v.guest}`)
  for (const m of c.mounts) args.push('--mount', `type=bind,source=${m.host},target=${m.guest}${m.readOnly ? ',readonly' : ''}`)
  return [...args, c.image, ...plan.exec]
}

/**
 * Per engine: a warm launch (session and container up, image built) and a
 * cold one (`--new`: worktree, sandbox repository and container made) of the
 * probe harness, each against a bare run of the same image and mounts.
 */
export function benchSessions(engine, runs) {
  const home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-bench-home-')))
  const repo = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-bench-repo-')))
  const state = path.join(home, '.state')
  const env = { ...process.env, OMH_HOME: home, OMH_STATE: state, NO_COLOR: '1', GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' }
  const omh = (...args) => [process.execPath, bin, ...args]
  const run = (argv) => execFileSync(argv[0], argv.slice(1), { env, cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  mkdirSync(path.join(home, 'adapters'), { recursive: true })
  mkdirSync(path.join(home, 'rules'), { recursive: true })
  copyFileSync(path.join(root, 'test/fixtures/adapters/probe.toml'), path.join(home, 'adapters/probe.toml'))
  writeFileSync(path.join(home, 'settings.toml'), `runtime = "${engine}"\n[image]\nbase = "${base}"\nnetwork = "host"\n`)
  writeFileSync(path.join(home, 'rules/style.md'), 'Be brief.\n')
  writeFileSync(path.join(repo, 'README.md'), 'bench\n')
  run(['git', 'init', '-q', '-b', 'main'])
  run(['git', 'add', '-A'])
  run(['git', 'commit', '-q', '-m', 'init'])
  let tag
  try {
    run(omh('probe')) // builds the images once and brings s01 up
    const plan = JSON.parse(run(omh('--dry-run', '--json', '--session', 's01', 'probe'))).result
    tag = plan.container.image
    const bare = bareRun(engine, plan)
    const samples = { bare: [], warm: [], cold: [] }
    const once = () => {
      samples.bare.push(timed(bare, { env, cwd: repo }))
      samples.warm.push(timed(omh('--session', 's01', 'probe'), { env, cwd: repo }))
      samples.cold.push(timed(omh('--new', 'probe'), { env, cwd: repo }))
      run(omh('sessions', 'rm', 's02', '--force'))
    }
    once() // warm-up
    for (const key of Object.keys(samples)) samples[key].length = 0
    for (let n = 0; n < runs; n++) once()
    // The form people type, into the current session: a loop of its own, since each `--new` above
    // made and removed a session, which a relaunch into the current one rightly runs in full after.
    const current = []
    run(omh('probe'))
    spawnSync('sleep', ['2.1'])
    run(omh('probe')) // recorded now that nothing it read is younger than two seconds
    for (let n = 0; n < runs; n++) current.push(timed(omh('probe'), { env, cwd: repo }))
    // With the engine named too, as a script or an alias might: kept under its own key.
    const named = omh('--runtime', engine, '--session', 's01', 'probe')
    run(named)
    spawnSync('sleep', ['2.1'])
    run(named)
    const withEngine = []
    for (let n = 0; n < runs; n++) withEngine.push(timed(named, { env, cwd: repo }))
    const floor = median(samples.bare)
    const rss = peakRss(omh('--session', 's01', 'probe'), { env, cwd: repo })
    // A full launch too: a new session, made, started and run (its id is the next free one, s02).
    const rssNew = peakRss(omh('--new', 'probe'), { env, cwd: repo })
    run(omh('sessions', 'rm', 's02', '--force'))
    const spare = benchSpare(engine, { runs, env, repo, state, bare, omh, run })
    return {
      rss,
      rssNew,
      standing: spare.standing,
      floor: { label: `${engine} run --rm (same image, mounts)`, ms: floor },
      results: [
        { label: `omh --session s01 probe, warm (${engine})`, ms: median(samples.warm), ratio: median(samples.warm) / floor, target: 1 },
        { label: `omh probe into the current session, warm (${engine})`, ms: median(current), ratio: median(current) / floor, target: 1 },
        { label: `omh --runtime ${engine} --session s01 probe, warm`, ms: median(withEngine), ratio: median(withEngine) / floor, target: 1 },
        { label: `omh --new probe, made while you wait (${engine})`, ms: median(samples.cold), ratio: median(samples.cold) / floor },
        { label: `omh --new probe, claiming the spare (${engine})`, ms: median(spare.claims), ratio: median(spare.claims) / median(spare.bare), target: 2 },
      ],
    }
  } finally {
    spawnSync(process.execPath, [bin, 'sessions', 'rm', 's01', '--force'], { env, cwd: repo })
    spawnSync(process.execPath, [bin, 'sessions', 'rm', 's02', '--force'], { env, cwd: repo })
    if (tag) {
      const from = spawnSync(engine, ['image', 'inspect', '--format', '{{index .Config.Labels "omh.from"}}', tag], { encoding: 'utf8' }).stdout.trim()
      spawnSync(engine, ['rmi', tag])
      if (from && process.env.OMH_BENCH_KEEP_BASE !== '1') spawnSync(engine, ['rmi', from])
    }
    rmSync(home, { recursive: true, force: true })
    rmSync(repo, { recursive: true, force: true })
  }
}

/** The spares' marks under `state`: session id and whether it is ready to be claimed. */
function spareMarks(state) {
  const marks = []
  const runs = path.join(state, 'run')
  for (const repo of existsSync(runs) ? readdirSync(runs).filter((n) => !n.startsWith('.')) : []) {
    for (const sid of readdirSync(path.join(runs, repo)).filter((n) => !n.startsWith('.'))) {
      try {
        marks.push({ sid, repo, ...JSON.parse(readFileSync(path.join(runs, repo, sid, 'spare.json'), 'utf8')) })
      } catch {
        // no spare
      }
    }
  }
  return marks
}

/**
 * `--new` claiming the prepared spare (`[session] spare = 1`): before each run the spare the last
 * claim left to be made is waited for, so the claim alone is timed, beside a bare run of its own.
 * Then what a spare costs while it stands: its containers' memory, its worktree's disk.
 */
function benchSpare(engine, { runs, env, repo, state, bare, omh, run }) {
  const settings = path.join(env.OMH_HOME, 'settings.toml')
  const before = readFileSync(settings, 'utf8')
  writeFileSync(settings, `${before}[session]\nspare = 1\n`)
  const ready = () => {
    for (const start = Date.now(); !spareMarks(state).some((m) => m.ready); spawnSync('sleep', ['0.2'])) {
      if (Date.now() - start > 180_000) throw new Error('no spare was made in three minutes')
    }
  }
  const claimedSessions = () => JSON.parse(run(omh('--json', 'sessions', 'ls'))).result.sessions.map((r) => r.id).filter((sid) => sid !== 's01')
  const samples = { bare: [], claims: [] }
  try {
    run(omh('--new', 'probe')) // a session made, and the first spare after it
    for (let n = 0; n <= runs; n++) {
      for (const sid of claimedSessions()) run(omh('sessions', 'rm', sid, '--force'))
      ready()
      spawnSync('sleep', ['1'])
      const pair = [timed(bare, { env, cwd: repo }), timed(omh('--new', 'probe'), { env, cwd: repo })]
      if (n > 0) [samples.bare, samples.claims].forEach((list, k) => list.push(pair[k]))
    }
    ready()
    const mark = spareMarks(state).find((m) => m.ready)
    const container = `omh-${mark.repo}-${mark.sid}`
    const memory = (name) => spawnSync(engine, ['stats', '--no-stream', '--format', '{{.MemUsage}}', name], { encoding: 'utf8' }).stdout.trim().split('/')[0].trim()
    const disk = spawnSync('du', ['-sh', path.join(state, 'worktrees', mark.repo, mark.sid), path.join(state, 'shadow', mark.repo, `${mark.sid}.git`)], { encoding: 'utf8' }).stdout.trim().split('\n').map((l) => l.split('\t')[0])
    return { ...samples, standing: { container: memory(container), proxy: memory(`${container}-egress`), disk } }
  } finally {
    for (const sid of claimedSessions()) run(omh('sessions', 'rm', sid, '--force'))
    writeFileSync(settings, `${before}[session]\nspare = 0\n`)
    run(omh('--new', 'probe')) // the last spare goes with the next session made
    for (const start = Date.now(); spareMarks(state).length && Date.now() - start < 120_000; ) spawnSync('sleep', ['0.2'])
    for (const sid of claimedSessions()) run(omh('sessions', 'rm', sid, '--force'))
    writeFileSync(settings, before)
  }
}
