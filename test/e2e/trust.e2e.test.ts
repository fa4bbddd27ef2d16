/**
 * A launch in a repository whose settings name a local plugin, on real
 * engines: refused while the repository is untrusted, with no session, no
 * branch and no container made and the plugin never imported; after
 * `omh trust` the same launch imports it and runs the harness.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, TEST_BASE, removeBuiltImages } from '../helpers/engines.js'
import { ROOT, omhAsync, stateOf } from '../helpers/run.js'
import { write } from '@omh/test-utils'

const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }

// Leaves a marker beside itself when imported: the proof that repository code ran on the host.
const PLUGIN = `import { writeFileSync } from 'node:fs'
writeFileSync(new URL('./imported', import.meta.url), 'on the host')
export default { kind: 'renderer', apiVersion: 1, meta: { name: 'omh-renderer-local', version: '1.0.0' }, formats: ['local'], classes: ['rules'], render() { return { files: [], dropped: [] } } }
`

describe.each(ENGINES)('a repository plugin on %s', (engine) => {
  let scratch: string
  let home: string
  let repo: string
  const omh = (args: readonly string[]) => omhAsync(args, { cwd: repo, env: { OMH_HOME: home, ...identity } })
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, ...identity } }).trim()
  const marker = () => path.join(repo, '.omh/imported')
  const run = (args: readonly string[]) => spawnSync(engine, args, { encoding: 'utf8' }).stdout.trim()
  const containers = () =>
    run(['ps', '-aq', '--filter', 'label=omh.worktree'])
      .split('\n')
      .filter((id) => id && run(['inspect', '--format', '{{index .Config.Labels "omh.worktree"}}', id]).startsWith(home))

  beforeAll(() => {
    scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-trust-e2e-')))
    home = path.join(scratch, 'omh')
    repo = path.join(scratch, 'repo')
    write(home, { 'settings.toml': `runtime = "${engine}"\n[image]\nbase = "${TEST_BASE}"\nnetwork = "host"\n` })
    mkdirSync(path.join(home, 'adapters'))
    copyFileSync(path.join(ROOT, 'test/fixtures/adapters/probe.toml'), path.join(home, 'adapters/probe.toml'))
    write(repo, { 'AGENTS.md': 'Project rules.\n', '.omh/settings.toml': 'plugins = ["./local.mjs"]\n', '.omh/local.mjs': PLUGIN })
    git('init', '-q', '-b', 'main')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
  })

  afterAll(async () => {
    if (existsSync(path.join(stateOf(home), 'worktrees'))) await omh(['sessions', 'rm', 's01', '--force'])
    const tags = run(['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', 'label=omh.adapter=probe']).split('\n').filter(Boolean)
    removeBuiltImages(engine, tags)
    rmSync(scratch, { recursive: true, force: true })
  })

  it('refuses the launch while untrusted, making nothing and importing nothing', async () => {
    const refused = await omh(['probe', '--', 'echo ran'])
    expect(refused.status, refused.stderr).toBe(2)
    expect(refused.stderr).toContain('Code: REPOSITORY_UNTRUSTED')
    expect(refused.stderr).toContain('.omh/settings.toml')
    expect(refused.stderr).toContain('.omh/local.mjs')
    expect(refused.stdout).not.toContain('ran')
    expect(existsSync(marker())).toBe(false)
    expect(existsSync(path.join(stateOf(home), 'worktrees'))).toBe(false)
    expect(git('branch', '--list', 'omh/*')).toBe('')
    expect(containers()).toEqual([])
  })

  it('launches once trusted, importing the plugin on the host and running the harness in the sandbox', async () => {
    const trusted = await omh(['trust'])
    expect(trusted.status, trusted.stderr).toBe(0)
    const launched = await omh(['probe', '--', 'echo "in=$(pwd)"; cat /work/AGENTS.md'])
    expect(launched.status, launched.stderr).toBe(0)
    expect(launched.stderr).toContain('omh: probe on omh/s01')
    expect(launched.stdout).toContain('in=/work')
    expect(launched.stdout).toContain('Project rules.')
    expect(existsSync(marker())).toBe(true)
    expect(containers()).toHaveLength(1)
  })
})
