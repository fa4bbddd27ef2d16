import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

const PROJECT = {
  'package.json': JSON.stringify({ name: 'app', scripts: { test: 'vitest run' } }),
  'package-lock.json': '{}',
  'tsconfig.json': '{}',
  'AGENTS.md': '# Rules\n',
  '.mcp.json': JSON.stringify({ mcpServers: { docs: { command: 'docs-server', args: ['--stdio'] } } }),
  '.cursor/rules/style.mdc': 'be nice\n',
}

describe('omh init', () => {
  const LANGUAGES: Record<string, { files: Record<string, string>; packages: string[]; test?: string; setup?: string[] }> = {
    'Python with pytest': { files: { 'pyproject.toml': '[tool.pytest.ini_options]\n', 'calc.py': '' }, packages: ['python3', 'python3-venv', 'python3-pytest'], test: 'pytest' },
    'Python without pytest': { files: { 'requirements.txt': 'requests\n' }, packages: ['python3', 'python3-venv'] },
    'Python without a manifest': { files: { 'src/calc.py': 'x = 1\n', 'tests/test_calc.py': 'assert True\n' }, packages: ['python3', 'python3-venv'] },
    Go: { files: { 'go.mod': 'module x\n' }, packages: ['golang'], test: 'go test ./...' },
    Rust: { files: { 'Cargo.toml': '[package]\nname = "x"\n' }, packages: ['cargo'], test: 'cargo test' },
    'C with a Makefile': { files: { Makefile: 'test:\n\t./run\n', 'main.c': 'int main(){}\n' }, packages: ['build-essential'], test: 'make test' },
    'Node with a native dependency': {
      files: { 'package.json': JSON.stringify({ scripts: { test: 'node t.js' } }), 'package-lock.json': JSON.stringify({ lockfileVersion: 3, packages: { '': {}, 'node_modules/better-sqlite3': { hasInstallScript: true } } }) },
      packages: ['build-essential', 'python3'],
      test: 'npm test',
      setup: ['npm ci'],
    },
    'Node without one': { files: { 'package.json': '{}', 'package-lock.json': JSON.stringify({ lockfileVersion: 3, packages: { '': {} } }) }, packages: [], setup: ['npm ci'] },
  }

  it.each(Object.keys(LANGUAGES))('writes what %s needs as keys: its Debian packages, its setup and its test command', (name) => {
    const { files, packages, test, setup } = LANGUAGES[name]!
    const repo = gitRepo(files)
    const env = { OMH_HOME: testdir() }
    const r = omh(['init', '--json'], { cwd: repo, env })
    expect(r.status, r.stderr).toBe(0)
    expect(r.json().result.facts.packages.map((p: { name: string }) => p.name)).toEqual(packages)
    const text = readFileSync(path.join(repo, '.omh/settings.toml'), 'utf8')
    if (packages.length) expect(text).toContain(`packages = [${packages.map((p) => JSON.stringify(p)).join(', ')}]`)
    else expect(text).not.toContain('packages =')
    if (test) expect(text).toContain(`test = ${JSON.stringify(test)}`)
    if (setup) expect(text).toContain(`setup = ${JSON.stringify(setup).replace(/,/g, ', ')}`)
    // What it wrote builds packages, so it would wait for trust: omh init trusts its own words, and only them.
    const trust = omh(['trust', '--show', '--json'], { cwd: repo, env }).json().result
    expect(trust.files.every((f: { state: string }) => f.state === 'trusted')).toBe(true)
    expect(omh(['--dry-run', '--json', 'claude'], { cwd: repo, env }).status).toBe(0)
  })

  it('suggests carrying untracked local configuration in, and copies nothing of it', () => {
    const repo = gitRepo({ 'README.md': 'x\n', '.gitignore': '.env\n' })
    writeFileSync(path.join(repo, '.env'), 'SECRET=1\n')
    writeFileSync(path.join(repo, '.env.example'), 'SECRET=\n')
    const r = omh(['init'], { cwd: repo, env: { OMH_HOME: testdir() } })
    expect(r.stdout).toContain('.env looks like local configuration')
    expect(r.stdout).toContain('carry_in = [".env"]')
    expect(readFileSync(path.join(repo, '.omh/settings.toml'), 'utf8')).not.toContain('SECRET')
  })

  it('decides from the repository, asks nothing, and writes only keys the settings accept', () => {
    const repo = gitRepo(PROJECT)
    const env = { OMH_HOME: testdir() }
    const r = omh(['init', '--json'], { cwd: repo, env })
    expect(r.status).toBe(0)
    const result = r.json().result
    expect(result.facts.packageManager).toEqual({ name: 'npm', from: 'package-lock.json' })
    expect(result.facts.languages.map((l: { name: string }) => l.name)).toEqual(['TypeScript', 'JavaScript'])
    expect(result.facts.test).toEqual({ name: 'npm test', from: 'package.json scripts.test' })
    expect(result.facts.harnessFiles.map((h: { path: string }) => h.path)).toEqual(['AGENTS.md', '.mcp.json', '.cursor/rules'])
    expect(result.unsettable.map((u: { fact: string }) => u.fact)).toEqual(['package manager'])
    expect(result.written).toEqual(['.omh/settings.toml', '.omh/.gitignore'])
    expect(result.imports.changes).toEqual([{ name: 'docs', change: 'added', transport: 'stdio' }])
    expect(result.imports.written).toBe(false)
    expect(existsSync(path.join(env.OMH_HOME, 'mcp.json'))).toBe(false)
    expect(readFileSync(path.join(repo, '.omh/.gitignore'), 'utf8')).toContain('settings.local.toml')
    // The file it wrote is a settings layer omh reads without complaint.
    expect(omh(['render', 'claude', '--json'], { cwd: repo, env }).status).toBe(0)
  })

  it('changes nothing when run again, and never touches a settings file you wrote', () => {
    const repo = gitRepo(PROJECT)
    const env = { OMH_HOME: testdir() }
    expect(omh(['init'], { cwd: repo, env }).status).toBe(0)
    const first = readFileSync(path.join(repo, '.omh/settings.toml'), 'utf8')
    const again = omh(['init', '--json'], { cwd: repo, env })
    expect(again.json().result.written).toEqual([])
    expect(again.json().result.files.map((f: { action: string }) => f.action)).toEqual(['same', 'same'])
    writeFileSync(path.join(repo, '.omh/settings.toml'), 'runtime = "podman"\n')
    const mine = omh(['init'], { cwd: repo, env })
    expect(mine.status).toBe(0)
    expect(mine.stdout).toContain('.omh/settings.toml yours: left as it is')
    expect(mine.stdout).toContain('Nothing to change.')
    expect(readFileSync(path.join(repo, '.omh/settings.toml'), 'utf8')).toBe('runtime = "podman"\n')
    expect(first).toContain('# What `omh init` found here')
  })

  it('--dry-run prints the plan and writes nothing; --import brings the servers in, once', () => {
    const repo = gitRepo(PROJECT)
    const env = { OMH_HOME: testdir() }
    const dry = omh(['init', '--dry-run', '--import'], { cwd: repo, env })
    expect(dry.status).toBe(0)
    expect(dry.stdout).toContain('.omh/settings.toml would create')
    expect(dry.stdout).toMatch(/\+ added\s+docs\s+docs-server --stdio/)
    expect(existsSync(path.join(repo, '.omh'))).toBe(false)
    expect(existsSync(path.join(env.OMH_HOME, 'mcp.json'))).toBe(false)
    const done = omh(['init', '--import'], { cwd: repo, env })
    expect(done.status).toBe(0)
    expect(JSON.parse(readFileSync(path.join(env.OMH_HOME, 'mcp.json'), 'utf8')).mcpServers.docs).toMatchObject({ command: 'docs-server', args: ['--stdio'] })
    const again = omh(['init', '--import', '--json'], { cwd: repo, env })
    expect(again.json().result.written).toEqual([])
    expect(again.json().result.imports.changes).toEqual([{ name: 'docs', change: 'same', transport: 'stdio' }])
  })

  it('reads the repository as untrusted: a link is reported, never followed, and nothing is created through one', () => {
    const outside = testdir({ 'secret.json': JSON.stringify({ mcpServers: { leak: { command: 'x' } } }) })
    const repo = gitRepo({ 'README.md': 'hi\n' })
    symlinkSync(path.join(outside, 'secret.json'), path.join(repo, '.mcp.json'))
    symlinkSync(outside, path.join(repo, '.omh'))
    const r = omh(['init', '--json', '--import'], { cwd: repo, env: { OMH_HOME: testdir() } })
    expect(r.status).toBe(0)
    const result = r.json().result
    expect(result.facts.harnessFiles).toEqual([{ path: '.mcp.json', kind: 'link', harness: 'claude', use: 'a link: omh does not follow it' }])
    expect(result.imports.sources).toEqual([])
    expect(result.files.map((f: { action: string }) => f.action)).toEqual(['refused', 'refused'])
    expect(result.written).toEqual([])
    expect(existsSync(path.join(outside, 'settings.toml'))).toBe(false)
    // A settings file reached through such a link is refused as every command refuses it, naming the file.
    writeFileSync(path.join(outside, 'settings.toml'), 'x = 1\n')
    const refused = omh(['init'], { cwd: repo, env: { OMH_HOME: testdir() } })
    expect(refused.status).toBe(2)
    expect(refused.stderr).toContain(`${path.join(repo, '.omh/settings.toml')} leads outside`)
  })

  it('refuses a harness file it cannot read only when asked to import it, and then writes nothing', () => {
    const repo = gitRepo({ '.mcp.json': '{ not json' })
    const env = { OMH_HOME: testdir() }
    const refused = omh(['init', '--import'], { cwd: repo, env })
    expect(refused.status).toBe(2)
    expect(existsSync(path.join(repo, '.omh'))).toBe(false)
    const r = omh(['init'], { cwd: repo, env })
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('.mcp.json (claude):')
    const imported = omh(['init', '--import'], { cwd: repo, env })
    expect(imported.status).toBe(2)
    expect(imported.stderr).toContain(`${path.join(repo, '.mcp.json')} cannot be read`)
    expect(existsSync(path.join(env.OMH_HOME, 'mcp.json'))).toBe(false)
  })
})
