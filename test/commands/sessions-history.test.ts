import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { createSession, prepareMountpoints, repository, resolveBase } from '@omh/sandbox'
import { describe, expect, it } from 'vitest'
import { BIN, omh, testEnv } from '../helpers/run.js'
import { gitRepo, testdir, write } from '@omh/test-utils'

const user = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, ...user } }).trim()

/** A session as a launch leaves it, and a way to run git as the agent does inside: on the sandbox repository, over the worktree. */
async function withSession() {
  const root = gitRepo({ 'README.md': 'hi\n', 'src/a.txt': 'a\n' })
  const home = testdir()
  const repo = repository(root)
  const paths = await createSession(home, repo, 's01', await resolveBase(repo, process.env), process.env)
  write(paths.run, { 'h/files/work/RULES.md': 'rules' })
  await prepareMountpoints(paths.run, [{ root: paths.worktree, host: path.join(paths.worktree, 'RULES.md'), kind: 'file' }])
  const agent = (...args: string[]) =>
    execFileSync('git', ['--git-dir', paths.shadow, '--work-tree', paths.worktree, '-c', 'commit.gpgsign=false', ...args], {
      cwd: paths.worktree,
      encoding: 'utf8',
      stdio: 'pipe',
      env: { ...process.env, GIT_AUTHOR_DATE: '1700000000 +0100' },
    }).trim()
  const file = (name: string, text: string) => {
    mkdirSync(path.dirname(path.join(paths.worktree, name)), { recursive: true })
    writeFileSync(path.join(paths.worktree, name), text)
  }
  const env = { OMH_HOME: home, OMH_STATE: home, ...user }
  const commit = (...args: string[]) => omh(['sessions', 'commit', ...args], { cwd: root, env })
  const log = () => git(root, 'log', '--format=%s|%an|%cn', 'main..omh/s01').split('\n').filter(Boolean).reverse()
  return { root, home, paths, agent, file, commit, log }
}

