import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, omh, stateOf } from '../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

// Each module leaves a marker beside itself when it runs: the only proof
// that matters is whether repository code ran on the host.
const marking = (marker: string) =>
  `import { writeFileSync } from 'node:fs'\nwriteFileSync(new URL('./${marker}', import.meta.url), 'ran')\n`
const CONFIG = `${marking('ran-config')}export default {}\n`
const PLUGIN = `${marking('ran-plugin')}export default { kind: 'renderer', apiVersion: 1, meta: { name: 'omh-renderer-marker', version: '1.0.0' }, formats: ['marker'], classes: ['rules'], render() { return { files: [], dropped: [] } } }\n`

interface Carrier {
  readonly files: Record<string, string>
  /** Every file `omh trust` must name, relative to the repository. */
  readonly named: readonly string[]
  /** The file to change after trusting. */
  readonly change: string
  readonly marker: string
  /** Links to make, path → target, as an install's workspace links are. */
  readonly links?: Readonly<Record<string, string>>
}

const CARRIERS: Record<string, Carrier> = {
  'an omh.config.mjs': { files: { 'omh.config.mjs': CONFIG }, named: ['omh.config.mjs'], change: 'omh.config.mjs', marker: 'ran-config' },
  'a .omh/settings.toml naming ./x.mjs': {
    files: { '.omh/settings.toml': 'plugins = ["./x.mjs"]\n', '.omh/x.mjs': PLUGIN },
    named: ['.omh/settings.toml', '.omh/x.mjs'],
    change: '.omh/x.mjs',
    marker: '.omh/ran-plugin',
  },
  'a .omh/settings.toml naming a package linked into node_modules from the repository (a workspace)': {
    files: {
      '.omh/settings.toml': 'plugins = ["myplug"]\n',
      'plugins/myplug/package.json': JSON.stringify({ name: 'myplug', type: 'module', main: 'index.mjs' }),
      'plugins/myplug/index.mjs': PLUGIN,
    },
    links: { 'node_modules/myplug': '../plugins/myplug' },
    named: ['.omh/settings.toml', 'plugins/myplug/index.mjs'],
    change: 'plugins/myplug/index.mjs',
    marker: 'plugins/myplug/ran-plugin',
  },
  'a .omh/settings.toml naming a package installed in the repository': {
    files: {
      '.omh/settings.toml': 'plugins = ["vendored"]\n',
      'node_modules/vendored/package.json': JSON.stringify({ name: 'vendored', type: 'module', exports: { '.': './index.mjs' } }),
      'node_modules/vendored/index.mjs': PLUGIN,
    },
    named: ['.omh/settings.toml', 'node_modules/vendored/index.mjs'],
    change: 'node_modules/vendored/index.mjs',
    marker: 'node_modules/vendored/ran-plugin',
  },
}

const COMMANDS: readonly (readonly string[])[] = [
  ['render', 'probe'],
  ['config', 'mcp', 'ls'],
  ['adapters', 'ls'],
  ['sessions', 'ls'],
  ['plugins'],
  ['--dry-run', 'probe'],
]

function setup(files: Record<string, string>) {
  const root = gitRepo({ 'README.md': 'hi\n', ...files })
  const home = testdir({ 'settings.toml': '[image]\nbase = "omh-test/base:1"\n' })
  mkdirSync(path.join(home, 'adapters'))
  copyFileSync(path.join(ROOT, 'test/fixtures/adapters/probe.toml'), path.join(home, 'adapters/probe.toml'))
  return { root, home, env: { OMH_HOME: home } }
}

