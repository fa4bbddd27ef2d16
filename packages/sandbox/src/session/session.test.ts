import { failure } from '@omh/test-utils'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { gitRepo, testdir } from '@omh/test-utils'
import { hostEntry, sshAlias, sshPaths, writeHostEntry } from '../ssh.js'
import { createSession, removeSession } from './create.js'
import { sessionPaths } from '../host/layout.js'
import { clearMountpoints, prepareMountpoints } from './mountpoints.js'
import { credentialMounts, harnessArgv, planSession, type SessionPlanInput } from './plan.js'
import { repository, resolveBase } from '../host/repo.js'
import { decideReuse } from './reuse.js'
import { createShadow, hideMounts } from './shadow.js'
import { nextSessionId } from './store.js'
import { commitSession, sessionDiff, unsavedWork, workState } from '../work/work.js'

const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'User',
  GIT_AUTHOR_EMAIL: 'user@example.com',
  GIT_COMMITTER_NAME: 'User',
  GIT_COMMITTER_EMAIL: 'user@example.com',
}
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd, env, encoding: 'utf8', stdio: 'pipe' }).trim()

describe('repository identity', () => {
  it('gives two clones with one name two ids', () => {
    const a = testdir()
    const b = testdir()
    mkdirSync(path.join(a, 'api'))
    mkdirSync(path.join(b, 'api'))
    const [one, two] = [repository(path.join(a, 'api')), repository(path.join(b, 'api'))]
    expect(one.id).toMatch(/^api-[0-9a-f]{8}$/)
    expect(two.id).toMatch(/^api-[0-9a-f]{8}$/)
    expect(one.id).not.toBe(two.id)
  })

  it('keeps ids safe in a path and a container name', () => {
    const dir = testdir()
    mkdirSync(path.join(dir, 'My Project!'))
    expect(repository(path.join(dir, 'My Project!')).id).toMatch(/^my-project-[0-9a-f]{8}$/)
  })
})

describe('the base a session starts from', () => {
  it('is the default branch resolved to a commit, whatever HEAD is on', async () => {
    const root = gitRepo()
    const main = git(root, 'rev-parse', 'main')
    git(root, 'switch', '-q', '-c', 'feature')
    git(root, 'commit', '-q', '--allow-empty', '-m', 'feature work')
    expect(await resolveBase(repository(root), env)).toEqual({ name: 'main', commit: main })
  })

  it('follows origin/HEAD when the repository has one', async () => {
    const origin = gitRepo()
    git(origin, 'branch', '-m', 'trunk')
    const clone = testdir()
    git(clone, 'clone', '-q', origin, 'c')
    const root = path.join(clone, 'c')
    expect((await resolveBase(repository(root), env)).name).toBe('trunk')
  })

  it('refuses a repository without commits, saying what to do', async () => {
    const root = testdir()
    git(root, 'init', '-q', '-b', 'main')
    const error = await failure(() => resolveBase(repository(root), env))
    expect(error.code).toBe('REPOSITORY_EMPTY')
    expect(error.exit).toBe(2)
    expect(error.hint).toContain('git commit')
  })

  it('refuses a detached HEAD when no default branch can be found', async () => {
    const root = gitRepo()
    git(root, 'branch', '-m', 'trunk')
    git(root, 'checkout', '-q', '--detach')
    const error = await failure(() => resolveBase(repository(root), env))
    expect(error.code).toBe('BASE_UNKNOWN')
    expect(error.message).toContain('HEAD is detached at')
    expect(error.hint).toContain('git switch')
  })

  it('starts from main even when HEAD is detached', async () => {
    const root = gitRepo()
    git(root, 'checkout', '-q', '--detach')
    expect((await resolveBase(repository(root), env)).name).toBe('main')
  })
})

