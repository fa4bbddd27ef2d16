import { execFileSync } from 'node:child_process'
import { mkdirSync, symlinkSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { gitRepo, testdir, write } from '@omh/test-utils'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: 'pipe' }).trim()

/** A repository whose local settings carry `carry_in`, and a profile naming an engine nobody has: nothing may reach one. */
function setup(settings: string, files: Record<string, string> = {}) {
  const root = gitRepo({ 'README.md': 'hi\n' })
  write(root, { '.omh/settings.local.toml': settings, ...files })
  const home = testdir({ 'settings.toml': 'runtime = "no-such-engine"\n' })
  // carry_in in a repository's settings waits for trust: each launch here is the user's after `omh trust`.
  const launch = () => {
    omh(['trust'], { cwd: root, env: { OMH_HOME: home } })
    return omh(['--new', 'claude'], { cwd: root, env: { OMH_HOME: home } })
  }
  return { root, launch }
}

const refused = (r: { status: number; stderr: string }, entry: string, why: string) => {
  expect(r.status).toBe(2)
  expect(r.stderr).toContain('Code: CARRY_IN_REFUSED')
  expect(r.stderr).toContain(`settings.local.toml: [session] carry_in entry "${entry}" is refused: ${why}`)
  expect(r.stderr).not.toMatch(/\n\s+at /)
}

describe('[session] carry_in refuses, exit 2, naming the entry, before anything is made', () => {
  it('a pattern reaching outside the repository', () => {
    const { root, launch } = setup('[session]\ncarry_in = ["../secrets.env"]\n')
    refused(launch(), '../secrets.env', 'it reaches outside the repository')
    expect(git(root, 'branch', '--list', 'omh/*')).toBe('')
  })

  it('a link leading out of the repository', () => {
    const { root, launch } = setup('[session]\ncarry_in = ["*.env"]\n')
    symlinkSync('/etc/hostname', path.join(root, 'host.env'))
    const r = launch()
    refused(r, '*.env', 'host.env: ')
    expect(r.stderr).toContain('/etc/hostname')
    expect(git(root, 'branch', '--list', 'omh/*')).toBe('')
  })

  it('more bytes than [limits] carry_in_bytes', () => {
    const { launch } = setup('[session]\ncarry_in = [".env", "big.db"]\n[limits]\ncarry_in_bytes = 12\n', { '.env': 'A=1\n', 'big.db': 'twenty bytes of data' })
    refused(launch(), 'big.db', 'the files it and the entries before it name hold more than [limits] carry_in_bytes (12 bytes)')
  })

  it('a FIFO, without waiting on it, and a directory it names', () => {
    const fifo = setup('[session]\ncarry_in = ["pipe.env"]\n')
    execFileSync('mkfifo', [path.join(fifo.root, 'pipe.env')])
    refused(fifo.launch(), 'pipe.env', 'pipe.env is not a regular file')
    const dir = setup('[session]\ncarry_in = ["fixtures"]\n', { 'fixtures/a.db': 'a' })
    mkdirSync(path.join(dir.root, 'fixtures'), { recursive: true })
    refused(dir.launch(), 'fixtures', 'fixtures is a directory: name its files, e.g. "fixtures/**"')
  })

  it('a bad idle_stop or carry_in is a settings error with the file and key', () => {
    const { launch } = setup('[session]\nidle_stop = "soon"\ncarry_in = "not a list"\n')
    const r = launch()
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('Code: SETTINGS_INVALID')
    expect(r.stderr).toMatch(/session\.idle_stop.*a duration/)
    expect(r.stderr).toMatch(/session\.carry_in/)
  })
})

describe('a dry run finds what the launch would refuse', () => {
  it('lists the files carry_in would copy, and refuses a bad entry as the launch does', () => {
    const { root } = setup('[session]\ncarry_in = [".env"]\n', { '.env': 'A=1\n', '.gitignore': '.env\n' })
    const home = testdir({ 'settings.toml': 'runtime = "no-such-engine"\n' })
    omh(['trust'], { cwd: root, env: { OMH_HOME: home } })
    const plan = omh(['--dry-run', 'claude'], { cwd: root, env: { OMH_HOME: home } })
    expect(plan.status, plan.stderr).toBe(0)
    expect(plan.stdout).toMatch(/carry in\s+\.env/)
    const json = omh(['--dry-run', '--json', 'claude'], { cwd: root, env: { OMH_HOME: home } })
    expect(json.json().result.carryIn).toEqual(['.env'])

    write(root, { '.omh/settings.local.toml': '[session]\ncarry_in = ["../x.env"]\n' })
    omh(['trust'], { cwd: root, env: { OMH_HOME: home } })
    refused(omh(['--dry-run', 'claude'], { cwd: root, env: { OMH_HOME: home } }), '../x.env', 'it reaches outside the repository')
  })

  it('refuses a <secret NAME> nothing holds, as the launch would', () => {
    const root = gitRepo({ 'README.md': 'hi\n' })
    const home = testdir({
      'settings.toml': 'runtime = "no-such-engine"\n',
      'mcp.json': JSON.stringify({ mcpServers: { api: { command: 'srv', env: { API_TOKEN: '<secret OMH_TEST_MISSING_TOKEN>' } } } }),
    })
    const r = omh(['--dry-run', 'claude'], { cwd: root, env: { OMH_HOME: home } })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('Code: SECRET_MISSING')
    expect(r.stderr).toContain('OMH_TEST_MISSING_TOKEN')
  })
})
