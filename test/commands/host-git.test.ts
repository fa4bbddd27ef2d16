// The agent writes every byte of its worktree, and host git reads it for
// `sessions ls`, `diff`, `commit` and `rm`. None of those may run a program
// that anything in the worktree configured: each way in is planted here as
// the agent would plant it, and each command must leave the marker unmade.
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { createSession, repository, resolveBase } from '@omh/sandbox'
import { describe, expect, it } from 'vitest'
import { omh, stateOf } from '../helpers/run.js'
import { testdir, write } from '@omh/test-utils'

const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, ...identity } }).trim()

/**
 * A repository whose base commit has a submodule `sub` (a gitlink, as a
 * clone leaves it: an empty directory in a worktree), and one session.
 */
async function withSession(userConfig: Record<string, string> = {}) {
  const root = testdir({ 'README.md': 'hi\n', 'data.txt': 'one\n' })
  git(root, 'init', '-q', '-b', 'main')
  git(root, 'add', '-A')
  git(root, 'commit', '-q', '-m', 'init')
  git(root, 'update-index', '--add', '--cacheinfo', `160000,${git(root, 'rev-parse', 'HEAD')},sub`)
  git(root, 'commit', '-q', '-m', 'a submodule')
  for (const [key, value] of Object.entries(userConfig)) git(root, 'config', key, value)
  const home = testdir()
  const paths = await createSession(stateOf(home), repository(root), 's01', await resolveBase(repository(root), process.env), process.env)
  const marker = path.join(testdir(), 'ran-on-the-host')
  return { root, home, worktree: paths.worktree, marker, env: { OMH_HOME: home, ...identity } }
}

/** A program that leaves the marker and passes its input on, as a filter must. */
const leaves = (marker: string) => `sh -c 'touch ${marker}; cat'`

/** `git init` in `dir` of the worktree, as the agent would, with `config` set there. */
function nestedRepository(dir: string, config: Record<string, string>) {
  mkdirSync(dir, { recursive: true })
  git(dir, 'init', '-q')
  for (const [key, value] of Object.entries(config)) git(dir, 'config', key, value)
  write(dir, { 'f.txt': 'a\n' })
  git(dir, 'add', '-A')
  git(dir, 'commit', '-q', '-m', 'inner')
  // The same size, so git must read the file (and filter it) to see the change.
  writeFileSync(path.join(dir, 'f.txt'), 'b\n')
}

/** Every host command that reads the worktree, in the order a user runs them. */
function review(at: Awaited<ReturnType<typeof withSession>>) {
  const run = (args: string[]) => omh(args, { cwd: at.root, env: at.env })
  const ran: Record<string, number> = {}
  for (const args of [['sessions', 'ls'], ['sessions', 'diff'], ['sessions', 'diff', '--stat'], ['sessions', 'commit', '-m', 'work'], ['sessions', 'ls'], ['sessions', 'rm', 's01', '--force']]) {
    const r = run(args)
    ran[args.join(' ')] = r.status
    expect(r.stderr, args.join(' ')).not.toContain('INTERNAL')
    expect(existsSync(at.marker), `${args.join(' ')} ran a program the worktree configured`).toBe(false)
  }
  return ran
}