describe('creating a session', () => {
  it('makes a worktree outside the repository on omh/<sid>, and a shadow with one commit of its own', async () => {
    const root = gitRepo({ 'README.md': 'hi\n', 'src/a.txt': 'a\n' })
    git(root, 'commit', '-q', '--allow-empty', '-m', 'second')
    const home = testdir()
    const repo = repository(root)
    const base = await resolveBase(repo, env)
    const paths = await createSession(home, repo, 's01', base, env)
    expect(paths.worktree.startsWith(path.join(home, 'worktrees', repo.id))).toBe(true)
    expect(git(paths.worktree, 'symbolic-ref', 'HEAD')).toBe('refs/heads/omh/s01')
    expect(git(paths.worktree, 'rev-parse', 'HEAD')).toBe(base.commit)
    expect(readFileSync(path.join(paths.worktree, 'src/a.txt'), 'utf8')).toBe('a\n')

    const shadow = (...args: string[]) => git(paths.worktree, `--git-dir=${paths.shadow}`, `--work-tree=${paths.worktree}`, ...args)
    expect(shadow('rev-list', '--all').split('\n')).toHaveLength(1)
    expect(shadow('log', '-1', '--format=%an <%ae>|%P')).toBe('omh sandbox <sandbox@omh.invalid>|')
    expect(shadow('for-each-ref', '--format=%(refname)')).toBe('refs/heads/sandbox')
    expect(shadow('ls-files').split('\n').sort()).toEqual(['README.md', 'src/a.txt'])
    expect(shadow('status', '--porcelain')).toBe('')
    const config = (key: string) => git(paths.worktree, 'config', '--file', path.join(paths.shadow, 'config'), '--get-all', key)
    expect([config('core.bare'), config('user.name'), config('user.email')]).toEqual(['false', 'omh sandbox', 'sandbox@omh.invalid'])
    expect(() => config('core.worktree')).toThrow()
  })

  it('makes the worktree where one was registered and since deleted by hand', async () => {
    const root = gitRepo()
    const home = testdir()
    const repo = repository(root)
    const base = await resolveBase(repo, env)
    const stale = sessionPaths(home, repo, 's01').worktree
    git(root, 'worktree', 'add', '-q', '-b', 'elsewhere', stale)
    rmSync(stale, { recursive: true, force: true })
    const paths = await createSession(home, repo, 's01', base, env)
    expect(git(paths.worktree, 'symbolic-ref', 'HEAD')).toBe('refs/heads/omh/s01')
  })

  it('refuses a branch that exists, and leaves it as it was', async () => {
    const root = gitRepo()
    git(root, 'commit', '-q', '--allow-empty', '-m', 'mine')
    git(root, 'branch', 'omh/s01')
    const mine = git(root, 'rev-parse', 'omh/s01')
    const home = testdir()
    const repo = repository(root)
    const base = await resolveBase(repo, env)
    await expect(createSession(home, repo, 's01', { ...base, commit: git(root, 'rev-parse', 'HEAD~1') }, env)).rejects.toThrow(/already exists/)
    expect(git(root, 'rev-parse', 'omh/s01')).toBe(mine)
  })

  it('leaves nothing behind when a step fails, so the retry succeeds', async () => {
    const root = gitRepo()
    const home = testdir()
    const repo = repository(root)
    const base = await resolveBase(repo, env)
    // A file where the shadow's directory must go makes the shadow step fail.
    mkdirSync(path.join(home, 'shadow'), { recursive: true })
    writeFileSync(path.join(home, 'shadow', repo.id), 'in the way')
    await expect(createSession(home, repo, 's01', base, env)).rejects.toThrow()
    expect(existsSync(sessionPaths(home, repo, 's01').worktree)).toBe(false)
    expect(git(root, 'branch', '--list', 'omh/*')).toBe('')
    expect(git(root, 'worktree', 'list').split('\n')).toHaveLength(1)

    execFileSync('rm', [path.join(home, 'shadow', repo.id)])
    const paths = await createSession(home, repo, 's01', base, env)
    expect(git(paths.worktree, 'symbolic-ref', 'HEAD')).toBe('refs/heads/omh/s01')
  })

  it('reports a checkout that fails, and leaves no sandbox repository made meanwhile', async () => {
    const root = gitRepo()
    const home = testdir()
    const repo = repository(root)
    const error = await createSession(home, repo, 's01', { name: 'main', commit: 'f'.repeat(40) }, env).catch((e: unknown) => e as Error)
    expect(String(error)).toMatch(/worktree add/)
    const shadows = path.join(home, 'shadow', repo.id)
    expect(existsSync(shadows) ? readdirSync(shadows) : []).toEqual([])
    expect(git(root, 'branch', '--list', 'omh/*')).toBe('')
  })

  it('makes the sandbox repository while the worktree is filled, and commits what it holds once it is', async () => {
    const work = testdir({ 'a.txt': 'a\n' })
    const shadow = path.join(testdir(), 's01.git')
    let fill!: () => void
    const filled = new Promise<void>((resolve) => (fill = resolve))
    const making = createShadow(shadow, work, [], env, filled)
    // The git directory is being built beside its place; the files are not read yet.
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(existsSync(shadow)).toBe(false)
    writeFileSync(path.join(work, 'b.txt'), 'b\n')
    fill()
    await making
    const files = git(work, `--git-dir=${shadow}`, `--work-tree=${work}`, 'ls-files').split('\n').sort()
    expect(files).toEqual(['a.txt', 'b.txt'])
  })

  it("keeps omh's mounts out of the agent's git status: a tracked file mounted over, and an untracked mountpoint", async () => {
    const work = testdir({ 'AGENTS.md': 'the project\'s own\n', 'a.txt': 'a\n' })
    const shadow = path.join(testdir(), 's01.git')
    await createShadow(shadow, work, [], env)
    // What a launch mounts: the composed rules over the tracked AGENTS.md, and an empty mountpoint for CLAUDE.md.
    writeFileSync(path.join(work, 'AGENTS.md'), 'the composed rules\n')
    writeFileSync(path.join(work, 'CLAUDE.md'), '')
    await hideMounts(shadow, work, ['AGENTS.md', 'CLAUDE.md'], env)
    expect(git(work, `--git-dir=${shadow}`, `--work-tree=${work}`, 'status', '--porcelain')).toBe('')
    // The agent's own change still shows.
    writeFileSync(path.join(work, 'a.txt'), 'changed\n')
    expect(git(work, `--git-dir=${shadow}`, `--work-tree=${work}`, 'status', '--porcelain')).toBe('M a.txt')
  })

  it('leaves no sandbox repository when the worktree is never filled', async () => {
    const work = testdir({ 'a.txt': 'a\n' })
    const parent = testdir()
    await expect(createShadow(path.join(parent, 's01.git'), work, [], env, Promise.reject(new Error('no checkout')))).rejects.toThrow('no checkout')
    expect(readdirSync(parent)).toEqual([])
  })

  it('fails, leaving nothing behind, when the run directory of the session cannot be made', async () => {
    const root = gitRepo()
    const home = testdir()
    const repo = repository(root)
    const base = await resolveBase(repo, env)
    mkdirSync(path.join(home, 'run'), { recursive: true })
    writeFileSync(path.join(home, 'run', repo.id), 'in the way')
    await expect(createSession(home, repo, 's01', base, env)).rejects.toThrow()
    expect(existsSync(sessionPaths(home, repo, 's01').worktree)).toBe(false)
    expect(git(root, 'branch', '--list', 'omh/*')).toBe('')
  })

  it('takes the ssh config entry `omh attach` wrote with it when removed, and no other session\'s', async () => {
    const root = gitRepo()
    const home = testdir()
    const repo = repository(root)
    const base = await resolveBase(repo, env)
    await createSession(home, repo, 's01', base, env)
    const paths = sshPaths(home, repo.id)
    const entries = await Promise.all(['s01', 's02'].map((sid) => writeHostEntry(paths, sshAlias(repo.id, sid), hostEntry(sshAlias(repo.id, sid), 2, paths.key))))
    await removeSession(home, repo, 's01', env, { deleteBranch: true })
    expect(entries.map((file) => existsSync(file))).toEqual([false, true])
  })

  it('never reuses an id whose branch a removed session left', async () => {
    const root = gitRepo()
    const home = testdir()
    const repo = repository(root)
    git(root, 'branch', 'omh/s01')
    expect(await nextSessionId(home, repo, env)).toBe('s02')
  })
})

