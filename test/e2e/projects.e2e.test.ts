/**
 * Your project in the sandbox: four small repositories made here (Python with
 * pytest, Go with `go test`, Rust with `cargo test`, Node with a native
 * dependency node-gyp builds from source), each set up by `omh init` alone.
 * A real harness is launched in each and driven through one real turn
 * against the scripted model, whose one tool call runs the project's test
 * command: the request after it must carry the tool's result, tests passed.
 * Claude Code on both engines; Codex on Docker and OpenCode on Podman.
 *
 * Nothing is fetched but Debian packages (at image build) and nothing at all
 * in the session: the Node project's dependency is a tarball in the repository.
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Script } from '../../packages/doctor/src/scripted-model.js'
import { requestText } from '../../packages/doctor/src/scripted-model.js'
import { ENGINES, TEST_BASE, client, type Engine } from '../helpers/engines.js'
import { BIN, finished, stateOf } from '../helpers/run.js'
import { MODEL_PORT as PORT, heardRequests, startScriptedModel, turnArgs } from '../helpers/turns.js'

const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }

type Harness = 'claude' | 'codex' | 'opencode'

/** What each engine runs: Claude everywhere, the other two on one engine each. */
const HARNESSES: Record<Engine, Harness[]> = { docker: ['claude', 'codex'], podman: ['claude', 'opencode'] }

interface Project {
  /** The files, as the test writes them. */
  readonly files: Record<string, string>
  /** Prepares what a file cannot say (a lockfile npm writes), in the checkout, before the first commit. */
  readonly prepare?: (dir: string) => void
  /** What `omh init` must decide. */
  readonly packages: readonly string[]
  readonly test: string
  /** What the test command prints when the tests pass. */
  readonly passed: RegExp
}

/** Where each harness finds the scripted model: its own settings file in the project. */
const POINTED = {
  '.claude/settings.json': JSON.stringify({ env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${PORT}`, ANTHROPIC_API_KEY: 'omh-scripted', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' } }),
  'opencode.json': JSON.stringify({ provider: { anthropic: { options: { baseURL: `http://127.0.0.1:${PORT}/v1`, apiKey: 'omh-scripted' } } }, model: 'anthropic/claude-sonnet-4-5' }),
}

const ADDON_C = `#include <node_api.h>
static napi_value answer(napi_env env, napi_callback_info info) {
  napi_value out;
  napi_create_int32(env, 42, &out);
  return out;
}
static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "answer", NAPI_AUTO_LENGTH, answer, NULL, &fn);
  napi_set_named_property(env, exports, "answer", fn);
  return exports;
}
NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
`

const PROJECTS: Record<string, Project> = {
  python: {
    files: {
      'calc.py': 'def add(a, b):\n    return a + b\n',
      'test_calc.py': 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n',
      'pyproject.toml': '[project]\nname = "calc"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\n',
    },
    packages: ['python3', 'python3-venv', 'python3-pytest'],
    test: 'pytest',
    passed: /1 passed/,
  },
  go: {
    files: {
      'go.mod': 'module example.com/calc\n\ngo 1.19\n',
      'calc.go': 'package calc\n\nfunc Add(a, b int) int { return a + b }\n',
      'calc_test.go': 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal("2 + 3")\n\t}\n}\n',
    },
    packages: ['golang'],
    test: 'go test ./...',
    passed: /ok\s+example\.com\/calc/,
  },
  rust: {
    files: {
      'Cargo.toml': '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
      'src/lib.rs': 'pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 3), 5);\n    }\n}\n',
    },
    packages: ['cargo'],
    test: 'cargo test',
    passed: /test result: ok\. 1 passed/,
  },
  node: {
    files: {
      'addon/package.json': JSON.stringify({ name: 'addon', version: '1.0.0', main: 'index.js', scripts: { install: 'node-gyp rebuild' }, gypfile: true }),
      'addon/binding.gyp': JSON.stringify({ targets: [{ target_name: 'addon', sources: ['addon.c'] }] }),
      'addon/addon.c': ADDON_C,
      'addon/index.js': "module.exports = require('./build/Release/addon.node')\n",
      'test.js': "const { answer } = require('addon')\nif (answer() !== 42) throw new Error('wrong answer')\nconsole.log('addon says ' + answer())\n",
      '.gitignore': 'node_modules/\n',
    },
    prepare: (dir) => {
      const npm = (...args: string[]) => execFileSync('npm', args, { cwd: dir, stdio: 'pipe', env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' } })
      // A tarball in the repository: installed as a copy and built by node-gyp, as a registry package would be.
      npm('pack', './addon')
      rmSync(path.join(dir, 'addon'), { recursive: true, force: true })
      // The addon's build is approved as `npm install-scripts approve` records it; that command wants it installed first.
      const manifest = { name: 'calc', version: '1.0.0', private: true, scripts: { test: 'node test.js' }, dependencies: { addon: 'file:addon-1.0.0.tgz' }, allowScripts: { addon: true } }
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2))
      npm('install', '--package-lock-only', '--ignore-scripts')
    },
    packages: ['build-essential', 'python3'],
    test: 'npm test',
    passed: /addon says 42/,
  },
}

/** One tool call that runs the tests, in each harness's own words, then an answer. */
const script = (harness: Harness, command: string): Script => ({
  replies: [
    harness === 'claude'
      ? { call: 'Bash', input: { command, description: 'run the tests' } }
      : harness === 'codex'
        ? { call: 'exec_command', input: { cmd: command } }
        : { call: 'bash', input: { command, description: 'run the tests' } },
    { text: 'The tests pass.' },
  ],
})

const TURN = turnArgs('Run the tests.')