describe("omh sessions commit keeps the agent's commits", () => {
  it('lands each with its message, the sandbox as author and you as committer, then the rest with your message', async () => {
    const { root, paths, agent, file, commit, log } = await withSession()
    file('src/a.txt', 'a, improved\n')
    agent('add', 'src/a.txt')
    agent('commit', '-q', '-m', 'Improve a\n\nBecause it was short.')
    file('src/b.txt', 'b\n')
    agent('add', 'src/b.txt')
    agent('commit', '-q', '-m', 'Add b')
    file('notes.txt', 'left uncommitted\n')
    const r = commit('-m', 'The rest', '--json')
    expect(r.status).toBe(0)
    const result = r.json().result
    expect(result.kept.map((k: { subject: string }) => k.subject)).toEqual(['Improve a', 'Add b'])
    expect(result.rest).toBe(result.commit)
    expect(log()).toEqual(['Improve a|omh sandbox|User', 'Add b|omh sandbox|User', 'The rest|User|User'])
    expect(git(root, 'log', '-1', '--format=%B', 'omh/s01~2')).toBe('Improve a\n\nBecause it was short.')
    expect(git(root, 'log', '-1', '--format=%ad', '--date=raw', 'omh/s01~2')).toBe('1700000000 +0100')
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01')).toBe('notes.txt')
    // Nothing lost, nothing of omh's: the branch holds the worktree's files, and the worktree is clean against it.
    expect(git(root, 'show', 'omh/s01:src/b.txt')).toBe('b')
    expect(git(root, 'ls-tree', '-r', '--name-only', 'omh/s01')).not.toContain('RULES.md')
    expect(git(paths.worktree, 'status', '--porcelain', '--', '.', ':!RULES.md')).toBe('')
    // Again: only what came since.
    file('src/c.txt', 'c\n')
    agent('add', '-A')
    agent('commit', '-q', '-m', 'Add c')
    const again = commit('-m', 'unused')
    expect(again.status).toBe(0)
    expect(again.stdout).toContain('Add c')
    expect(again.stdout).toContain('nothing left uncommitted')
    expect(log()).toEqual(['Improve a|omh sandbox|User', 'Add b|omh sandbox|User', 'The rest|User|User', 'Add c|omh sandbox|User'])
    const nothing = commit('-m', 'x')
    expect(nothing.status).toBe(1)
    expect(nothing.stderr).toContain('Code: NOTHING_TO_COMMIT')
    // Every object the branch reaches is in your repository: the sandbox's can go.
    rmSync(paths.shadow, { recursive: true, force: true })
    expect(git(root, 'fsck', '--connectivity-only', '--no-dangling')).toBe('')
    expect(git(root, 'show', 'omh/s01~1:src/b.txt')).toBe('b')
  })

  it('leaves out empty commits, lands a merge as one commit, and carries history the agent rewrote', async () => {
    const { root, paths, agent, file, commit, log } = await withSession()
    agent('commit', '-q', '--allow-empty', '-m', 'Nothing at all')
    agent('switch', '-q', '-c', 'side')
    file('side.txt', 'side\n')
    agent('add', 'side.txt')
    agent('commit', '-q', '-m', 'Side work')
    agent('switch', '-q', 'sandbox')
    file('main.txt', 'main\n')
    agent('add', 'main.txt')
    agent('commit', '-q', '-m', 'Main work')
    agent('merge', '-q', '--no-ff', '-m', 'Merge side', 'side')
    const r = commit('-m', 'rest', '--json')
    expect(r.status).toBe(0)
    expect(r.json().result.skipped.map((k: { subject: string }) => k.subject)).toEqual(['Nothing at all'])
    expect(log()).toEqual(['Main work|omh sandbox|User', 'Merge side|omh sandbox|User'])
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01')).toBe('side.txt')
    expect(git(root, 'rev-list', '--min-parents=2', '--count', 'omh/s01')).toBe('0')
    // The agent rewrites what was already taken: the new commit lands, the old ones stay.
    file('main.txt', 'main, amended\n')
    agent('add', 'main.txt')
    agent('commit', '-q', '--amend', '-m', 'Merge side, amended')
    const again = commit('-m', 'rest')
    expect(again.status).toBe(0)
    expect(log().at(-1)).toBe('Merge side, amended|omh sandbox|User')
    expect(git(root, 'show', 'omh/s01:main.txt')).toBe('main, amended')
    expect(git(paths.worktree, 'status', '--porcelain', '--', '.', ':!RULES.md')).toBe('')
  })

  it("refuses a sandbox repository that borrows objects from elsewhere, moving nothing; --squash takes the files", async () => {
    const { root, paths, agent, file, commit } = await withSession()
    file('x.txt', 'x\n')
    agent('add', 'x.txt')
    agent('commit', '-q', '-m', 'Add x')
    const before = git(root, 'rev-parse', 'omh/s01')
    writeFileSync(path.join(paths.shadow, 'objects/info/alternates'), `${path.join(root, '.git/objects')}\n`)
    const r = commit('-m', 'rest')
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('Code: SANDBOX_HISTORY_REFUSED')
    expect(r.stderr).toContain('alternates')
    expect(git(root, 'rev-parse', 'omh/s01')).toBe(before)
    const squashed = commit('-m', 'Just the files', '--squash')
    expect(squashed.status).toBe(0)
    expect(git(root, 'log', '--format=%s', 'main..omh/s01')).toBe('Just the files')
    expect(git(root, 'show', 'omh/s01:x.txt')).toBe('x')
  })

  it("refuses a link in the sandbox's object store and a path no repository may hold", async () => {
    const { root, paths, agent, file, commit } = await withSession()
    file('y.txt', 'y\n')
    agent('add', 'y.txt')
    agent('commit', '-q', '-m', 'Add y')
    symlinkSync(path.join(root, '.git/objects/pack'), path.join(paths.shadow, 'objects/elsewhere'))
    const r = commit('-m', 'rest')
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('is a link')
    expect(git(root, 'rev-list', '--count', 'main..omh/s01')).toBe('0')
  })

  it("never carries omh's mounted files, even committed by the agent", async () => {
    const { root, agent, file, commit, log } = await withSession()
    file('z.txt', 'z\n')
    agent('add', '-f', 'z.txt', 'RULES.md')
    agent('commit', '-q', '-m', 'Add z and the rules')
    expect(commit('-m', 'rest').status).toBe(0)
    expect(log()).toEqual(['Add z and the rules|omh sandbox|User'])
    expect(git(root, 'ls-tree', '-r', '--name-only', 'omh/s01')).not.toContain('RULES.md')
  })
})

describe('omh sessions ls', () => {
  it('names the files two sessions have both changed, committed or not, and the other session', async () => {
    const root = gitRepo({ 'README.md': 'hi\n', 'src/a.txt': 'a\n', 'src/b.txt': 'b\n' })
    const home = testdir()
    const repo = repository(root)
    const base = await resolveBase(repo, process.env)
    const one = await createSession(home, repo, 's01', base, process.env)
    const two = await createSession(home, repo, 's02', base, process.env)
    const three = await createSession(home, repo, 's03', base, process.env)
    const env = { OMH_HOME: home, OMH_STATE: home, ...user }
    writeFileSync(path.join(one.worktree, 'src/a.txt'), 'one\n')
    expect(omh(['sessions', 'commit', 's01', '-m', 'one'], { cwd: root, env }).status).toBe(0)
    writeFileSync(path.join(one.worktree, 'src/b.txt'), 'one\n')
    writeFileSync(path.join(two.worktree, 'src/a.txt'), 'two\n')
    writeFileSync(path.join(two.worktree, 'src/b.txt'), 'two\n')
    writeFileSync(path.join(three.worktree, 'new.txt'), 'three\n')
    const r = omh(['sessions', 'ls', '--json'], { cwd: root, env })
    expect(r.status).toBe(0)
    const rows = r.json().result.sessions
    expect(rows[0].shared).toEqual([{ path: 'src/a.txt', with: ['s02'] }, { path: 'src/b.txt', with: ['s02'] }])
    expect(rows[1].shared).toEqual([{ path: 'src/a.txt', with: ['s01'] }, { path: 'src/b.txt', with: ['s01'] }])
    expect(rows[2].shared).toEqual([])
    const human = omh(['sessions', 'ls'], { cwd: root, env })
    expect(human.stdout).toContain('s01 and s02 both changed 2 files: src/a.txt, src/b.txt')
    expect(human.stdout).not.toContain('s03 and')
  })
})

