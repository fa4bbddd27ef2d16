// omh run by a user who is not root and whose UID is not the agent's 1000: on
// rootless Podman (the default on Fedora and RHEL) and on Docker through the
// `docker` group. The worktree and credentials belong to that user, and the
// agent must be able to write them, leaving files that user owns.
import { chownSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, TEST_BASE, TEST_RUN, type Engine } from '../helpers/engines.js'
import { ensureHostUser, requireReadable, runAs, shareImageWithRootless, userEnv, type HostUser } from '../helpers/host-user.js'
import { BIN, ROOT, spareMarks, stateOf, until, type SpareMark } from '../helpers/run.js'

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
    // The default egress, an allowlist behind the session's own proxy, for rootless Podman as for Docker.
    writeFileSync(path.join(profile, 'settings.toml'), `runtime = "${engine}"\n[image]\nbase = "${TEST_BASE}"\nnetwork = "host"\n`)
    mkdirSync(repo, { recursive: true })
    writeFileSync(path.join(repo, 'README.md'), 'the checkout\n')
    chownTree(dir, user)
    for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['commit', '-q', '-m', 'init']]) expect((await git(...args)).status).toBe(0)
  })

  it("runs a session behind its egress proxy: an allowed host answers, a denied one is refused, and the agent's files are the user's", async () => {
    const outside = `omh-e2e-rl-out-${engine}-${process.pid}`
    const web = `${outside}-web`
    const settings = path.join(profile, 'settings.toml')
    const before = readFileSync(settings, 'utf8')
    const server = 'require("http").createServer((q, s) => s.end("hello from " + q.headers.host + "\\n")).listen(80)'
    try {
      expect((await client(['network', 'create', outside])).status).toBe(0)
      const started = await client(['run', '-d', '--pull=never', '--name', web, '--network', outside, '--network-alias', 'web.test', '--network-alias', 'other.test', TEST_BASE, 'node', '-e', server])
      expect(started.status, started.stderr).toBe(0)
      writeFileSync(settings, `${before}[session]\nnetwork = "${outside}"\n[network]\nregistries = []\nallow = ["web.test"]\n`)
      const made = await omh(['--new', 'probe', '--', 'echo made > made.txt && echo made=yes'])
      expect(made.status, made.stderr).toBe(0)
      expect(made.stderr).not.toContain('EGRESS_UNSUPPORTED')
      const sid = /omh: probe on omh\/(s\d+)/.exec(made.stderr)![1]!
      const worktrees = path.join(stateOf(profile), 'worktrees')
      const worktree = path.join(worktrees, readdirSync(worktrees)[0]!, sid)
      const file = statSync(path.join(worktree, 'made.txt'))
      expect({ uid: file.uid, gid: file.gid }).toEqual({ uid: user.uid, gid: user.gid })
      cpSync(path.join(ROOT, 'test/fixtures/egress-client.cjs'), path.join(worktree, 'client.cjs'))
      chownSync(path.join(worktree, 'client.cjs'), user.uid, user.gid)
      const asks = { allowed: 'get http://web.test/', tunnel: 'connect web.test:80', denied: 'connect other.test:80' }
      const asked = await omh(['--session', sid, 'probe', '--', Object.entries(asks).map(([k, a]) => `node client.cjs ${a} | sed s/^result=/${k}=/`).join('; ')])
      expect(asked.status, asked.stderr).toBe(0)
      expect(facts(asked.stdout)).toMatchObject({ allowed: '200 hello from web.test', tunnel: '200 hello from web.test:80', denied: '403' })
      const log = await omh(['--json', 'sessions', 'egress', sid])
      expect(JSON.parse(log.stdout).result.decisions).toEqual(expect.arrayContaining([expect.objectContaining({ allowed: false, host: 'other.test', port: 80, method: 'CONNECT' })]))
      expect((await omh(['sessions', 'rm', sid, '--force'])).status).toBe(0)
    } finally {
      writeFileSync(settings, before)
      await client(['rm', '-f', web])
      await client(['network', 'rm', outside])
    }
  })

  afterAll(async () => {
    if (!user || !dir) return
    for (const harness of ['hello', 'probe']) {
      const plan = await omh(['--dry-run', '--json', harness])
      if (plan.status === 0) images.add(JSON.parse(plan.stdout).result.container.image)
    }
    const worktrees = path.join(stateOf(profile), 'worktrees')
    const sessions = existsSync(worktrees) ? readdirSync(worktrees).flatMap((repoDir) => readdirSync(path.join(worktrees, repoDir))) : []
    for (const sid of sessions) await omh(['sessions', 'rm', sid, '--force'])
    for (const tag of images) {
      const tools = (await client(['image', 'inspect', '--format', '{{index .Config.Labels "omh.tools"}}', tag])).stdout.trim()
      await client(['rmi', tag])
      if (tools) await client(['rmi', tools])
    }
    // The rootless user's own store holds nothing any other test uses (Docker's is the daemon's, shared with other tests).
    if (engine === 'podman') {
      for (const kind of ['egress', 'environment', 'toolset']) for (const id of (await client(['images', '-q', '--filter', `label=omh.kind=${kind}`])).stdout.split('\n').filter(Boolean)) await client(['rmi', id])
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

  it('makes a spare in the background as the user, which the next --new claims, and takes it away once spares are off', async () => {
    const settings = readFileSync(path.join(profile, 'settings.toml'), 'utf8')
    const spares = (filter: (mark: SpareMark) => boolean) => spareMarks(stateOf(profile)).filter((spare) => filter(spare.mark)).map((spare) => spare.sid)
    const sessionOf = (stderr: string) => /omh: hello on omh\/(s\d+)/.exec(stderr)?.[1]
    try {
      writeFileSync(path.join(profile, 'settings.toml'), `${settings}[session]\nspare = 1\n`)
      const first = await omh(['--new', 'hello', '--', 'sh', '-c', 'true'])
      expect(first.status, first.stderr).toBe(0)
      await until('a spare', () => spares((m) => m.ready === true).length === 1)
      const [spare] = spares(() => true)
      const claimed = await omh(['--new', 'hello', '--', 'sh', '-c', 'echo "claimed=$(id -u)"'])
      expect(claimed.status, claimed.stderr).toBe(0)
      expect(sessionOf(claimed.stderr)).toBe(spare)
      expect(facts(claimed.stdout)['claimed']).toMatch(/^\d+$/)
      // The claim had the next one made; with spares off, the next launch has it taken away.
      await until('the next spare', () => spares((m) => m.ready === true).length === 1)
      const [next] = spareMarks(stateOf(profile))
      const worktree = path.join(stateOf(profile), 'worktrees', path.basename(next!.run), next!.sid)
      expect(existsSync(worktree)).toBe(true)
      writeFileSync(path.join(profile, 'settings.toml'), `${settings}[session]\nspare = 0\n`)
      expect((await omh(['--new', 'hello', '--', 'sh', '-c', 'true'])).status).toBe(0)
      await until('the spare to go', () => spares(() => true).length === 0 && !existsSync(worktree))
    } finally {
      writeFileSync(path.join(profile, 'settings.toml'), settings)
    }
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
