import { execFileSync } from 'node:child_process'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

// A read that hangs is killed here and fails the test, rather than the run.
const QUICK = 15_000

const SECRET = 'SECRET_TOKEN=d0-not-leak-4f9a'

/** A host file outside every tree a test reads, holding something that must never be printed or staged. */
const hostSecret = () => {
  const file = path.join(testdir({ 'id_rsa': `${SECRET}\n` }), 'id_rsa')
  return file
}

const commitAll = (repo: string) => {
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: repo, stdio: 'pipe' })
  git('add', '-A')
  git('commit', '-qm', 'links')
}

/** A repository that commits `links` (path → target) beside its README. */
function repoWith(links: Record<string, string>, files: Record<string, string> = {}): string {
  const repo = gitRepo({ 'README.md': '# r\n', ...files })
  for (const [name, target] of Object.entries(links)) {
    mkdirSync(path.dirname(path.join(repo, name)), { recursive: true })
    symlinkSync(target, path.join(repo, name))
  }
  commitAll(repo)
  return repo
}

const mkfifo = (file: string) => {
  mkdirSync(path.dirname(file), { recursive: true })
  execFileSync('mkfifo', [file])
}

const leaked = (ran: { stdout: string; stderr: string }) => `${ran.stdout}${ran.stderr}`.replace(/\0/g, '\n').includes(SECRET)

describe('a repository cannot make omh read through a link that leaves it', () => {
  it("refuses the project's AGENTS.md linked to a host file, naming the link", () => {
    const repo = repoWith({ 'AGENTS.md': hostSecret() })
    const ran = omh(['render', 'claude', '--content'], { cwd: repo, env: { OMH_HOME: testdir() } })
    expect(leaked(ran)).toBe(false)
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain(`${path.join(repo, 'AGENTS.md')} leads outside ${repo}`)
    expect(ran.stderr).toContain('Code: FILE_OUTSIDE_TREE')
  })

  it("refuses the project's AGENTS.md linked to the process's environment", () => {
    const repo = repoWith({ 'AGENTS.md': '/proc/self/environ' })
    const ran = omh(['render', 'claude', '--content'], { cwd: repo, env: { OMH_HOME: testdir(), SECRET_TOKEN: 'd0-not-leak-4f9a' } })
    expect(leaked(ran)).toBe(false)
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain('Code: FILE_OUTSIDE_TREE')
  })

  it('follows a link that stays inside the repository', () => {
    const repo = repoWith({ 'CLAUDE.md': 'docs/rules.md' }, { 'docs/rules.md': '# Ours\n' })
    const ran = omh(['render', 'claude', '--content'], { cwd: repo, env: { OMH_HOME: testdir() } })
    expect(ran.status).toBe(0)
    expect(ran.stdout).toContain('<!-- omh: CLAUDE.md -->\n# Ours')
  })

  it('refuses settings, hook files and a hooks folder linked outside it', () => {
    const outside = testdir({ 'hooks/x.json': JSON.stringify({ on: 'turn-end', run: SECRET }), 'settings.toml': `${SECRET.split('=')[0]} = "x"\n` })
    for (const [link, target] of [
      ['.omh/settings.toml', path.join(outside, 'settings.toml')],
      ['.omh/settings.local.toml', path.join(outside, 'settings.toml')],
      ['omh.config.toml', path.join(outside, 'settings.toml')],
      ['package.json', path.join(outside, 'settings.toml')],
      ['.omh/hooks/x.json', path.join(outside, 'hooks/x.json')],
      ['.omh/hooks', path.join(outside, 'hooks')],
    ] as const) {
      const repo = repoWith({ [link]: target })
      const ran = omh(['render', 'claude', '--content'], { cwd: repo, env: { OMH_HOME: testdir() } })
      expect(leaked(ran), link).toBe(false)
      expect(ran.stderr, link).toContain('Code: FILE_OUTSIDE_TREE')
      expect(ran.status, link).toBe(2)
    }
  })

  it("refuses to import the project's .mcp.json linked outside it", () => {
    const outside = testdir({ 'mcp.json': JSON.stringify({ mcpServers: { leak: { command: 'x', env: { SECRET_TOKEN: 'd0-not-leak-4f9a' } } } }) })
    const repo = repoWith({ '.mcp.json': path.join(outside, 'mcp.json') })
    const ran = omh(['config', 'mcp', 'import', 'claude', '--json'], { cwd: repo, env: { OMH_HOME: testdir() } })
    expect(ran.status).toBe(2)
    expect(ran.json().error.code).toBe('FILE_OUTSIDE_TREE')
    expect(ran.stdout).not.toContain('leak')
  })
})

