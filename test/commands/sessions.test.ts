import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { claimSession, createSession, prepareMountpoints, repository, resolveBase, sessionPaths } from '@omh/sandbox'
import { describe, expect, it } from 'vitest'
import { carryIn } from '../../packages/sandbox/src/work/carry-in.js'
import { omh, stateOf } from '../helpers/run.js'
import { gitRepo, testdir, write } from '@omh/test-utils'

const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd, encoding: 'utf8', stdio: 'pipe' }).trim()

/** A repository with one session, as a launch leaves it: a rules file staged over /work, its mountpoint made. */
async function withSession() {
  const root = gitRepo({ 'README.md': 'hi\n' })
  const home = testdir()
  const repo = repository(root)
  const paths = await createSession(stateOf(home), repo, 's01', await resolveBase(repo, process.env), process.env)
  write(paths.run, { 'h/files/work/RULES.md': 'rules' })
  await prepareMountpoints(paths.run, [{ root: paths.worktree, host: path.join(paths.worktree, 'RULES.md'), kind: 'file' }])
  return { root, home, paths, env: { OMH_HOME: home, ...identity } }
}

describe('omh sessions', () => {
  it('ls shows commits ahead and uncommitted work, without omh files', async () => {
    const { root, paths, env } = await withSession()
    writeFileSync(path.join(paths.worktree, 'work.txt'), 'x')
    const r = omh(['sessions', 'ls', '--json'], { cwd: root, env })
    expect(r.status).toBe(0)
    expect(r.json().result.sessions).toMatchObject([{ id: 's01', branch: 'omh/s01', ahead: 0, uncommitted: 1, inUse: false, state: null }])
  })

  it('ls says unknown, never clean, when git cannot answer', async () => {
    const { root, paths, env } = await withSession()
    writeFileSync(path.join(paths.worktree, '.git'), 'gitdir: /nowhere\n')
    const r = omh(['sessions', 'ls'], { cwd: root, env })
    expect(r.stdout.split('\n')[0]).toMatch(/AHEAD +UNCOMMITTED$/)
    expect(r.stdout).toMatch(/^s01 +none +0 +unknown$/m)
  })

  it('diff shows the agent work and commit puts it on omh/<sid>, never omh files', async () => {
    const { root, paths, env } = await withSession()
    writeFileSync(path.join(paths.worktree, 'work.txt'), 'agent work\n')
    const diff = omh(['sessions', 'diff'], { cwd: root, env })
    expect(diff.stdout).toContain('+agent work')
    expect(diff.stdout).not.toContain('RULES.md')
    const commit = omh(['sessions', 'commit', 's01', '-m', 'Agent work'], { cwd: root, env })
    expect(commit.status).toBe(0)
    expect(commit.stdout).toMatch(/^committed [0-9a-f]{8} to omh\/s01 \(1 commit ahead of main\)/)
    expect(git(root, 'log', '-1', '--format=%s', 'omh/s01')).toBe('Agent work')
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01')).toBe('work.txt')
    const again = omh(['sessions', 'commit', '-m', 'again'], { cwd: root, env })
    expect(again.status).toBe(1)
    expect(again.stderr).toContain('Code: NOTHING_TO_COMMIT')
  })

  it('reviews and commits a session carrying a file git ignores, and says nothing to commit when nothing changed', async () => {
    const root = gitRepo({ 'README.md': 'hi\n', '.gitignore': '.env\n' })
    const home = testdir()
    const repo = repository(root)
    const paths = await createSession(stateOf(home), repo, 's01', await resolveBase(repo, process.env), process.env)
    write(root, { '.env': 'SECRET=1\n' })
    await carryIn(paths.worktree, paths.run, [{ path: '.env', bytes: Buffer.from('SECRET=1\n'), mode: 0o600 }])
    const env = { OMH_HOME: home, ...identity }
    const nothing = omh(['sessions', 'commit', '-m', 'nothing'], { cwd: root, env })
    expect(nothing.stderr).toContain('Code: NOTHING_TO_COMMIT')
    expect(nothing.status).toBe(1)
    expect(omh(['sessions', 'diff'], { cwd: root, env }).status).toBe(0)
    writeFileSync(path.join(paths.worktree, 'work.txt'), 'agent work\n')
    const diff = omh(['sessions', 'diff'], { cwd: root, env })
    expect(diff.status, diff.stderr).toBe(0)
    expect(diff.stdout).toContain('+agent work')
    expect(diff.stdout).not.toContain('SECRET')
    const commit = omh(['sessions', 'commit', '-m', 'Agent work'], { cwd: root, env })
    expect(commit.status, commit.stderr).toBe(0)
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01')).toBe('work.txt')
    writeFileSync(path.join(paths.worktree, 'more.txt'), 'more\n')
    const squash = omh(['sessions', 'commit', '--squash', '-m', 'More'], { cwd: root, env })
    expect(squash.status, squash.stderr).toBe(0)
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01')).toBe('more.txt')
  })

  it('rm refuses while the branch holds work that exists nowhere else, unless --force', async () => {
    const { root, home, paths, env } = await withSession()
    writeFileSync(path.join(paths.worktree, 'work.txt'), 'x')
    omh(['sessions', 'commit', '-m', 'work'], { cwd: root, env })
    const refused = omh(['sessions', 'rm', 's01'], { cwd: root, env })
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain('1 commit on omh/s01 no other branch has')
    expect(existsSync(paths.worktree)).toBe(true)
    const forced = omh(['sessions', 'rm', 's01', '--force'], { cwd: root, env })
    expect(forced.status).toBe(0)
    expect(existsSync(paths.worktree)).toBe(false)
    expect(existsSync(path.join(stateOf(home), 'shadow'))).toBe(true)
    expect(existsSync(paths.shadow)).toBe(false)
    expect(git(root, 'branch', '--list', 'omh/*')).toBe('')
  })

  it('rm removes a session whose work was merged, and its ssh config entry', async () => {
    const { root, home, paths, env } = await withSession()
    const entry = path.join(stateOf(home), 'ssh/hosts', `omh-${repository(root).id}-s01.conf`)
    write(stateOf(home), { [path.relative(stateOf(home), entry)]: 'Host x\n' })
    writeFileSync(path.join(paths.worktree, 'work.txt'), 'x')
    omh(['sessions', 'commit', '-m', 'work'], { cwd: root, env })
    git(root, 'merge', '-q', '--ff-only', 'omh/s01')
    const r = omh(['sessions', 'rm', 's01'], { cwd: root, env })
    expect(r.status).toBe(0)
    expect(existsSync(paths.worktree)).toBe(false)
    expect(existsSync(entry)).toBe(false)
  })

  it('rm names the volumes of a copied session it could not reach, so none is left unknown', async () => {
    const { root, home, paths, env } = await withSession()
    const id = repository(root).id
    const volumes = [`omh-${id}-s01-work`, `omh-${id}-s01-omh-shadow`]
    write(paths.run, { 'copied.json': JSON.stringify({ container: `omh-${id}-s01`, helper: { image: 'i', owner: { uid: 1000, gid: 1000 } }, volumes: volumes.map((volume) => ({ volume, guest: '/work' })), links: [] }) })
    // An engine that answers, keeps volumes, and has none of this session's: not the one it ran on.
    write(home, {
      'settings.toml': 'plugins = ["./elsewhere.mjs"]\nruntime = "elsewhere"\n',
      'elsewhere.mjs': `const none = async () => []
export default { kind: 'runtime', apiVersion: 1, meta: { name: 'elsewhere', version: '0' }, engine: 'elsewhere',
  async detect() { return process.env.ELSEWHERE_DOWN ? { engine: 'elsewhere', reason: 'installed, but the engine does not answer' } : { engine: 'elsewhere', version: '1' } },
  async hasImage() { return true }, async build() {}, async up() { return 'c' }, async exec() { return { exitCode: 0, stdout: '', stderr: '' } },
  async run() { return { exitCode: 0, stdout: '', stderr: '' } }, list: none, async down() {},
  volumes: { async create() { return true }, list: none, async remove() {}, async put() {}, async get() {} } }\n`,
    })
    const down = omh(['sessions', 'rm', 's01', '--force'], { cwd: root, env: { ...env, ELSEWHERE_DOWN: '1' } })
    expect(down.status).toBe(0)
    expect(down.stderr).toContain(`If a container of s01 remains, remove it with your engine (its name is omh-${id}-s01, its volumes ${volumes.join(', ')}).`)

    const again = await withSession()
    write(again.paths.run, { 'copied.json': JSON.stringify({ container: `omh-${repository(again.root).id}-s01`, helper: { image: 'i', owner: { uid: 1000, gid: 1000 } }, volumes: [{ volume: 'v1', guest: '/work' }], links: [] }) })
    for (const file of ['settings.toml', 'elsewhere.mjs']) write(again.home, { [file]: readFileSync(path.join(home, file), 'utf8') })
    const elsewhere = omh(['sessions', 'rm', 's01', '--force'], { cwd: again.root, env: again.env })
    expect(elsewhere.status).toBe(0)
    expect(elsewhere.stderr).toContain("s01's files were copied into volumes on an engine that does not share this disk, and elsewhere here has none of them: remove them on the engine the session ran on (v1).")
  })

  it('names the sessions there are when asked for another', async () => {
    const { root, env } = await withSession()
    const r = omh(['sessions', 'diff', 's07'], { cwd: root, env })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('has no session s07')
    expect(r.stderr).toContain('Its sessions: s01')
  })
})