describe('the session plan', () => {
  const repo = { root: '/r/api', id: 'api-12345678' }
  const input = (over: Partial<SessionPlanInput> = {}): SessionPlanInput => ({
    repo,
    session: 's01',
    harness: 'h',
    image: 'omh/h:abc',
    worktree: '/home/u/.omh/worktrees/api-12345678/s01',
    shadow: '/home/u/.omh/shadow/api-12345678/s01.git',
    staged: [
      { host: '/stage/files/work/RULES.md', guest: '/work/RULES.md', readOnly: true, kind: 'file' },
      { host: '/stage/files/work/.git', guest: '/work/.git', readOnly: true, kind: 'file' },
      { host: '/stage/trees/home/agent/.h/skills', guest: '/home/agent/.h/skills', readOnly: true, kind: 'directory' },
    ],
    credentials: credentialMounts(['/home/agent/.h/'], '/home/u/.omh/creds/h/default'),
    env: {},
    contents: { '/work/RULES.md': 'r1', '/work/.git': 'g' },
    agent: { uid: 1000, gid: 1000 },
    ...over,
  })

  it('writes only the worktree, the shadow and credentials, as the agent without privileges', () => {
    const { spec } = planSession(input())
    expect(spec.mounts.filter((m) => !m.readOnly).map((m) => m.guest)).toEqual(['/work', '/omh/shadow', '/home/agent/.h'])
    expect(spec.mounts.find((m) => m.guest === '/work')!.host).toBe(input().worktree)
    expect(spec.mounts.find((m) => m.guest === '/home/agent/.h')!.host).toBe('/home/u/.omh/creds/h/default/.h')
    expect(spec).toMatchObject({ user: '1000:1000', capDrop: ['ALL'], noNewPrivileges: true, init: true, workdir: '/work' })
    expect(spec.labels).toMatchObject({ 'omh.repo': repo.id, 'omh.session': 's01', 'omh.harness': 'h' })
    expect(spec.mounts.some((m) => m.host === repo.root)).toBe(false)
  })

  it("runs as the agent the host user is, and names that user so the engine shows the user's files as the agent's", () => {
    const { spec, digest } = planSession(input({ agent: { uid: 1100, gid: 1200, hostUser: { uid: 1100, gid: 1200 } } }))
    expect(spec).toMatchObject({ user: '1100:1200', hostUser: { uid: 1100, gid: 1200 } })
    expect(digest).not.toBe(planSession(input()).digest)
    expect(planSession(input()).spec).not.toHaveProperty('hostUser')
  })

  it('mounts parents before what lies inside them', () => {
    const guests = planSession(input()).spec.mounts.map((m) => m.guest)
    expect(guests.indexOf('/work')).toBeLessThan(guests.indexOf('/work/RULES.md'))
    expect(guests.indexOf('/home/agent/.h')).toBeLessThan(guests.indexOf('/home/agent/.h/skills'))
  })

  it('names the mountpoints the engine would otherwise create as root', () => {
    const plan = planSession(input())
    expect(plan.mountpoints).toEqual([
      { root: input().worktree, host: path.join(input().worktree, 'RULES.md'), kind: 'file' },
      { root: input().worktree, host: path.join(input().worktree, '.git'), kind: 'file' },
      { root: '/home/u/.omh/creds/h/default/.h', host: '/home/u/.omh/creds/h/default/.h/skills', kind: 'directory' },
    ])
    expect(plan.worktreeTargets).toEqual(['.git', 'RULES.md'])
  })

  it('keeps the digest of an unchanged plan from one release to the next, so upgrading omh restarts no container', () => {
    const staged = [...input().staged, { host: '/stage/files/work/Zeta.md', guest: '/work/Zeta.md', readOnly: true, kind: 'file' as const }]
    expect(planSession(input({ staged })).digest).toBe('df85be50de85862a')
  })

  it('has a digest that is stable, and changes with what the container sees', () => {
    expect(planSession(input()).digest).toBe(planSession(input()).digest)
    expect(planSession(input({ image: 'omh/h:def' })).digest).not.toBe(planSession(input()).digest)
    expect(planSession(input({ env: { TOKEN: 'x' } })).digest).not.toBe(planSession(input()).digest)
    expect(planSession(input({ contents: { '/work/RULES.md': 'r2', '/work/.git': 'g' } })).digest).not.toBe(planSession(input()).digest)
    expect(planSession(input({ harness: 'other' })).digest).toBe(planSession(input()).digest)
  })

  it('publishes ports on 127.0.0.1 and joins a network only when asked, both in the digest', () => {
    expect(planSession(input()).spec).not.toHaveProperty('ports')
    expect(planSession(input()).spec).not.toHaveProperty('network')
    const attached = planSession(input({ ports: [{ host: 24022, guest: 2222 }], network: 'omh-net' }))
    expect(attached.spec).toMatchObject({ ports: [{ host: 24022, guest: 2222 }], network: 'omh-net' })
    expect(attached.digest).not.toBe(planSession(input()).digest)
  })

  it('leaves the host port of a published port out of the digest: the engine picks it anew for each container', () => {
    const picked = planSession(input({ ports: [{ guest: 2222 }] }))
    expect(picked.spec.ports).toEqual([{ guest: 2222 }])
    expect(planSession(input({ ports: [{ host: 24022, guest: 2222 }] })).digest).toBe(picked.digest)
    expect(planSession(input({ ports: [{ guest: 2223 }] })).digest).not.toBe(picked.digest)
  })

  it('refuses two mounts at one guest path', () => {
    const staged = [...input().staged, { host: '/elsewhere', guest: '/work/RULES.md', readOnly: true, kind: 'file' as const }]
    expect(() => planSession(input({ staged }))).toThrow(/two mounts target \/work\/RULES.md/)
  })
})

