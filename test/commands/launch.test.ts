import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh, stateOf } from '../helpers/run.js'
import { gitRepo, testdir, write } from '@omh/test-utils'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: 'pipe' }).trim()

function setup() {
  const root = gitRepo({ 'README.md': 'hi\n', 'AGENTS.md': 'Project rules.\n' })
  const home = testdir({ 'settings.toml': '[image]\nbase = "omh-test/base:1"\n', 'rules/style.md': 'Be brief.\n' })
  return { root, home, env: { OMH_HOME: home } }
}

const nothingCreated = (home: string, root: string) => {
  expect(existsSync(path.join(stateOf(home), 'worktrees'))).toBe(false)
  expect(existsSync(path.join(stateOf(home), 'shadow'))).toBe(false)
  expect(git(root, 'branch', '--list', 'omh/*')).toBe('')
}

describe('omh <harness> --dry-run', () => {
  it('prints the plan and creates nothing', () => {
    const { root, home, env } = setup()
    const r = omh(['--dry-run', '--json', 'claude', '--', '-p', 'hi'], { cwd: root, env })
    expect(r.status).toBe(0)
    const plan = r.json().result
    expect(plan).toMatchObject({ harness: 'claude', session: 's01', branch: 'omh/s01', create: true, base: { name: 'main' } })
    const mounts = plan.container.mounts as { host: string; guest: string; readOnly: boolean }[]
    // Writable: the worktree, the sandbox repository and the harness's credentials; nothing else.
    const writable = mounts.filter((m) => !m.readOnly)
    expect(writable.slice(0, 2).map((m) => m.guest)).toEqual(['/work', '/omh/shadow'])
    for (const m of writable.slice(2)) expect(m.host.startsWith(path.join(stateOf(home), 'creds', 'claude', 'default'))).toBe(true)
    expect(mounts.find((m) => m.guest === '/work')!.host).toBe(plan.worktree)
    expect(mounts.map((m) => m.guest)).toEqual(expect.arrayContaining(['/work/CLAUDE.md', '/work/.git']))
    expect(mounts.some((m) => m.host === root || m.host.startsWith(`${root}/`))).toBe(false)
    // The agent is the user running omh, or UID 1000 for root.
    const agent = process.getuid?.() === 0 ? '1000:1000' : `${process.getuid?.()}:${process.getgid?.()}`
    expect(plan.container).toMatchObject({ user: agent, capDrop: ['ALL'], noNewPrivileges: true, init: true })
    // The adapter's arguments for every session come first, then the user's.
    expect(plan.exec).toEqual(['claude', '--allowedTools=Grep(./**),Glob(./**)', '-p', 'hi'])
    nothingCreated(home, root)
  })

  it('announces the session on stderr and prints the plan on stdout', () => {
    const { root, env } = setup()
    const r = omh(['--dry-run', 'claude'], { cwd: root, env })
    expect(r.status).toBe(0)
    expect(r.stderr).toBe('omh: claude on omh/s01\n')
    expect(r.stdout).toMatch(/session\s+s01 on omh\/s01 \(new, from main at [0-9a-f]{8}\)/)
    expect(r.stdout).toMatch(/rw\s+\/work\s+\S+\/worktrees\//)
  })
})

describe('omh --name <name> <harness>', () => {
  it('plans a new session by that name, on the branch of that name', () => {
    const { root, home, env } = setup()
    const r = omh(['--name', 'feature-x', '--dry-run', '--json', 'claude'], { cwd: root, env })
    expect(r.status, r.stderr).toBe(0)
    expect(r.json().result).toMatchObject({ session: 'feature-x', branch: 'omh/feature-x', create: true })
    nothingCreated(home, root)
  })

  it('refuses a name that cannot be a session, one of omh numbering, and one a branch holds, exit 2, creating nothing', () => {
    const { root, home, env } = setup()
    for (const name of ['Feature', 'fix--it', 'x-', '../up', 's07', 'a'.repeat(41)]) {
      const r = omh(['--name', name, '--dry-run', 'claude'], { cwd: root, env })
      expect(r.status, name).toBe(2)
      expect(r.stderr).toContain('SESSION_NAME_REFUSED')
    }
    git(root, 'branch', 'omh/kept')
    const kept = omh(['--name', 'kept', '--dry-run', 'claude'], { cwd: root, env })
    expect(kept.status).toBe(2)
    expect(kept.stderr).toContain('the branch omh/kept exists')
    expect(kept.stderr).toContain('git branch -D omh/kept')
    expect(omh(['--name', 'x', '--session', 's01', 'claude'], { cwd: root, env }).status).toBe(2)
    git(root, 'branch', '-D', 'omh/kept')
    nothingCreated(home, root)
  })
})

describe('omh <harness> announces', () => {
  it('what the harness takes translated and what it drops, on the one line, and each item with --verbose', () => {
    const { root, home, env } = setup()
    write(home, {
      'commands/review.md': 'Review.\n',
      'hooks/find.json': '{ "on": "after-tool", "tools": ["search"], "run": "true" }\n',
    })
    const r = omh(['--dry-run', 'codex'], { cwd: root, env })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toBe('omh: codex on omh/s01 — translated 1 command (to a skill); dropped 1 hook (no `search` tool)\n')
    const v = omh(['--dry-run', '--verbose', 'codex'], { cwd: root, env })
    expect(v.stderr).toContain('  commands: review (translated to a skill)\n  hooks: find (no `search` tool)\n')
  })
})

describe('omh <harness> refuses bad input, creating nothing', () => {
  it("refuses omh's flag after the harness name", () => {
    const { root, home, env } = setup()
    const r = omh(['claude', '-p', 'x', '--dry-run'], { cwd: root, env })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain("`--dry-run` is omh's flag, not claude's")
    expect(r.stderr).toContain('omh --dry-run claude -p x')
    expect(r.stderr).toContain('Code: LAUNCH_FLAG_MISPLACED')
    nothingCreated(home, root)
  })

  it('a repository with no commits', () => {
    const { home, env } = setup()
    const root = testdir()
    git(root, 'init', '-q', '-b', 'main')
    const r = omh(['claude'], { cwd: root, env })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('has no commits yet')
    expect(r.stderr).toContain('Code: REPOSITORY_EMPTY')
    expect(existsSync(path.join(stateOf(home), 'worktrees'))).toBe(false)
  })

  it('a detached HEAD with no default branch to start from', () => {
    const { root, home, env } = setup()
    git(root, 'branch', '-m', 'trunk')
    git(root, 'checkout', '-q', '--detach')
    const r = omh(['claude'], { cwd: root, env })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('HEAD is detached at')
    expect(r.stderr).toContain('git switch')
    nothingCreated(home, root)
  })

  it('a directory outside any repository', () => {
    const { env } = setup()
    const r = omh(['claude'], { cwd: testdir(), env })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('Code: NOT_A_REPOSITORY')
  })

  it('an unknown harness, with the nearest name', () => {
    const { root, env } = setup()
    const r = omh(['claud'], { cwd: root, env })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('Did you mean "claude"?')
  })

  it('no container engine installed', () => {
    const { root, home, env } = setup()
    const bin = testdir()
    for (const tool of ['git', 'sh']) symlinkSync(execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), path.join(bin, tool))
    const r = omh(['claude'], { cwd: root, env: { ...env, PATH: bin } })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('Code: RUNTIME_NOT_FOUND')
    expect(r.stderr).toMatch(/not installed/)
    nothingCreated(home, root)
  })

  it('an engine that does not answer', () => {
    const { root, home, env } = setup()
    const nowhere = path.join(testdir(), 'no.sock')
    mkdirSync(path.dirname(nowhere), { recursive: true })
    const r = omh(['--runtime', 'docker', 'claude'], { cwd: root, env: { ...env, DOCKER_HOST: `unix://${nowhere}` } })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('docker')
    nothingCreated(home, root)
  })
})