describe('the current session', () => {
  it('is the one launched into last for launch, diff and commit alike, not the highest id', async () => {
    const { root, home, env } = await withSession()
    const repo = repository(root)
    await createSession(stateOf(home), repo, 's02', await resolveBase(repo, process.env), process.env)
    // s02 was launched into first, s01 after it: the highest id is not the current session.
    await (await claimSession(stateOf(home), repo, 's02', 'claude'))()
    await new Promise((resolve) => setTimeout(resolve, 20))
    await (await claimSession(stateOf(home), repo, 's01', 'claude'))()
    writeFileSync(path.join(sessionPaths(stateOf(home), repo, 's01').worktree, 'one.txt'), 'in s01\n')
    writeFileSync(path.join(sessionPaths(stateOf(home), repo, 's02').worktree, 'two.txt'), 'in s02\n')

    const diff = omh(['sessions', 'diff'], { cwd: root, env })
    expect(diff.stdout).toContain('+in s01')
    expect(diff.stdout).not.toContain('in s02')
    const launch = omh(['--dry-run', '--json', 'claude'], { cwd: root, env: { ...env, OMH_HOME: home } })
    expect(launch.json().result).toMatchObject({ session: 's01', create: false })
    const commit = omh(['sessions', 'commit', '-m', 'Current'], { cwd: root, env })
    expect(commit.stdout).toContain('to omh/s01')
    expect(git(root, 'log', '-1', '--format=%s', 'omh/s01')).toBe('Current')
    expect(git(root, 'log', '-1', '--format=%s', 'omh/s02')).not.toBe('Current')
  })
})