describe.each(ENGINES)('your project in the sandbox on %s', (engine: Engine) => {
  let scratch: string
  let home: string
  const repos: Record<string, string> = {}
  const omh = (cwd: string, args: readonly string[]) =>
    finished(spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', OMH_HOME: home, OMH_STATE: stateOf(home), ...identity }, stdio: ['ignore', 'pipe', 'pipe'] }), 900_000)

  beforeAll(() => {
    scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-projects-e2e-')))
    home = path.join(scratch, 'omh')
    mkdirSync(path.join(home, 'rules'), { recursive: true })
    writeFileSync(path.join(home, 'rules', 'tests.md'), '# Tests\n\nRun the project\'s tests before you say you are done.\n')
    writeFileSync(path.join(home, 'settings.toml'), `runtime = "${engine}"\n\n[image]\nbase = "${TEST_BASE}"\nnetwork = "host"\n`)
  })

  afterAll(async () => {
    if (!home) return
    const worktrees = path.join(stateOf(home), 'worktrees')
    for (const [name, repo] of Object.entries(repos)) {
      const key = existsSync(worktrees) ? readdirSync(worktrees).find((k) => k.startsWith(`${name}-`)) : undefined
      for (const sid of key ? readdirSync(path.join(worktrees, key)) : []) await omh(repo, ['sessions', 'rm', sid, '--force'])
      await omh(repo, ['caches', 'rm'])
    }
    // The session images and environments these repositories made: no other test file shares them.
    const tags = client(engine, ['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', 'label=omh.kind=harness']).stdout.split('\n').filter(Boolean)
    const environments = new Set<string>()
    for (const tag of tags) {
      const from = client(engine, ['image', 'inspect', '--format', '{{index .Config.Labels "omh.from"}}', tag]).stdout.trim()
      if (!from.startsWith('localhost/omh-environment:')) continue
      const text = client(engine, ['image', 'inspect', '--format', '{{json .Config.Labels}}', from]).stdout
      if (!text.includes(TEST_BASE)) continue
      const packages = client(engine, ['history', '--no-trunc', '--format', '{{.CreatedBy}}', from]).stdout
      if (/python3-pytest|golang|cargo|build-essential/.test(packages)) {
        client(engine, ['rmi', tag])
        environments.add(from)
      }
    }
    for (const tag of environments) client(engine, ['rmi', tag])
    rmSync(scratch, { recursive: true, force: true })
  })

  describe.each(Object.keys(PROJECTS))('a %s repository', (name) => {
    const project = PROJECTS[name]!

    beforeAll(() => {
      const repo = path.join(scratch, name)
      repos[name] = repo
      for (const [file, text] of Object.entries({ ...project.files, ...POINTED })) {
        mkdirSync(path.join(repo, path.dirname(file)), { recursive: true })
        writeFileSync(path.join(repo, file), text)
      }
      project.prepare?.(repo)
      const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe', env: { ...process.env, ...identity } })
      git('init', '-q', '-b', 'main')
      git('add', '-A')
      git('commit', '-q', '-m', 'init')
    })

    it('omh init writes the packages the language needs and the test command, and trusts what it wrote', async () => {
      const repo = repos[name]!
      const init = await omh(repo, ['init', '--json'])
      expect(init.status, init.stderr).toBe(0)
      const settings = readFileSync(path.join(repo, '.omh/settings.toml'), 'utf8')
      expect(settings).toContain(`packages = [${project.packages.map((p) => JSON.stringify(p)).join(', ')}]`)
      expect(settings).toContain(`test = ${JSON.stringify(project.test)}`)
      const trust = await omh(repo, ['trust', '--show', '--json'])
      expect(JSON.parse(trust.stdout).result.files).toEqual([expect.objectContaining({ state: 'trusted', reason: 'sandbox' })])
      execFileSync('git', ['add', '-A'], { cwd: repo })
      execFileSync('git', ['commit', '-q', '-m', 'omh init'], { cwd: repo, env: { ...process.env, ...identity } })
    })

    it.each(HARNESSES[engine])('%s runs the tests in a real turn, and the model is told they passed', async (harness) => {
      const repo = repos[name]!
      const first = await omh(repo, ['--new', harness, '--', '--version'])
      expect(first.status, first.stderr.slice(-3000)).toBe(0)
      const sid = /omh: \S+ on omh\/(s\d+)/.exec(first.stderr)?.[1]
      expect(sid, first.stderr).toBeDefined()
      const key = readdirSync(path.join(stateOf(home), 'worktrees')).find((k) => k.startsWith(`${name}-`))!
      const worktree = path.join(stateOf(home), 'worktrees', key, sid!)
      const container = client(engine, ['ps', '-q', '--filter', `label=omh.worktree=${worktree}`]).stdout.trim()
      expect(container, `no running container for ${worktree}`).not.toBe('')

      const turn = await startScriptedModel(engine, container, worktree, script(harness, project.test))

      const ran = await omh(repo, ['--session', sid!, harness, '--', ...TURN[harness]])
      expect(ran.status, `${ran.stdout}\n${ran.stderr}`.slice(-3000)).toBe(0)
      const requests = heardRequests(turn)
      const conversation = requests.filter((r) => r.reply !== null)
      expect(conversation.length, requests.map((r) => r.path).join(' ')).toBe(2)
      const after = requestText(conversation[1]!.body)
      expect(after, after.slice(-2000)).toMatch(project.passed)
      // The test command omh init found also runs from the host, in the same session.
      const tested = await omh(repo, ['sessions', 'test', sid!])
      expect(tested.status, tested.stderr).toBe(0)
      expect(tested.stdout).toMatch(project.passed)
      expect((await omh(repo, ['sessions', 'rm', sid!, '--force'])).status).toBe(0)
      rmSync(turn, { recursive: true, force: true })
    })
  })
})