describe('omh <harness> reads its own flags as every command does', () => {
  const refused = (argv: string[], message: RegExp) => {
    const { root, home, env } = setup()
    const r = omh(argv, { cwd: root, env })
    expect(r.status).toBe(2)
    if (argv.includes('--json')) {
      expect(r.json().error).toMatchObject({ code: 'USAGE', message: expect.stringMatching(message) })
    } else {
      expect(r.stderr).toMatch(message)
      expect(r.stderr).toContain('Code: USAGE')
    }
    nothingCreated(home, root)
  }

  it('refuses what it cannot read, as usage errors', () => {
    refused(['--nope', 'claude'], /--nope/)
    refused(['--session'], /--session/)
    refused(['--new', '--session', 's01', 'claude'], /--session|--new/)
    refused(['--json', 'claude'], /goes with --dry-run/)
    refused(['--color', 'pink', 'claude'], /auto, always, never|pink/)
  })

  it("hands the harness its arguments byte for byte, repeated ones included, and omh's --json the plan", () => {
    const { root, env } = setup()
    const r = omh(['--dry-run', '--json', '-s', 's01', 'claude', '-p', 'a  b', '-p', 'a  b', '--', '--json'], { cwd: root, env: { ...env } })
    expect(r.status).toBe(2)
    expect(r.json().error.code).toBe('SESSION_NOT_FOUND')
    const ok = omh(['--dry-run', '--json', 'claude', '-p', 'a  b', '-p', 'a  b', '--', '--json'], { cwd: root, env })
    expect(ok.status).toBe(0)
    expect(ok.json().result.exec).toEqual(['claude', '--allowedTools=Grep(./**),Glob(./**)', '-p', 'a  b', '-p', 'a  b', '--json'])
  })
})