describe("the harness's command line", () => {
  const claude = { name: 'claude', bin: 'claude', args: ['--allowedTools=Grep(./**),Glob(./**)'] }

  it("puts the adapter's arguments after the executable and before the user's, each one word", () => {
    expect(harnessArgv(claude, ['mcp', 'list'], 'pipe')).toEqual(['claude', '--allowedTools=Grep(./**),Glob(./**)', 'mcp', 'list'])
    expect(harnessArgv({ ...claude, args: [] }, ['--version'], 'pipe')).toEqual(['claude', '--version'])
  })

  it('keeps that order under the supervisor a terminal gets, which names the session by the harness', () => {
    for (const mode of ['terminal', 'detached'] as const) {
      const argv = harnessArgv(claude, ['--allowedTools=Bash(git:*)', 'fix it'], mode)
      expect(argv.slice(0, 2)).toEqual(['sh', '-c'])
      expect(argv.slice(3, 5)).toEqual(['omh-launch', mode])
      expect(argv.slice(5, 6)).toEqual(['claude'])
      expect(argv.slice(8)).toEqual(['claude', '--allowedTools=Grep(./**),Glob(./**)', '--allowedTools=Bash(git:*)', 'fix it'])
    }
  })
})

describe('mountpoints', () => {
  it('are created as the user, recorded, and removed once the container is gone', async () => {
    const dir = testdir({ 'work/kept.md': 'mine' })
    const run = path.join(dir, 'run')
    await prepareMountpoints(run, [
      { root: path.join(dir, 'work'), host: path.join(dir, 'work/RULES.md'), kind: 'file' },
      { root: path.join(dir, 'work'), host: path.join(dir, 'work/.h/rules/x.md'), kind: 'file' },
      { root: path.join(dir, 'work'), host: path.join(dir, 'work/kept.md'), kind: 'file' },
    ])
    expect(existsSync(path.join(dir, 'work/.h/rules/x.md'))).toBe(true)
    await clearMountpoints(run)
    expect(existsSync(path.join(dir, 'work/RULES.md'))).toBe(false)
    expect(existsSync(path.join(dir, 'work/.h'))).toBe(false)
    expect(readFileSync(path.join(dir, 'work/kept.md'), 'utf8')).toBe('mine')
  })

  it('keep a placeholder that gained content', async () => {
    const dir = testdir({ work: '' })
    const run = path.join(dir, 'run')
    mkdirSync(path.join(dir, 'w'))
    await prepareMountpoints(run, [{ root: path.join(dir, 'w'), host: path.join(dir, 'w/a.md'), kind: 'file' }])
    writeFileSync(path.join(dir, 'w/a.md'), 'real')
    await clearMountpoints(run)
    expect(readFileSync(path.join(dir, 'w/a.md'), 'utf8')).toBe('real')
  })
})