describe('omh sessions commit takes part of the work', () => {
  it('takes only the paths after --, from the agent commits and the rest alike; the others stay for a later commit', async () => {
    const { root, agent, file, commit, log } = await withSession()
    file('src/a.txt', 'a, improved\n')
    file('docs/notes.md', 'notes\n')
    agent('add', '-A')
    agent('commit', '-q', '-m', 'Improve a, take notes')
    file('src/b.txt', 'b\n')
    file('scratch.txt', 'scratch\n')
    const r = commit('-m', 'Source only', '--json', '--', 'src')
    expect(r.status, r.stderr).toBe(0)
    expect(log()).toEqual(['Improve a, take notes|omh sandbox|User', 'Source only|User|User'])
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01~1')).toBe('src/a.txt')
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01')).toBe('src/b.txt')
    // The rest lands with the next commit.
    const rest = commit('-m', 'The rest', '--json')
    expect(rest.status, rest.stderr).toBe(0)
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01').split('\n').sort()).toEqual(['docs/notes.md', 'scratch.txt'])
  })

  it('leaves out what --exclude names, a directory with all under it', async () => {
    const { root, file, commit } = await withSession()
    file('src/a.txt', 'changed\n')
    file('fixtures/big/one.db', '1\n')
    file('fixtures/big/two.db', '2\n')
    const r = commit('-m', 'No fixtures', '--exclude', 'fixtures')
    expect(r.status, r.stderr).toBe(0)
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01')).toBe('src/a.txt')
    const outside = commit('-m', 'x', '--', '../elsewhere')
    expect(outside.status).toBe(2)
    expect(outside.stderr).toContain('is not a path inside')
  })
})

describe('one bound for what a session brings in', () => {
  it('refuses an uncommitted file over it, naming it, and shows it in the diff as binary rather than fail', async () => {
    const { root, home, paths, file, commit } = await withSession()
    file('src/a.txt', 'changed\n')
    file('big.log', '')
    truncateSync(path.join(paths.worktree, 'big.log'), 100 * 1024 * 1024 + 1)
    const refused = commit('-m', 'All of it')
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain(`big.log in s01 holds ${100 * 1024 * 1024 + 1} bytes, more than the ${100 * 1024 * 1024} a session may bring into your repository`)
    expect(refused.stderr).toContain('Code: SESSION_FILE_TOO_LARGE')
    expect(git(root, 'rev-parse', 'omh/s01')).toBe(git(root, 'rev-parse', 'main'))
    const diff = omh(['sessions', 'diff', '--stat'], { cwd: root, env: { OMH_HOME: home, OMH_STATE: home } })
    expect(diff.status, diff.stderr).toBe(0)
    expect(diff.stdout).toMatch(/big\.log\s+\|\s+Bin 0 -> 104857601 bytes/)
    const kept = commit('-m', 'All but the log', '--exclude', 'big.log')
    expect(kept.status, kept.stderr).toBe(0)
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01')).toBe('src/a.txt')
  })
})

describe('omh sessions diff on a terminal', () => {
  it("shows the control characters of the agent's bytes escaped, so a file cannot act on the reviewer's terminal", async () => {
    const { root, home, file } = await withSession()
    file('evil.txt', 'ok\u001b]52;c;cHduZWQ=\u0007\u001b[2K\n')
    // A real terminal: `script` runs omh on a pseudo-terminal and passes its output through.
    const line = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} sessions diff`
    const env = testEnv({ OMH_HOME: home, OMH_STATE: home, ...user }) as NodeJS.ProcessEnv
    const shown = spawnSync('script', ['-qec', line, '/dev/null'], { cwd: root, env, encoding: 'utf8' })
    expect(shown.status, shown.stderr).toBe(0)
    expect(shown.stdout).toContain('ok\\x1b]52;c;cHduZWQ=\\x07\\x1b[2K')
    expect(shown.stdout).not.toContain('\u001b]52')
  })
})

describe('omh sessions commit -m', () => {
  it('refuses an empty or blank message, exit 2, committing nothing', async () => {
    const { root, file, commit } = await withSession()
    file('src/a.txt', 'changed\n')
    for (const message of ['', '  \n ']) {
      const r = commit('-m', message)
      expect(r.status).toBe(2)
      expect(r.stderr).toContain('Code: USAGE')
    }
    expect(git(root, 'rev-parse', 'omh/s01')).toBe(git(root, 'rev-parse', 'main'))
  })
})