describe('omh flags before a command', () => {
  it('reach the command', () => {
    const { root, env } = setup()
    const r = omh(['--json', 'sessions', 'ls'], { cwd: root, env })
    expect(r.status).toBe(0)
    expect(r.json().result.sessions).toEqual([])
  })
})

describe('omh <harness> picks the account whose login it mounts', () => {
  const captured = (home: string, ...accounts: string[]) => {
    for (const a of accounts) {
      mkdirSync(path.join(stateOf(home), 'creds/claude', a, '.claude'), { recursive: true })
      writeFileSync(path.join(stateOf(home), 'creds/claude', a, '.claude/.credentials.json'), '{"token":"t"}\n')
    }
  }
  /** The accounts whose directories the plan mounts. */
  const credsOf = (plan: { container: { mounts: { host: string; readOnly: boolean }[] } }, home: string) => {
    const store = path.join(stateOf(home), 'creds/claude')
    return [...new Set(plan.container.mounts.filter((m) => !m.readOnly && m.host.startsWith(store)).map((m) => path.relative(store, m.host).split(path.sep)[0]))]
  }

  it('the only captured one, or the one -a names', () => {
    const { root, home, env } = setup()
    captured(home, 'work')
    expect(credsOf(omh(['--dry-run', '--json', 'claude'], { cwd: root, env }).json().result, home)).toEqual(['work'])
    captured(home, 'home')
    expect(credsOf(omh(['--dry-run', '--json', '-a', 'home', 'claude'], { cwd: root, env }).json().result, home)).toEqual(['home'])
  })

  it('never guesses between two, and names those captured when -a names another', () => {
    const { root, home, env } = setup()
    captured(home, 'work', 'home')
    const two = omh(['--dry-run', 'claude'], { cwd: root, env })
    expect(two.status).toBe(2)
    expect(two.stderr).toContain('claude has several accounts (home, work), and nothing says which to use.')
    const missing = omh(['--dry-run', '--account', 'play', 'claude'], { cwd: root, env })
    expect(missing.status).toBe(2)
    expect(missing.stderr).toContain('claude has no account "play" (captured: home, work).')
    nothingCreated(home, root)
  })
})
