import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, openSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repository } from '@omh/sandbox'
import { CHECK_EVERY_MS } from '@omh/sandbox/idle-due'
import { BIN, ROOT, omh, stateOf, testEnv } from '../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

const plugin = (entry: string) =>
  JSON.stringify({ name: 'omh-renderer-shout', version: '1.0.0', type: 'module', exports: { '.': { import: entry } } })

const shout = (version: string) => `export default {
  kind: 'renderer', apiVersion: 1, meta: { name: 'omh-renderer-shout', version: '${version}' }, formats: ['shout'], classes: ['rules'],
  render(input) { return { files: [{ kind: 'file', guest: input.binding.path, content: input.items.map((s) => s.text.toUpperCase()).join('\\n') }], dropped: [] } },
}
`

/** Files changed in the last two seconds are never trusted to show their next change, so nothing is kept until then. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2100))

describe('kept answers of read-only commands', () => {
  it('see an edited adapter, settings file, plugin package.json and catalogue file on the next run', async () => {
    const repo = gitRepo()
    const cache = testdir()
    const home = testdir({
      'settings.toml': 'plugins = ["omh-renderer-shout"]\n[use]\nrules = ["style"]\n',
      'rules/style.md': 'Be brief.\n',
      'adapters/loud.toml': 'name = "loud"\nbin = "loud"\ninstall = "true"\n[capabilities.rules]\npath = "/work/LOUD.md"\nrender = "shout"\n',
      'node_modules/omh-renderer-shout/package.json': plugin('./index.js'),
      'node_modules/omh-renderer-shout/index.js': shout('1.0.0'),
      'node_modules/omh-renderer-shout/next.js': shout('2.0.0'),
    })
    const marks = path.join(testdir(), 'loads')
    const env = { OMH_HOME: home, XDG_CACHE_HOME: cache, NODE_OPTIONS: `--import=${path.join(ROOT, 'test/helpers/load-marker.mjs')}`, OMH_TEST_LOADS: marks }
    const loads = () => new Set(readFileSync(marks, 'utf8').split('\n').filter(Boolean).map((line) => line.split(' ')[0])).size
    const run = (...args: string[]) => {
      const ran = omh([...args, '--json'], { cwd: repo, env })
      expect(ran.status, ran.stderr).toBe(0)
      return ran.json().result
    }
    const adapter = () => run('adapters', 'show', 'loud').adapter
    const rules = () => run('render', 'loud').capabilities[0].files[0].bytes
    const version = () => run('plugins').plugins.find((p: { name: string }) => p.name === 'omh-renderer-shout').version
    const selected = () => run('render', 'loud').selection.find((s: { capability: string }) => s.capability === 'rules').selected

    // The first command makes omh's state directory (a write, so nothing is kept), and what it
    // made must settle before anything that reads it is kept.
    omh(['adapters', 'ls'], { cwd: repo, env })
    await settle()
    const before = { adapter: JSON.stringify(adapter()), rules: rules(), version: version(), selected: selected() }
    expect(before).toMatchObject({ rules: 'BE BRIEF.\n'.length, version: '1.0.0', selected: ['style'] })
    // The same runs again are answered from what was kept: the same answers, and neither omh nor a plugin loaded.
    const loaded = loads()
    expect(loaded, 'each first run loads omh').toBeGreaterThanOrEqual(4)
    expect({ adapter: JSON.stringify(adapter()), rules: rules(), version: version(), selected: selected() }).toEqual(before)
    expect(loads(), 'a replay loads nothing').toBe(loaded)
    const kept = readdirSync(path.join(cache, 'omh/answers'))
    expect(kept.length).toBeGreaterThanOrEqual(3)

    writeFileSync(path.join(home, 'adapters/loud.toml'), 'name = "loud"\nbin = "louder"\ninstall = "true"\n[capabilities.rules]\npath = "/work/LOUD.md"\nrender = "shout"\n')
    expect(JSON.stringify(adapter())).not.toEqual(before.adapter)
    expect(JSON.stringify(adapter())).toContain('louder')

    writeFileSync(path.join(home, 'rules/style.md'), 'Be very brief.\n')
    expect(rules()).toBe('BE VERY BRIEF.\n'.length)

    writeFileSync(path.join(home, 'node_modules/omh-renderer-shout/package.json'), plugin('./next.js'))
    expect(version()).toBe('2.0.0')

    writeFileSync(path.join(home, 'settings.toml'), 'plugins = ["omh-renderer-shout"]\n[use]\nrules = []\n')
    expect(selected()).toEqual([])
  })

  it('are replayed without loading a plugin: the second run imports none, yet answers the same', async () => {
    const repo = gitRepo()
    // The plugin says, as it is imported, in which process: a replay prints what was kept, never this process's id.
    const marked = `process.stderr.write('shout loaded in ' + process.pid + '\\n')\n${shout('1.0.0')}`
    const home = testdir({
      'settings.toml': 'plugins = ["omh-renderer-shout"]\n',
      'rules/style.md': 'Be brief.\n',
      'adapters/loud.toml': 'name = "loud"\nbin = "loud"\ninstall = "true"\n[capabilities.rules]\npath = "/work/LOUD.md"\nrender = "shout"\n',
      'node_modules/omh-renderer-shout/package.json': plugin('./index.js'),
      'node_modules/omh-renderer-shout/index.js': marked,
    })
    const env = { OMH_HOME: home, XDG_CACHE_HOME: testdir() }
    omh(['adapters', 'ls'], { cwd: repo, env })
    await settle()
    const loadedIn = (ran: { stderr: string; pid?: number }) => ran.stderr.includes(`shout loaded in ${ran.pid}\n`)
    const first = omh(['render', 'loud', '--json'], { cwd: repo, env })
    expect(first.status, first.stderr).toBe(0)
    expect(loadedIn(first), first.stderr).toBe(true)
    const second = omh(['render', 'loud', '--json'], { cwd: repo, env })
    expect(second.status, second.stderr).toBe(0)
    expect(second.stdout).toBe(first.stdout)
    expect(loadedIn(second), `${second.pid}: ${second.stderr}`).toBe(false)
  })

  it('stay on the fast path through a burst of 15 runs right after omh wrote its state: none loads omh', async () => {
    const repo = gitRepo()
    const marks = path.join(testdir(), 'loads')
    const env = { OMH_HOME: testdir(), XDG_CACHE_HOME: testdir(), NODE_OPTIONS: `--import=${path.join(ROOT, 'test/helpers/load-marker.mjs')}`, OMH_TEST_LOADS: marks }
    // Makes omh's state directory and looks for idle containers: writes, so nothing of it is kept.
    expect(omh(['adapters', 'ls'], { cwd: repo, env }).status).toBe(0)
    // Where omh keeps what its launches leave, as after the first launch.
    const run = path.join(stateOf(env.OMH_HOME), 'run')
    mkdirSync(path.join(run, 'a-session'), { recursive: true })
    writeFileSync(path.join(run, '.idle-checked'), '')
    await settle()
    expect(omh(['adapters', 'ls'], { cwd: repo, env }).status).toBe(0)
    // What omh writes as it works: another launch's bookkeeping, its look for idle containers.
    mkdirSync(path.join(run, 'a-new-session'))
    writeFileSync(path.join(run, '.idle-checked'), '')
    const loadedBy = () => new Set(readFileSync(marks, 'utf8').split('\n').filter(Boolean).map((line) => line.split(' ')[0]))
    const before = loadedBy()
    const burst = Array.from({ length: 15 }, () => omh(['adapters', 'ls'], { cwd: repo, env }))
    for (const ran of burst) expect([ran.status, ran.stdout]).toEqual([0, burst[0]!.stdout])
    const loaded = [...loadedBy()].filter((pid) => !before.has(pid))
    expect(loaded.map((pid) => burst.findIndex((ran) => String(ran.pid) === pid)), 'the runs of the burst that loaded omh').toEqual([])
  })

  it('ignore a corrupt entry and answer afresh', async () => {
    const cache = testdir()
    const home = testdir()
    const env = { OMH_HOME: home, XDG_CACHE_HOME: cache }
    omh(['adapters', 'ls'], { cwd: home, env })
    await settle()
    const first = omh(['adapters', 'ls'], { cwd: home, env })
    expect(first.status).toBe(0)
    const dir = path.join(cache, 'omh/answers')
    for (const name of readdirSync(dir)) writeFileSync(path.join(dir, name), '{"key": 1, "out": [[1, "stale"')
    const again = omh(['adapters', 'ls'], { cwd: home, env })
    expect(again).toMatchObject({ status: 0, stdout: first.stdout, stderr: first.stderr })
  })

  it('keep no value of the environment at rest: an API key in it is in no cache file', async () => {
    const cache = testdir()
    const home = testdir()
    const env = { OMH_HOME: home, XDG_CACHE_HOME: cache, ANTHROPIC_API_KEY: 'sk-ant-api03-never-at-rest-9f8e7d' }
    omh(['adapters', 'ls'], { cwd: home, env })
    await settle()
    const first = omh(['adapters', 'ls'], { cwd: home, env })
    const again = omh(['adapters', 'ls'], { cwd: home, env })
    expect(again).toMatchObject({ status: 0, stdout: first.stdout })
    const dir = path.join(cache, 'omh/answers')
    expect(readdirSync(dir).length).toBeGreaterThan(0)
    for (const name of readdirSync(dir)) expect(readFileSync(path.join(dir, name), 'utf8')).not.toContain('never-at-rest')
  })

  it('are never kept for a run that read a device: /dev/stdin answers anew each time', async () => {
    const cache = testdir()
    const home = testdir()
    const env = { OMH_HOME: home, XDG_CACHE_HOME: cache }
    const good = readFileSync(path.join(ROOT, 'test/fixtures/adapters/probe.toml'), 'utf8')
    writeFileSync(path.join(home, 'good.toml'), good)
    writeFileSync(path.join(home, 'bad.toml'), good.replace('bin     =', 'binn    ='))
    await settle()
    // A file on stdin, as a shell's `< file` gives it: /dev/stdin is then a link to a regular file.
    const validate = (file: string) =>
      spawnSync(process.execPath, [BIN, 'adapters', 'validate', '/dev/stdin'], { cwd: home, env: testEnv(env) as NodeJS.ProcessEnv, stdio: [openSync(path.join(home, file), 'r'), 'pipe', 'pipe'], encoding: 'utf8' })
    for (let n = 0; n < 2; n++) expect(validate('good.toml').status).toBe(0)
    expect(validate('bad.toml').status).toBe(2)
  })

  it('of sessions ls see a new commit and a new session on the next run', async () => {
    const repo = gitRepo()
    const cache = testdir()
    // An engine no plugin drives: a listing with sessions reports containers as unknown without asking one.
    const home = testdir({ 'settings.toml': 'runtime = "none-here"\n' })
    const env = { OMH_HOME: home, XDG_CACHE_HOME: cache }
    const ls = () => {
      const ran = omh(['sessions', 'ls', '--json'], { cwd: repo, env })
      expect(ran.status, ran.stderr).toBe(0)
      return ran.json().result
    }
    omh(['adapters', 'ls'], { cwd: repo, env })
    await settle()
    const first = ls()
    expect(first.sessions).toEqual([])
    expect(readdirSync(path.join(cache, 'omh/answers'))).toHaveLength(1)
    expect(ls()).toEqual(first)

    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'next'], { cwd: repo })
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim()
    expect(first.base.commit).not.toBe(head)
    expect(ls().base.commit).toBe(head)

    mkdirSync(path.join(stateOf(home), 'worktrees', repository(repo).id, 's01'), { recursive: true })
    expect(ls().sessions.map((s: { id: string }) => s.id)).toEqual(['s01'])
  })

  it('are not given once a look for idle session containers is due, so the command looks', async () => {
    const cache = testdir()
    const home = testdir()
    const env = { OMH_HOME: home, XDG_CACHE_HOME: cache }
    const checked = path.join(stateOf(home), 'run', '.idle-checked')
    omh(['adapters', 'ls'], { cwd: home, env })
    mkdirSync(path.dirname(checked))
    writeFileSync(checked, '')
    // The last look six seconds short of due: the next answer is kept, and stands for six seconds.
    const last = (Date.now() - CHECK_EVERY_MS + 6000) / 1000
    utimesSync(checked, last, last)
    await settle()
    expect(omh(['adapters', 'ls'], { cwd: home, env }).status).toBe(0)
    expect(readdirSync(path.join(cache, 'omh/answers'))).toHaveLength(1)
    expect(statSync(checked).mtimeMs / 1000).toBeCloseTo(last, 0)
    await new Promise((resolve) => setTimeout(resolve, 4500))
    expect(omh(['adapters', 'ls'], { cwd: home, env }).status).toBe(0)
    expect(statSync(checked).mtimeMs).toBeGreaterThan(Date.now() - 5000)
  })
})