describe('reusing a container', () => {
  const container = (running: boolean, plan?: string, harness = 'h') => ({
    id: 'c',
    name: 'c',
    running,
    image: 'i',
    labels: { ...(plan ? { 'omh.plan': plan } : {}), 'omh.harness': harness },
  })
  const none = async () => []
  it('starts one when there is none', async () => {
    expect((await decideReuse([], 'd', 'h', none)).action).toBe('up')
  })
  it('attaches to a running container with the same plan without asking what runs', async () => {
    const ask = async () => {
      throw new Error('not asked')
    }
    expect((await decideReuse([container(true, 'd')], 'd', 'h', ask)).action).toBe('attach')
  })
  it('restarts a container whose plan changed when nothing runs in it', async () => {
    const d = await decideReuse([container(true, 'old', 'other')], 'd', 'h', none)
    expect(d).toMatchObject({ action: 'restart', why: 'it was set up for other' })
  })
  it('never restarts over a running harness', async () => {
    const d = await decideReuse([container(true, 'old')], 'd', 'h', async () => ['h --flag'])
    expect(d).toMatchObject({ action: 'busy', processes: ['h --flag'] })
  })
  it('restarts a stopped container', async () => {
    expect((await decideReuse([container(false, 'd')], 'd', 'h', none)).action).toBe('restart')
  })
  it('never restarts a running container that cannot say what runs in it: a loaded engine may only be slow', async () => {
    const d = await decideReuse([container(true, 'old')], 'd', 'h', async () => undefined)
    expect(d).toMatchObject({ action: 'busy', processes: [] })
  })
})