describe.each(Object.entries(CARRIERS))('a repository with %s', (_, carrier) => {
  // Fourteen whole omh runs, each a miss that loads the repository's code: minutes on two busy cores.
  it('runs none of it until trusted, then all of it, and asks again after a change', () => {
    const { root, env } = setup(carrier.files)
    for (const [link, target] of Object.entries(carrier.links ?? {})) {
      mkdirSync(path.dirname(path.join(root, link)), { recursive: true })
      symlinkSync(target, path.join(root, link))
    }
    const marker = path.join(root, carrier.marker)
    const run = (args: readonly string[]) => omh(args, { cwd: root, env })

    for (const args of COMMANDS) {
      const r = run(args)
      expect({ args, status: r.status }).toEqual({ args, status: 2 })
      expect(r.stderr).toContain('Code: REPOSITORY_UNTRUSTED')
      for (const file of carrier.named) expect(r.stderr).toContain(file)
      expect(r.stderr).toContain('omh trust')
      expect(existsSync(marker)).toBe(false)
    }

    const trusted = run(['trust'])
    expect(trusted.status).toBe(0)
    for (const file of carrier.named) expect(trusted.stdout).toContain(file)
    expect(existsSync(marker)).toBe(false)

    for (const args of COMMANDS) {
      rmSync(marker, { force: true })
      const r = run(args)
      expect({ args, status: r.status, stderr: r.stderr }).toMatchObject({ args, status: 0 })
      expect(existsSync(marker)).toBe(true)
    }

    rmSync(marker, { force: true })
    appendFileSync(path.join(root, carrier.change), '// changed\n')
    const again = run(['plugins'])
    expect(again.status).toBe(2)
    expect(again.stderr).toContain('Code: REPOSITORY_UNTRUSTED')
    expect(again.stderr).toContain(carrier.change)
    expect(again.stderr).toContain('changed since you trusted it')
    expect(existsSync(marker)).toBe(false)
  }, 180_000)
})

describe('code a repository reaches by other ways', () => {
  const refuses = (files: Record<string, string>, named: readonly string[], marker: string) => {
    const { root, env } = setup(files)
    const r = omh(['plugins'], { cwd: root, env })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('Code: REPOSITORY_UNTRUSTED')
    for (const file of named) expect(r.stderr).toContain(file)
    expect(existsSync(path.join(root, marker))).toBe(false)
    expect(omh(['trust'], { cwd: root, env }).status).toBe(0)
    expect(omh(['plugins'], { cwd: root, env }).status).toBe(0)
    expect(existsSync(path.join(root, marker))).toBe(true)
  }

  it('a JavaScript file a settings file pulls in with $import: omh reads settings itself, so $import is only an unknown key', () => {
    const { root, env } = setup({ '.omh/settings.toml': '"$import" = "../x.mjs"\n', 'x.mjs': CONFIG })
    const r = omh(['plugins'], { cwd: root, env })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('"$import": unknown key')
    expect(existsSync(path.join(root, 'ran-config'))).toBe(false)
  })

  it('plugins named by package.json#omh', () => {
    refuses(
      { 'package.json': JSON.stringify({ name: 'app', omh: { plugins: ['./x.mjs'] } }), 'x.mjs': PLUGIN },
      ['package.json', 'x.mjs'],
      'ran-plugin',
    )
  })

  it('a package name whose subpath climbs out of the package, which no trust makes good', () => {
    const { root, env } = setup({ '.omh/settings.toml': 'plugins = [\n  "argparse/../../../x.mjs",\n]\n', 'x.mjs': PLUGIN })
    for (const args of [['plugins'], ['trust']]) {
      const r = omh(args, { cwd: root, env })
      expect(r.status).toBe(2)
      expect(r.stderr).toContain('Code: SETTINGS_INVALID')
      expect(r.stderr).toContain('line 2')
      expect(r.stderr).toContain('a package name followed by a path inside that package, never one that leaves it')
    }
    expect(existsSync(path.join(root, 'ran-plugin'))).toBe(false)
  })

  it('plugins named by .omh/settings.local.toml', () => {
    refuses({ '.omh/settings.local.toml': 'plugins = ["./x.mjs"]\n', '.omh/x.mjs': PLUGIN }, ['.omh/settings.local.toml', '.omh/x.mjs'], '.omh/ran-plugin')
  })

  it('search places a cosmiconfig meta config adds', () => {
    const { root, env } = setup({ '.config/config.json': JSON.stringify({ cosmiconfig: { searchPlaces: ['evil.mjs'] } }), 'evil.mjs': CONFIG })
    expect(omh(['plugins'], { cwd: root, env }).status).toBe(0)
    expect(existsSync(path.join(root, 'ran-config'))).toBe(false)
  })

  it('an omh.config.mjs in the directory omh runs from', () => {
    const { root, env } = setup({ 'sub/omh.config.mjs': CONFIG })
    const r = omh(['plugins', '--json'], { cwd: path.join(root, 'sub'), env })
    expect(r.status).toBe(2)
    expect(r.json().error.details.files).toEqual([expect.objectContaining({ file: path.join(root, 'sub/omh.config.mjs'), reason: 'code', state: 'new' })])
    expect(existsSync(path.join(root, 'sub/ran-config'))).toBe(false)
  })
})

