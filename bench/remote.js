// A session on an engine that does not share this disk: a Docker run inside a
// container of the host's (../shared/runtimes/remote/start.sh), its API on
// 127.0.0.1. Launches are measured against a bare `docker run` there of the same
// image, user, hardening and work volume, in the same run.
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { median } from './lib.js'

const root = path.resolve(import.meta.dirname, '..')
const bin = path.join(root, 'bin/run.js')
const base = process.env.OMH_BENCH_BASE ?? 'localhost/omh-base:debian'
const start = process.env.OMH_REMOTE_START ?? path.resolve(root, '../shared/runtimes/remote/start.sh')

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

function timed(argv, options) {
  const begin = performance.now()
  const result = spawnSync(argv[0], argv.slice(1), { ...options, stdio: ['ignore', 'ignore', 'pipe'] })
  const ms = performance.now() - begin
  if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${result.stderr}`)
  return ms
}

/**
 * A warm launch (container up, volumes filled) and a cold one (`--new`: a
 * session made and copied in) of the probe harness on a nested Docker, with
 * what the first copy-in and the image's trip there cost.
 */
export async function benchRemote(runs) {
  const name = `omh-bench-remote-${process.pid}`
  const home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-bench-home-')))
  const repo = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-bench-repo-')))
  const env = { ...process.env, OMH_HOME: home, NO_COLOR: '1', GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' }
  const omh = (...args) => [process.execPath, bin, ...args]
  const run = (argv, e = env) => execFileSync(argv[0], argv.slice(1), { env: e, cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  mkdirSync(path.join(home, 'adapters'), { recursive: true })
  mkdirSync(path.join(home, 'rules'), { recursive: true })
  copyFileSync(path.join(root, 'test/fixtures/adapters/probe.toml'), path.join(home, 'adapters/probe.toml'))
  writeFileSync(path.join(home, 'settings.toml'), `runtime = "docker"\n[image]\nbase = "${base}"\nnetwork = "host"\n`)
  writeFileSync(path.join(home, 'rules/style.md'), 'Be brief.\n')
  writeFileSync(path.join(repo, 'README.md'), 'bench\n')
  run(['git', 'init', '-q', '-b', 'main'])
  run(['git', 'add', '-A'])
  run(['git', 'commit', '-q', '-m', 'init'])
  const local = { ...env, DOCKER_HOST: '' }
  delete local.DOCKER_HOST
  try {
    const up = spawnSync(start, ['docker', name, String(await freePort())], { encoding: 'utf8' })
    if (up.status !== 0) throw new Error(`the nested Docker did not start: ${up.stderr}`)
    const remote = { ...env, DOCKER_HOST: up.stdout.trim().split('\n').at(-1).replace(/^DOCKER_HOST=/, '') }
    // The harness image travels by save | load from this machine's engine (built there if missing).
    const tag = JSON.parse(run(omh('--dry-run', '--json', 'probe'), local)).result.container.image
    if (spawnSync('docker', ['image', 'inspect', tag], { env: local }).status !== 0) {
      run(omh('probe'), local)
      run(omh('sessions', 'rm', 's01', '--force'), local)
    }
    const loadStart = performance.now()
    execFileSync('sh', ['-c', `docker save ${tag} | DOCKER_HOST=${remote.DOCKER_HOST} docker load -q`], { env: local, stdio: 'ignore' })
    const loadMs = performance.now() - loadStart
    const firstStart = performance.now()
    run(omh('probe'), remote) // s01: the first copy-in
    const firstMs = performance.now() - firstStart
    const plan = JSON.parse(run(omh('--dry-run', '--json', '--session', 's01', 'probe'), remote)).result
    const c = plan.container
    const work = `omh-${c.labels['omh.repo']}-s01-work`
    const bare = ['docker', 'run', '--rm', '--pull=never', '--init', '--user', c.user, '--workdir', c.workdir, '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '--mount', `type=volume,source=${work},target=/work`, c.image, ...plan.exec]
    const samples = { bare: [], warm: [], cold: [] }
    const once = () => {
      samples.bare.push(timed(bare, { env: remote, cwd: repo }))
      samples.warm.push(timed(omh('--session', 's01', 'probe'), { env: remote, cwd: repo }))
      samples.cold.push(timed(omh('--new', 'probe'), { env: remote, cwd: repo }))
      run(omh('sessions', 'rm', 's02', '--force'), remote)
    }
    once() // warm-up
    for (const key of Object.keys(samples)) samples[key].length = 0
    for (let n = 0; n < runs; n++) once()
    const floor = median(samples.bare)
    return {
      loadMs,
      firstMs,
      floor: { label: 'docker run --rm there (same image, volume)', ms: floor },
      results: [
        { label: 'omh probe, warm (nested docker)', ms: median(samples.warm), ratio: median(samples.warm) / floor },
        { label: 'omh --new probe, cold (nested docker)', ms: median(samples.cold), ratio: median(samples.cold) / floor },
      ],
    }
  } finally {
    spawnSync(start, ['rm', name])
    rmSync(home, { recursive: true, force: true })
    rmSync(repo, { recursive: true, force: true })
  }
}