// Each case runs a real git sandbox through omh several times: slow on a busy 2-core machine.
describe('host git never runs what the worktree configured', { timeout: 180_000 }, () => {
  it("a clean filter in a repository the agent made inside the worktree (the reported case)", async () => {
    const at = await withSession()
    nestedRepository(path.join(at.worktree, 'made'), { 'filter.x.clean': leaves(at.marker) })
    write(path.join(at.worktree, 'made'), { '.gitattributes': '* filter=x\n' })
    writeFileSync(path.join(at.worktree, 'work.txt'), 'agent work\n')
    review(at)
  })

  it("a clean filter in the submodule's directory, which the base has as a gitlink", async () => {
    const at = await withSession()
    nestedRepository(path.join(at.worktree, 'sub'), { 'filter.x.clean': leaves(at.marker) })
    write(path.join(at.worktree, 'sub'), { '.gitattributes': '* filter=x\n' })
    review(at)
  })

  it("a filter of the user's own config, picked for the agent's files by the agent's .gitattributes", async () => {
    const at = await withSession({ 'filter.mine.clean': leaves(''), 'filter.mine.required': 'true' })
    git(at.root, 'config', 'filter.mine.clean', leaves(at.marker))
    write(at.worktree, { '.gitattributes': '* filter=mine\n', 'work.txt': 'agent work\n' })
    review(at)
  })

  it("a textconv, the user's own or one configured in a nested repository, picked by the agent's attributes", async () => {
    const at = await withSession({ 'diff.mine.textconv': leaves('') })
    git(at.root, 'config', 'diff.mine.textconv', leaves(at.marker))
    write(at.worktree, { '.gitattributes': '* diff=mine\n' })
    writeFileSync(path.join(at.worktree, 'data.txt'), 'two\n')
    nestedRepository(path.join(at.worktree, 'sub'), { 'diff.x.textconv': leaves(at.marker) })
    write(path.join(at.worktree, 'sub'), { '.gitattributes': '* diff=x\n' })
    review(at)
  })

  it('a filesystem monitor configured in the submodule directory', async () => {
    const at = await withSession()
    nestedRepository(path.join(at.worktree, 'sub'), {})
    git(path.join(at.worktree, 'sub'), 'config', 'core.fsmonitor', `touch ${at.marker}; false`)
    review(at)
  })

  it('a hooks path in the submodule directory, whose hook runs when git writes an index', async () => {
    const at = await withSession()
    nestedRepository(path.join(at.worktree, 'sub'), { 'core.hooksPath': 'hooks' })
    const hooks = path.join(at.worktree, 'sub', 'hooks')
    mkdirSync(hooks)
    for (const hook of ['post-index-change', 'pre-commit', 'post-checkout', 'reference-transaction']) {
      writeFileSync(path.join(hooks, hook), `#!/bin/sh\ntouch ${at.marker}\n`)
      chmodSync(path.join(hooks, hook), 0o755)
    }
    review(at)
  })

  it('an external diff program configured in the submodule directory', async () => {
    const at = await withSession()
    nestedRepository(path.join(at.worktree, 'sub'), { 'diff.external': `sh -c 'touch ${at.marker}'` })
    writeFileSync(path.join(at.worktree, 'data.txt'), 'two\n')
    review(at)
  })

  it("the submodule's .git as a file pointing at a repository elsewhere", async () => {
    const at = await withSession()
    const elsewhere = path.join(testdir(), 'elsewhere')
    nestedRepository(elsewhere, { 'filter.x.clean': leaves(at.marker) })
    git(elsewhere, 'config', 'core.fsmonitor', `touch ${at.marker}; false`)
    write(path.join(at.worktree, 'sub'), { '.git': `gitdir: ${path.join(elsewhere, '.git')}\n`, '.gitattributes': '* filter=x\n', 'f.txt': 'b\n' })
    review(at)
  })

  it('leaves a repository the agent made out of the commit, and says so', async () => {
    const at = await withSession()
    nestedRepository(path.join(at.worktree, 'made'), {})
    writeFileSync(path.join(at.worktree, 'work.txt'), 'agent work\n')
    const run = (args: string[]) => omh(args, { cwd: at.root, env: at.env })
    const ls = run(['sessions', 'ls', '--json'])
    expect(ls.json().result.sessions[0].uncommitted).toBe(1)
    const diff = run(['sessions', 'diff', '--json'])
    expect(diff.json().result.leftOut).toEqual(['made'])
    const commit = run(['sessions', 'commit', '-m', 'work'])
    expect(commit.status, commit.stderr).toBe(0)
    expect(commit.stdout).toContain('left out made/: it holds a git repository of its own')
    expect(git(at.root, 'show', '--name-only', '--format=', 'omh/s01')).toBe('work.txt')
    expect(git(at.root, 'ls-tree', 'omh/s01', 'sub')).toMatch(/^160000 commit [0-9a-f]{40}\tsub$/)
  })
})