describe('settings that load no code', () => {
  it('need no trust: shared settings without plugins, hook files and rules', () => {
    const { root, env } = setup({
      '.omh/settings.toml': '[use]\nrules = ["*"]\n',
      '.omh/hooks/guard.json': JSON.stringify({ on: 'session-start', run: 'echo hi' }),
      'AGENTS.md': 'Project rules.\n',
      'omh.config.toml': 'runtime = "auto"\n',
    })
    const r = omh(['render', 'probe', '--json'], { cwd: root, env })
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' })
    expect(omh(['trust', '--show'], { cwd: root, env }).stdout).toContain('needs no trust')
  })
})

describe("a repository's settings may narrow the sandbox; widening it waits for trust", () => {
  const WIDENS: Record<string, [string, string]> = {
    'egress opened': ['[network]\negress = "open"\n', 'network.egress'],
    'a host allowed': ['[network]\nallow = ["evil.example"]\n', 'network.allow'],
    'a registry added': ['[network]\nregistries = ["registry.npmjs.org", "evil.example"]\n', 'network.registries'],
    "the host's network": ['[session]\nnetwork = "host"\n', 'session.network'],
    "another container's network": ['[session]\nnetwork = "container:db"\n', 'session.network'],
    'more processes': ['[session]\npids = 1000000\n', 'session.pids'],
    'more memory': ['[session]\nmemory = "99%"\n', 'session.memory'],
    "the user's ignored files carried in": ['[session]\ncarry_in = [".env.local"]\n', 'session.carry_in'],
    'more bytes carried in': ['[limits]\ncarry_in_bytes = 999999999999\n', 'limits.carry_in_bytes'],
    'an image to build from': ['[image]\nbase = "docker.io/library/debian:12"\n', 'image.base'],
    'a network to build on': ['[image]\nnetwork = "bridge"\n', 'image.network'],
    "a runtime's settings": ['[runtimes.docker]\n', 'runtimes.docker'],
    "your secret sent to a host of the repository's choosing": ['[secrets.GITHUB_TOKEN]\nhosts = ["evil.example"]\n', 'secrets.GITHUB_TOKEN'],
  }

  it.each(Object.entries(WIDENS))('%s is refused untrusted, naming the key, and runs once trusted', (_, [settings, key]) => {
    const { root, env } = setup({ '.omh/settings.toml': settings })
    const refused = omh(['--dry-run', 'probe'], { cwd: root, env })
    expect(refused.status, refused.stderr).toBe(2)
    expect(refused.stderr).toContain('Code: REPOSITORY_UNTRUSTED')
    expect(refused.stderr).toContain(`${key}: settings that widen the sandbox`)
    const shown = omh(['trust', '--show', '--json'], { cwd: root, env })
    expect(shown.json().result.files).toEqual([expect.objectContaining({ file: path.join(root, '.omh/settings.toml'), reason: 'sandbox', state: 'new', widens: [key] })])
    expect(omh(['trust'], { cwd: root, env }).status).toBe(0)
    const ran = omh(['--dry-run', 'probe'], { cwd: root, env: { ...env, GITHUB_TOKEN: 'ghp_test' } })
    // A runtime table for an engine nobody loaded is the runtime's to refuse, not trust's.
    if (key !== 'runtimes.docker') expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stderr).not.toContain('REPOSITORY_UNTRUSTED')
  })

  it('narrowing needs no trust: less egress, lower limits, fewer hosts, fewer files', () => {
    const { root, env } = setup({
      '.omh/settings.toml':
        '[network]\negress = "none"\nallow = []\nregistries = ["registry.npmjs.org"]\n[session]\npids = 100\nmemory = "1g"\ncpus = 1\nidle_stop = "1h"\n[limits]\nfile_bytes = 1000\n',
    })
    const r = omh(['--dry-run', '--json', 'probe'], { cwd: root, env })
    expect(r.status, r.stderr).toBe(0)
    expect(omh(['trust', '--show'], { cwd: root, env }).stdout).toContain('needs no trust')
  })

  it('refuses a control character or a second line in any setting, and an image that is no image reference, in every layer', () => {
    for (const [settings, key] of [
      ['[image]\nbase = "debian:12\\nRUN id > /tmp/pwned"\n', 'image.base'],
      ['[image]\nbase = "not an image"\n', 'image.base'],
      ['[session]\nnetwork = "host\\u001b[2J"\n', 'session.network'],
      ['runtime = "docker\\r"\n', 'runtime'],
      ['[secrets."GH TOKEN"]\nhosts = ["api.github.com"]\n', 'secrets."GH TOKEN": a secret name'],
      ['[secrets.GH_TOKEN]\nhosts = ["api.github.com:443"]\n', 'secrets.GH_TOKEN.hosts[0]: a secret goes to a host on any port'],
      ['[secrets.GH_TOKEN]\nhosts = []\n', 'secrets.GH_TOKEN.hosts'],
    ]) {
      for (const where of ['personal', 'repository']) {
        const { root, home, env } = setup(where === 'repository' ? { '.omh/settings.toml': settings! } : {})
        if (where === 'personal') writeFileSync(path.join(home, 'settings.toml'), settings!)
        const r = omh(['--dry-run', 'probe'], { cwd: root, env })
        expect(r.status, `${where}: ${settings}`).toBe(2)
        expect(r.stderr).toContain('Code: SETTINGS_INVALID')
        expect(r.stderr).toContain(key!)
        expect(r.stderr).not.toContain('\u001b[2J')
      }
    }
  })
})