describe('the work of a session', () => {
  async function session() {
    const root = gitRepo({ 'README.md': 'hi\n' })
    const home = testdir()
    const repo = repository(root)
    const base = await resolveBase(repo, env)
    const paths = await createSession(home, repo, 's01', base, env)
    // What a launch stages over /work, and the mountpoint it made for it.
    mkdirSync(path.join(paths.run, 'h/files/work'), { recursive: true })
    writeFileSync(path.join(paths.run, 'h/files/work/RULES.md'), 'rules')
    await prepareMountpoints(paths.run, [{ root: paths.worktree, host: path.join(paths.worktree, 'RULES.md'), kind: 'file' }])
    return { root, home, repo, base, paths }
  }

  it('counts uncommitted files and commits ahead, leaving omh files out', async () => {
    const { home, repo, base, paths } = await session()
    expect(await workState(home, repo, 's01', base.commit, env)).toEqual({ on: 'omh/s01', ahead: 0, uncommitted: 0 })
    writeFileSync(path.join(paths.worktree, 'new.txt'), 'x')
    expect(await workState(home, repo, 's01', base.commit, env)).toMatchObject({ uncommitted: 1 })
  })

  it('says unknown, never clean, when git cannot answer', async () => {
    const { home, repo, base, paths } = await session()
    writeFileSync(path.join(paths.worktree, '.git'), 'gitdir: /nowhere\n')
    expect(await workState(home, repo, 's01', base.commit, env)).toMatchObject({ on: 'unknown', uncommitted: 'unknown' })
  })

  it('commits the agent work to omh/<sid>, never omh files, with the user message', async () => {
    const { root, home, repo, paths } = await session()
    writeFileSync(path.join(paths.worktree, 'new.txt'), 'x')
    await commitSession(home, repo, 's01', 'Add new.txt', env)
    expect(git(root, 'log', '-1', '--format=%s|%an', 'omh/s01')).toBe('Add new.txt|User')
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01')).toBe('new.txt')
  })

  it('refuses to commit nothing', async () => {
    const { home, repo } = await session()
    const error = await failure(() => commitSession(home, repo, 's01', 'm', env))
    expect(error.code).toBe('NOTHING_TO_COMMIT')
  })

  it('diffs committed and uncommitted work against where the session started', async () => {
    const { home, repo, base, paths } = await session()
    writeFileSync(path.join(paths.worktree, 'a.txt'), 'a\n')
    await commitSession(home, repo, 's01', 'a', env)
    writeFileSync(path.join(paths.worktree, 'b.txt'), 'b\n')
    const diff = await sessionDiff(home, repo, 's01', base.commit, env, 'patch')
    expect(diff.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt'])
    expect(diff.text).toContain('+b')
    expect(diff.text).not.toContain('RULES.md')
  })

  it('finds work that exists nowhere else, and none once it is merged', async () => {
    const { root, home, repo, paths } = await session()
    expect(await unsavedWork(home, repo, 's01', env)).toEqual({ commits: 0, uncommitted: 0 })
    writeFileSync(path.join(paths.worktree, 'a.txt'), 'a\n')
    expect(await unsavedWork(home, repo, 's01', env)).toEqual({ commits: 0, uncommitted: 1 })
    await commitSession(home, repo, 's01', 'a', env)
    expect(await unsavedWork(home, repo, 's01', env)).toEqual({ commits: 1, uncommitted: 0 })
    git(root, 'merge', '-q', '--ff-only', 'omh/s01')
    expect(await unsavedWork(home, repo, 's01', env)).toEqual({ commits: 0, uncommitted: 0 })
  })
})
