// omh run by a user who is not root and whose UID is not the agent's 1000: on
// rootless Podman (the default on Fedora and RHEL) and on Docker through the
// `docker` group. The worktree and credentials belong to that user, and the
// agent must be able to write them, leaving files that user owns.
import { chownSync, cpSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, TEST_BASE, TEST_RUN, type Engine } from '../helpers/engines.js'
import { ensureHostUser, requireReadable, runAs, shareImageWithRootless, userEnv, type HostUser } from '../helpers/host-user.js'
import { BIN, ROOT, stateOf } from '../helpers/run.js'

const USER = 'omh-e2e'
const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }

/** `key=value` lines a harness printed. */
const facts = (stdout: string) => Object.fromEntries(stdout.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))

describe.each(ENGINES)('a user who is not root, UID not 1000, on %s', (engine: Engine) => {
  let user: HostUser
  let dir: string
  let profile: string
  let repo: string
  const env = () => userEnv(user, { OMH_HOME: profile, OMH_STATE: stateOf(profile), NO_COLOR: '1', ...identity })
  const omh = (args: readonly string[]) => runAs(user, ['node', BIN, ...args], { cwd: repo, env: env() })
  const git = (...args: string[]) => runAs(user, ['git', ...args], { cwd: repo, env: env() })
  // The images the user's launches run, read from a dry run: removed afterwards, with their bases.
  const images = new Set<string>()
  const client = (args: readonly string[]) => (engine === 'podman' ? runAs(user, ['podman', ...args], { cwd: user.home, env: userEnv(user) }) : runAs(user, ['docker', ...args], { cwd: user.home, env: userEnv(user) }))

  beforeAll(async () => {
    user = ensureHostUser(USER)
    requireReadable(user, BIN)
    if (engine === 'podman') shareImageWithRootless(user, TEST_BASE)
    dir = path.join(user.home, `e2e-${engine}-${TEST_RUN}`)
    profile = path.join(dir, 'profile')
    repo = path.join(dir, 'repo')
    cpSync(path.join(ROOT, 'examples/profile'), profile, { recursive: true })
    cpSync(path.join(ROOT, 'test/fixtures/adapters/probe.toml'), path.join(profile, 'adapters/probe.toml'))
    // Rootless Podman here cannot join a container to an internal network (tested below): these tests run open.
    writeFileSync(path.join(profile, 'settings.toml'), `runtime = "${engine}"\n[image]\nbase = "${TEST_BASE}"\nnetwork = "host"\n${engine === 'podman' ? '[network]\negress = "open"\n' : ''}`)
    mkdirSync(repo, { recursive: true })
    writeFileSync(path.join(repo, 'README.md'), 'the checkout\n')
    chownTree(dir, user)
    for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['commit', '-q', '-m', 'init']]) expect((await git(...args)).status).toBe(0)
  })

  it.runIf(engine === 'podman')('refuses to run a session open where rootless Podman cannot make the egress network, naming the setting', async () => {
    const settings = path.join(profile, 'settings.toml')
    const open = readFileSync(settings, 'utf8')
    writeFileSync(settings, open.replace('egress = "open"', 'egress = "allowlist"'))
    try {
      const ran = await omh(['--new', 'probe'])
      expect(ran.status).toBe(2)
      expect(ran.stderr).toContain('Code: EGRESS_UNSUPPORTED')
      expect(ran.stderr).toContain('[network] egress = "open"')
      expect(ran.stderr).toContain(settings)
    } finally {
      writeFileSync(settings, open)
    }
  })

  afterAll(async () => {
    if (!user || !dir) return
    for (const harness of ['hello', 'probe']) {
      const plan = await omh(['--dry-run', '--json', harness])
      if (plan.status === 0) images.add(JSON.parse(plan.stdout).result.container.image)
    }
    for (const sid of ['s01', 's02']) await omh(['sessions', 'rm', sid, '--force'])
    for (const tag of images) {
      const from = (await client(['image', 'inspect', '--format', '{{index .Config.Labels "omh.from"}}', tag])).stdout.trim()
      await client(['rmi', tag])
      if (from.startsWith('localhost/omh-base:')) await client(['rmi', from])
    }
    rmSync(dir, { recursive: true, force: true })
  })

  it('launches a session whose agent writes /work, leaving files the user owns, and sessions diff shows them', async () => {
    const r = await omh(['hello', '--', 'sh', '-c', 'echo hi > hi.txt && echo wrote=yes; echo "agent=$(id -u):$(id -g)"; echo "readme=$(stat -c %u:%g README.md)"'])
    expect(r.stderr).not.toContain('Permission denied')
    expect(r.status).toBe(0)
    const f = facts(r.stdout)
    expect(f['wrote']).toBe('yes')
    // Inside, the worktree is the agent's own.
    expect(f['readme']).toBe(f['agent'])
    const worktrees = path.join(stateOf(profile), 'worktrees')
    const made = statSync(path.join(worktrees, readdirSync(worktrees)[0]!, 's01', 'hi.txt'))
    expect({ uid: made.uid, gid: made.gid }).toEqual({ uid: user.uid, gid: user.gid })
    const diff = await omh(['sessions', 'diff', '--stat'])
    expect(diff.status).toBe(0)
    expect(diff.stdout).toContain('hi.txt')
  })

  it("lets the agent write its credential directory, as the user's files", async () => {
    const r = await omh(['--new', 'probe', '--', 'echo token > "$HOME/.probe/login" && echo wrote=yes'])
    expect(r.status).toBe(0)
    expect(facts(r.stdout)['wrote']).toBe('yes')
    const login = path.join(stateOf(profile), 'creds', 'probe', 'default', '.probe', 'login')
    const made = statSync(login)
    expect({ uid: made.uid, gid: made.gid }).toEqual({ uid: user.uid, gid: user.gid })
  })

  it('passes omh doctor: the staged files reach the harness', async () => {
    const r = await omh(['doctor', 'hello', '--json'])
    expect(r.stderr).not.toContain('Permission denied')
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout).result.reports[0]).toMatchObject({ ok: true, failed: 0 })
  })
})

function chownTree(target: string, user: HostUser): void {
  chownSync(target, user.uid, user.gid)
  if (!statSync(target).isDirectory()) return
  for (const name of readdirSync(target)) chownTree(path.join(target, name), user)
}