describe('omh trust', () => {
  const repo = () => setup({ '.omh/settings.toml': 'plugins = ["./x.mjs"]\n', '.omh/x.mjs': PLUGIN })

  it('--show lists what would be trusted and changes nothing', () => {
    const { root, home, env } = repo()
    const shown = omh(['trust', '--show', '--json'], { cwd: root, env })
    expect(shown.status).toBe(0)
    const result = shown.json().result
    expect(result).toMatchObject({ repository: root, trusted: false })
    expect(result.files.map((f: { file: string; state: string }) => [f.file, f.state])).toEqual([
      [path.join(root, '.omh/settings.toml'), 'new'],
      [path.join(root, '.omh/x.mjs'), 'new'],
    ])
    expect(result.files[0].sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(existsSync(path.join(stateOf(home), 'trust.json'))).toBe(false)
  })

  it('records the hashes in a file only the user can read, and --revoke takes them back', () => {
    const { root, home, env } = repo()
    const trusted = omh(['trust', '--json'], { cwd: root, env })
    expect(trusted.status).toBe(0)
    expect(trusted.json().result).toMatchObject({ repository: root, trusted: true })
    const store = path.join(stateOf(home), 'trust.json')
    expect(statSync(store).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(store, 'utf8')).repositories[root].files).toEqual({
      '.omh/settings.toml': expect.stringMatching(/^[0-9a-f]{64}$/),
      '.omh/x.mjs': expect.stringMatching(/^[0-9a-f]{64}$/),
    })
    expect(omh(['trust', '--show'], { cwd: root, env }).stdout).toMatch(/is trusted/)

    const revoked = omh(['trust', '--revoke'], { cwd: root, env })
    expect(revoked.status).toBe(0)
    expect(revoked.stdout).toContain('no longer trusted')
    expect(omh(['plugins'], { cwd: root, env }).status).toBe(2)
    // Stopping never needs trust: the repository's untrusted settings are left out for it.
    const down = omh(['sessions', 'down', '--all'], { cwd: root, env })
    expect(down.stderr).not.toContain('REPOSITORY_UNTRUSTED')
    expect(down.status, down.stderr).toBe(0)
  })

  it('outside a repository is NOT_A_REPOSITORY', () => {
    const r = omh(['trust'], { cwd: testdir(), env: { OMH_HOME: testdir() } })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('Code: NOT_A_REPOSITORY')
  })
})