describe('omh reads only regular files, and only so much of each', () => {
  it('refuses a FIFO among your rules instead of waiting on it', () => {
    const home = testdir()
    mkfifo(path.join(home, 'rules/p.md'))
    const started = Date.now()
    const ran = omh(['render', 'claude'], { cwd: testdir(), env: { OMH_HOME: home }, timeout: QUICK })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain(`${path.join(home, 'rules/p.md')} is a FIFO, not a regular file`)
    expect(ran.stderr).toContain('Code: FILE_NOT_REGULAR')
    expect(Date.now() - started).toBeLessThan(QUICK)
  })

  it('refuses a rule linked to a device at once', () => {
    const home = testdir()
    mkdirSync(path.join(home, 'rules'))
    symlinkSync('/dev/zero', path.join(home, 'rules/zero.md'))
    const ran = omh(['render', 'claude'], { cwd: testdir(), env: { OMH_HOME: home }, timeout: QUICK })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain(`${path.join(home, 'rules/zero.md')} is a character device, not a regular file`)
  })

  it('refuses a FIFO wherever omh reads your profile: settings, adapters, hooks, mcp.json, a skill', () => {
    for (const name of ['settings.toml', 'adapters/claude.toml', 'hooks/h.json', 'mcp.json', 'skills/s/SKILL.md', 'commands/c.md', 'subagents/a.md']) {
      const home = testdir()
      mkfifo(path.join(home, name))
      const ran = omh(['render', 'claude'], { cwd: testdir(), env: { OMH_HOME: home }, timeout: QUICK })
      expect(ran.stderr, name).toContain('Code: FILE_NOT_REGULAR')
      expect(ran.status, name).toBe(2)
    }
  })

  it('refuses a FIFO where omh lists adapters and editors or edits mcp.json', () => {
    for (const [name, args] of [
      ['adapters/x.toml', ['adapters', 'ls']],
      ['mcp.json', ['config', 'mcp', 'ls']],
      ['mcp.json', ['config', 'mcp', 'add', 'docs', '--yes', '--', 'srv']],
      ['editors/code.toml', ['attach', 'code']],
    ] as const) {
      const home = testdir()
      mkfifo(path.join(home, name))
      const ran = omh(args, { cwd: gitRepo(), env: { OMH_HOME: home }, timeout: QUICK })
      expect(ran.stderr, args.join(' ')).toContain(`${path.join(home, name)} is a FIFO`)
      expect(ran.status, args.join(' ')).toBe(2)
    }
  })

  it('refuses a FIFO in the repository: its settings and its rules', () => {
    for (const name of ['.omh/settings.toml', 'omh.config.json', 'AGENTS.md', '.omh/hooks/h.json']) {
      const repo = gitRepo()
      mkfifo(path.join(repo, name))
      const ran = omh(['render', 'claude'], { cwd: repo, env: { OMH_HOME: testdir() }, timeout: QUICK })
      expect(ran.stderr, name).toContain('Code: FILE_NOT_REGULAR')
      expect(ran.status, name).toBe(2)
    }
  })

  it('refuses a file larger than [limits] file_bytes, and reads it once the limit allows', () => {
    // The limit sits above every bundled adapter's size, so the one file over it is the rule.
    const home = testdir({ 'rules/big.md': `${'x'.repeat(40_000)}\n`, 'settings.toml': '[limits]\nfile_bytes = 20000\n' })
    const ran = omh(['render', 'claude'], { cwd: testdir(), env: { OMH_HOME: home } })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain(`${path.join(home, 'rules/big.md')} holds 40001 bytes, more than the 20000 omh reads from one file`)
    expect(ran.stderr).toContain('Code: FILE_TOO_LARGE')
    writeFileSync(path.join(home, 'settings.toml'), '[limits]\nfile_bytes = 60000\n')
    expect(omh(['render', 'claude'], { cwd: testdir(), env: { OMH_HOME: home } }).status).toBe(0)
  })

  it('refuses a limit that is not a positive whole number of bytes', () => {
    const home = testdir({ 'settings.toml': '[limits]\nfile_bytes = -1\n' })
    const ran = omh(['render', 'claude'], { cwd: testdir(), env: { OMH_HOME: home } })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain('Code: SETTINGS_INVALID')
    expect(ran.stderr).toContain('limits.file_bytes')
  })

  it('still follows a link in your own profile to a file elsewhere on this machine', () => {
    const dotfiles = testdir({ 'style.md': 'Be brief.\n' })
    const home = testdir()
    mkdirSync(path.join(home, 'rules'))
    symlinkSync(path.join(dotfiles, 'style.md'), path.join(home, 'rules/style.md'))
    const ran = omh(['render', 'claude', '--content'], { cwd: testdir(), env: { OMH_HOME: home } })
    expect(ran.status).toBe(0)
    expect(ran.stdout).toContain('Be brief.')
  })
})
