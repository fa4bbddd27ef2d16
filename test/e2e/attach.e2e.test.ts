/**
 * `omh attach` on a real engine: a session started with the probe harness,
 * sshd started in its container, and the real `ssh` client reading the
 * worktree through the alias omh wrote, reachable on 127.0.0.1 only.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, TEST_BASE, removeBuiltImages, requireEngine, testNetwork, type Engine } from '../helpers/engines.js'
import { ROOT, omhAsync, stateOf } from '../helpers/run.js'
import { write } from '@omh/test-utils'

/** One engine is enough here: the first this run tests (vitest.config.ts gives the file to Docker's project). */
const engine: Engine = ENGINES[0]!
const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }

describe(`omh attach on ${engine}`, () => {
  let scratch: string
  let home: string
  let user: string
  let repo: string
  let network: string
  const env = () => ({ OMH_HOME: home, HOME: user, ...identity })
  const omh = (args: readonly string[]) => omhAsync(args, { cwd: repo, env: env() })
  const sshConfig = () => path.join(user, '.ssh/config')
  const ssh = (alias: string, command: string) => spawnSync('ssh', ['-F', sshConfig(), '-o', 'BatchMode=yes', alias, command], { encoding: 'utf8', timeout: 30_000 })

  beforeAll(async () => {
    await requireEngine(engine)
    scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-attach-e2e-')))
    home = path.join(scratch, 'omh')
    user = path.join(scratch, 'user')
    repo = path.join(scratch, 'repo')
    // A network that can publish ports: an engine's default may have none.
    network = testNetwork(engine, 'attach')
    // sshd's published port needs the session on a network the host reaches: egress open (see the last test).
    write(home, { 'settings.toml': `runtime = "${engine}"\n[session]\nnetwork = "${network}"\n[network]\negress = "open"\n[image]\nbase = "${TEST_BASE}"\nnetwork = "host"\n` })
    mkdirSync(path.join(home, 'adapters'))
    copyFileSync(path.join(ROOT, 'test/fixtures/adapters/probe.toml'), path.join(home, 'adapters/probe.toml'))
    write(user, { '.ssh/config': 'Host *\n  ServerAliveInterval 30\n' })
    write(repo, { 'README.md': 'bytes from the worktree: ✓ 42\n' })
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe', env: { ...process.env, ...identity } })
    git('init', '-q', '-b', 'main')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
    const launched = await omh(['probe'])
    expect(launched.status, launched.stderr).toBe(0)
  })

  afterAll(async () => {
    const removed = await omh(['sessions', 'rm', 's01', '--force'])
    expect(removed.status, removed.stderr).toBe(0)
    // The session's ssh config entry goes with it.
    expect(readdirSync(path.join(stateOf(home), 'ssh/hosts'))).toEqual([])
    spawnSync(engine, ['network', 'rm', network])
    const tags = spawnSync(engine, ['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', 'label=omh.adapter=probe'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)
    removeBuiltImages(engine, tags)
    rmSync(scratch, { recursive: true, force: true })
  })

  it('reaches the session with the real ssh client: `ssh <alias>` reads the worktree’s bytes', async () => {
    const ran = await omh(['attach', '--json'])
    expect(ran.status, ran.stderr).toBe(0)
    const attached = JSON.parse(ran.stdout).result
    expect(attached).toMatchObject({ session: 's01', host: '127.0.0.1', include: 'added', url: `ssh://${attached.alias}/work` })
    expect(readFileSync(sshConfig(), 'utf8')).toBe(`Include ${path.join(stateOf(home), 'ssh/hosts/*.conf')}\n\nHost *\n  ServerAliveInterval 30\n`)
    const worktrees = path.join(stateOf(home), 'worktrees')
    const worktree = path.join(worktrees, readdirSync(worktrees)[0]!, 's01')
    const read = ssh(attached.alias, 'cat /work/README.md')
    expect(read.stderr).toBe('')
    expect(read.stdout).toBe(readFileSync(path.join(worktree, 'README.md'), 'utf8'))
    expect(ssh(attached.alias, 'id -un; pwd').stdout).toBe('agent\n/home/agent\n')
  })

  it('publishes sshd on 127.0.0.1 only, at the port the engine picked, which the entry names', async () => {
    const port = spawnSync(engine, ['port', readdirSync(path.join(stateOf(home), 'worktrees')).map((id) => `omh-${id}-s01`)[0]!], { encoding: 'utf8' }).stdout.trim()
    expect(port).toMatch(/^2222\/tcp -> 127\.0\.0\.1:\d+$/)
    const attached = JSON.parse((await omh(['attach', '--json'])).stdout).result
    expect(`2222/tcp -> 127.0.0.1:${attached.port}`).toBe(port)
    expect(readFileSync(attached.entry, 'utf8')).toContain(`\n  Port ${attached.port}\n`)
  })

  it('a second attach keeps one include and the same alias', async () => {
    const ran = await omh(['attach', '--json'])
    expect(JSON.parse(ran.stdout).result.include).toBe('present')
    expect(readFileSync(sshConfig(), 'utf8').match(/^Include /gm)).toHaveLength(1)
  })

  it('prints the URL and the commands for an editor that is not installed, and does not fail', async () => {
    const ran = await omhAsync(['attach', 'code'], { cwd: repo, env: { ...env(), PATH: path.dirname(process.execPath) + ':/usr/bin:/bin' } })
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stdout).toMatch(/code is not installed here \(no code on PATH\)\. Open ssh:\/\/omh-\S+-s01\/work yourself, or run:\n {2}code --remote ssh-remote\+omh-\S+-s01 \/work/)
  })

  it('starts an installed editor with $ALIAS filled in', async () => {
    write(home, { 'editors/reader.toml': `name = "reader"\nbin = "ssh"\nargs = ["-F", "${sshConfig()}", "$ALIAS", "cat /work/README.md"]\n` })
    const ran = await omh(['attach', 'reader'])
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stdout).toContain('bytes from the worktree: ✓ 42')
  })

  it('refuses an editor it does not know, naming those it does', async () => {
    writeFileSync(path.join(home, 'editors/reader.toml'), 'name = "reader"\nbin = "ssh"\nargs = []\n')
    const ran = await omh(['attach', 'vscode'])
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain('No editor is called "vscode".')
    expect(ran.stderr).toMatch(/Known editors: code, cursor, nvim, reader, zed/)
  })

  it('refuses a session behind the egress proxy, naming the setting, instead of waiting for an sshd nothing reaches', async () => {
    const settings = readFileSync(path.join(home, 'settings.toml'), 'utf8')
    write(home, { 'settings.toml': settings.replace('egress = "open"', 'egress = "allowlist"') })
    let sid = ''
    try {
      const launched = await omh(['--new', 'probe'])
      expect(launched.status, launched.stderr).toBe(0)
      sid = /omh: probe on omh\/(s\d+)/.exec(launched.stderr)![1]!
      const ran = await omh(['attach', '-s', sid])
      expect(ran.status).toBe(2)
      expect(ran.stderr).toContain('Code: ATTACH_UNREACHABLE')
      expect(ran.stderr).toContain(`Session ${sid} runs behind its egress proxy`)
      expect(ran.stderr).toContain('[network] egress = "open"')
      expect(ran.stderr).toContain(path.join(home, 'settings.toml'))
    } finally {
      write(home, { 'settings.toml': settings })
      if (sid) expect((await omh(['sessions', 'rm', sid, '--force'])).status).toBe(0)
    }
  })
})
