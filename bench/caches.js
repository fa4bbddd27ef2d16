// Dependency caches: a new session's setup (`npm ci` of a real lockfile resolved from the npm
// registry, through the session's egress proxy) the first time, and again in a second new session
// of the same repository: once reusing the first one's kept setup, once running `npm ci` again
// (`reuse_setup = false`) from the npm cache volume the first one filled. The first is the floor.
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')
const bin = path.join(root, 'bin/run.js')
const base = process.env.OMH_BENCH_BASE ?? 'localhost/omh-base:debian'
/** A real application's dependencies: Express and what it pulls in, about seventy packages. */
const PACKAGE = { name: 'bench-app', version: '1.0.0', private: true, dependencies: { express: '4.21.2', 'body-parser': '1.20.3' } }

/** The milliseconds each setup command took, as its session's setup.log says. */
const setupMs = (state, repoId, sid) => {
  const log = readFileSync(path.join(state, 'run', repoId, sid, 'setup.log'), 'utf8')
  return [...log.matchAll(/^# (?:exit status 0|reused) after (\d+) ms$/gm)].reduce((sum, m) => sum + Number(m[1]), 0)
}

/**
 * `runs` pairs of (first setup, second setup), each pair with its caches removed before: on an
 * engine whose networks reach the registry (the session's egress proxy must get out).
 */
export function benchCaches(engine, runs) {
  const home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-bench-caches-home-')))
  const repo = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-bench-caches-repo-')))
  const state = path.join(home, '.state')
  const network = `omh-bench-caches-${process.pid}`
  const env = { ...process.env, OMH_HOME: home, OMH_STATE: state, NO_COLOR: '1', GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' }
  const run = (argv) => execFileSync(argv[0], argv.slice(1), { env, cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  const omh = (...args) => run([process.execPath, bin, ...args])
  try {
    execFileSync(engine, ['network', 'create', network], { stdio: 'pipe' })
    mkdirSync(path.join(home, 'adapters'), { recursive: true })
    copyFileSync(path.join(root, 'test/fixtures/adapters/probe.toml'), path.join(home, 'adapters/probe.toml'))
    const settings = (reuse) =>
      writeFileSync(path.join(home, 'settings.toml'), `runtime = "${engine}"\n[image]\nbase = "${base}"\nnetwork = "host"\n[session]\nnetwork = "${network}"\nsetup = ["npm ci --no-audit --no-fund"]\nreuse_setup = ${reuse}\n`)
    writeFileSync(path.join(repo, 'package.json'), JSON.stringify(PACKAGE, null, 2))
    writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n')
    run(['npm', 'install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'])
    run(['git', 'init', '-q', '-b', 'main'])
    run(['git', 'add', '-A'])
    run(['git', 'commit', '-q', '-m', 'init'])
    const packages = Object.keys(JSON.parse(readFileSync(path.join(repo, 'package-lock.json'), 'utf8')).packages).length - 1
    const first = []
    const reused = []
    const rerun = []
    const launch = () => {
      const sid = /omh: probe on omh\/(s\d+)/.exec(spawnSync(process.execPath, [bin, '--new', 'probe', '--', 'true'], { env, cwd: repo, encoding: 'utf8' }).stderr)?.[1]
      if (!sid) throw new Error('a session did not start')
      return sid
    }
    for (let n = 0; n < runs; n++) {
      settings(true)
      omh('caches', 'rm')
      const a = launch()
      const b = launch()
      settings(false)
      const c = launch()
      const repoId = readdirSync(path.join(state, 'worktrees'))[0]
      first.push(setupMs(state, repoId, a))
      reused.push(setupMs(state, repoId, b))
      rerun.push(setupMs(state, repoId, c))
      for (const sid of [a, b, c]) omh('sessions', 'rm', sid, '--force')
    }
    const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]
    const floor = median(first)
    return {
      packages,
      floor: { label: `first session's setup, empty caches (${engine})`, ms: floor },
      results: [
        { label: `second session's, the first one's reused (${engine})`, ms: median(reused), ratio: median(reused) / floor, target: 0.333 },
        { label: `second session's npm ci again, the npm cache filled (${engine})`, ms: median(rerun), ratio: median(rerun) / floor },
      ],
    }
  } finally {
    spawnSync(process.execPath, [bin, 'caches', 'rm'], { env, cwd: repo })
    spawnSync(engine, ['network', 'rm', network])
    rmSync(home, { recursive: true, force: true })
    rmSync(repo, { recursive: true, force: true })
  }
}
