// Links in the directories a session writes, on real engines: a link the
// repository commits, and one the agent makes in its credentials, must not
// have a launch create anything at their targets on the host.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, TEST_BASE as BASE } from '../helpers/engines.js'
import { BIN, stateOf } from '../helpers/run.js'
import { write } from '@omh/test-utils'

const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, ...identity } }).trim()

function omh(args: readonly string[], cwd: string, env: Record<string, string>): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', ...identity, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d))
    child.stderr.on('data', (d: Buffer) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ status: code ?? -1, stdout, stderr })
    })
  })
}

/** A harness that runs the shell command it is given, with its rules at `rules` and a credentials directory ~/.probe. */
const adapter = (rules: string) => `name    = "linkprobe"
bin     = "omh-linkprobe"
install = """
printf '#!/bin/sh\\n[ $# -eq 0 ] && exit 0\\nexec sh -c "$1"\\n' > $OMH_PREFIX/bin/omh-linkprobe
chmod 755 $OMH_PREFIX/bin/omh-linkprobe
"""
creds = ["$HOME/.probe/"]

[capabilities.rules]
path   = "${rules}"
render = "concat"
`

const scratch = () => realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-e2e-')))

describe.each(ENGINES)('mountpoints and links on %s', (engine) => {
  let home: string
  let root: string
  let outside: string
  let env: Record<string, string>
  const run = (args: readonly string[]) => omh(args, root, env)
  const setAdapter = (rules: string) => writeFileSync(path.join(home, 'adapters/linkprobe.toml'), adapter(rules))

  beforeAll(() => {
    home = scratch()
    root = scratch()
    outside = scratch()
    write(home, { 'settings.toml': `runtime = "${engine}"\n[image]\nbase = "${BASE}"\nnetwork = "host"\n`, 'rules/style.md': 'Be brief.\n' })
    mkdirSync(path.join(home, 'adapters'))
    write(root, { 'README.md': 'the checkout\n' })
    // Committed: the repository decides what the session's worktree holds.
    symlinkSync(path.join(outside, 'from-repo'), path.join(root, 'docs'))
    mkdirSync(path.join(outside, 'from-repo'))
    mkdirSync(path.join(outside, 'from-agent'))
    git(root, 'init', '-q', '-b', 'main')
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', 'init')
    env = { OMH_HOME: home, OMH_STATE: stateOf(home) }
  })

  afterAll(async () => {
    if (!home) return
    for (const sid of existsSync(path.join(stateOf(home), 'worktrees')) ? readdirSync(path.join(stateOf(home), 'worktrees')).flatMap((r) => readdirSync(path.join(stateOf(home), 'worktrees', r))) : []) {
      await run(['sessions', 'rm', sid, '--force'])
    }
    const ids = spawnSync(engine, ['ps', '-aq', '--filter', 'label=omh.worktree'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)
    for (const id of ids) {
      const worktreeOf = spawnSync(engine, ['inspect', '--format', '{{index .Config.Labels "omh.worktree"}}', id], { encoding: 'utf8' }).stdout.trim()
      if (worktreeOf.startsWith(home)) spawnSync(engine, ['rm', '-f', id])
    }
    const tags = spawnSync(engine, ['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', 'label=omh.kind'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((t) => t.startsWith('localhost/omh-linkprobe:'))
    for (const tag of tags) {
      // The harness tools it copied go too; the toolset and the environment stay for other files.
      const tools = spawnSync(engine, ['image', 'inspect', '--format', '{{index .Config.Labels "omh.tools"}}', tag], { encoding: 'utf8' }).stdout.trim()
      spawnSync(engine, ['rmi', tag])
      if (tools) spawnSync(engine, ['rmi', tools])
    }
    for (const dir of [home, root, outside]) rmSync(dir, { recursive: true, force: true })
  })

  it('a link the repository commits (docs -> a host directory) gets nothing made at its target, and the launch says why', async () => {
    setAdapter('/work/docs/AGENTS.md')
    const r = await run(['linkprobe', '--', 'echo ran'])
    expect(readdirSync(path.join(outside, 'from-repo'))).toEqual([])
    expect(r.stderr).toContain('Code: MOUNTPOINT_LINK')
    expect(r.stderr).toMatch(/docs is a symbolic link \(to .*from-repo\); omh creates no mountpoint through a link/)
    expect(r.status).toBe(1)
    expect(r.stdout).not.toContain('ran')
  })

  it("a link the agent swaps into its login's folder is taken away by the next launch, which goes on, nothing made at its target", async () => {
    setAdapter('/work/AGENTS.md')
    const target = path.join(outside, 'from-agent')
    const first = await run(['linkprobe', '--', `ln -s ${target} "$HOME/.probe/agents" && echo linked=yes`])
    expect(first.stdout).toContain('linked=yes')
    expect(first.status).toBe(0)
    // The next launch binds a file under that folder: a changed plan, so the container is made again.
    setAdapter('$HOME/.probe/agents/RULES.md')
    // The login's folder is shared by every repository's sessions of the harness: one session's link
    // must not stop them all, so it goes (never followed) and the launch goes on.
    const second = await run(['linkprobe', '--', 'echo ran; test -L "$HOME/.probe/agents" || echo "agents=folder"'])
    expect(readdirSync(target)).toEqual([])
    expect(second.status, second.stderr).toBe(0)
    expect(second.stdout).toContain('ran')
    expect(second.stdout).toContain('agents=folder')
  })
})
