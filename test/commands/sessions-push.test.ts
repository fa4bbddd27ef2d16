import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { createSession, repository, resolveBase } from '@omh/sandbox'
import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

const user = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, ...user } }).trim()

async function withCommittedSession() {
  const root = gitRepo({ 'README.md': 'hi\n' })
  const home = testdir()
  const repo = repository(root)
  const paths = await createSession(home, repo, 's01', await resolveBase(repo, process.env), process.env)
  writeFileSync(path.join(paths.worktree, 'work.txt'), 'work\n')
  const env = { OMH_HOME: home, OMH_STATE: home, ...user }
  expect(omh(['sessions', 'commit', '-m', 'Work'], { cwd: root, env }).status).toBe(0)
  const bare = path.join(testdir(), 'remote.git')
  git(root, 'init', '-q', '--bare', bare)
  return { root, env, bare, push: (...args: string[]) => omh(['sessions', 'push', ...args], { cwd: root, env }) }
}

describe('omh sessions push', () => {
  it("pushes omh/<sid> to the only remote, and prints the forge's compare page", async () => {
    const { root, bare, push } = await withCommittedSession()
    git(root, 'remote', 'add', 'origin', 'git@github.com:me/app.git')
    git(root, 'config', 'remote.origin.pushurl', bare)
    const r = push('--json')
    expect(r.status).toBe(0)
    expect(r.json().result).toMatchObject({ session: 's01', branch: 'omh/s01', remote: 'origin', compare: 'https://github.com/me/app/compare/main...omh/s01?expand=1' })
    expect(git(bare, 'rev-parse', 'refs/heads/omh/s01')).toBe(git(root, 'rev-parse', 'omh/s01'))
  })

  it('pushes to the remote named, without a compare page for a plain path', async () => {
    const { root, bare, push } = await withCommittedSession()
    git(root, 'remote', 'add', 'first', '/nowhere/at/all.git')
    git(root, 'remote', 'add', 'backup', bare)
    const r = push('s01', '--remote', 'backup')
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^pushed omh\/s01 \([0-9a-f]{8}\) to backup\n$/)
    expect(git(bare, 'log', '-1', '--format=%s', 'omh/s01')).toBe('Work')
  })

  it('refuses, exit 2, a remote the repository does not have, or a choice it cannot make', async () => {
    const { root, bare, push } = await withCommittedSession()
    const none = push()
    expect(none.status).toBe(2)
    expect(none.stderr).toContain('Code: REMOTE_UNKNOWN')
    git(root, 'remote', 'add', 'a', bare)
    git(root, 'remote', 'add', 'b', bare)
    const two = push()
    expect(two.status).toBe(2)
    expect(two.stderr).toContain('several remotes (a, b)')
    const wrong = push('--remote', 'c')
    expect(wrong.status).toBe(2)
    expect(wrong.stderr).toContain('no remote named "c"')
  })

  it('fails, exit 1, when the remote refuses the push', async () => {
    const { root, push } = await withCommittedSession()
    git(root, 'remote', 'add', 'origin', '/nowhere/at/all.git')
    const r = push()
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('Code: GIT_FAILED')
  })
})
