// A session whose agent turns the worktree's AGENTS.md into a link to a host
// file: each launch composes the project's rules afresh from the worktree, so
// the next one must refuse the link rather than stage the host file into the
// sandbox. Checked on the host (the staged file) and inside the container.
// And an agent that plants, from inside its container, every way host git
// could be made to run a program: the host's review commands run none.
import { execFileSync } from 'node:child_process'
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, TEST_BASE, client, removeBuiltImages } from '../helpers/engines.js'
import { ROOT, omhAsync, stateOf } from '../helpers/run.js'
import { write } from '@omh/test-utils'

const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }

// The probe harness (test/fixtures/adapters/probe.toml, so the image is the same), staging its rules
// over /work/CLAUDE.md as Claude Code's adapter does: the worktree's AGENTS.md stays the agent's to write.
const PROBE = readFileSync(path.join(ROOT, 'test/fixtures/adapters/probe.toml'), 'utf8')
const PROBE_OVER_CLAUDE = PROBE.replace('path   = "/work/AGENTS.md"', 'path   = "/work/CLAUDE.md"')

const SECRET = `SECRET-${process.pid}-d0-not-leak`

describe.each(ENGINES)('a hostile worktree on %s', (engine) => {
  let scratch: string
  let home: string
  let repo: string
  let hostFile: string
  const omh = (args: readonly string[], env: Record<string, string> = {}) => omhAsync(args, { cwd: repo, env: { OMH_HOME: home, ...identity, ...env } })
  const worktree = () => {
    const worktrees = path.join(stateOf(home), 'worktrees')
    return path.join(worktrees, readdirSync(worktrees)[0]!, 's01')
  }
  const container = () => `omh-${readdirSync(path.join(stateOf(home), 'worktrees'))[0]!}-s01`
  /** What the container reads at /work/CLAUDE.md, asked of the engine, not of omh. */
  const inContainer = () => client(engine, ['exec', container(), 'cat', '/work/CLAUDE.md'])
  /** Every staged CLAUDE.md on the host, read whole. */
  const staged = () =>
    readdirSync(path.join(stateOf(home), 'run'), { recursive: true, encoding: 'utf8' })
      .filter((p) => path.basename(p) === 'CLAUDE.md')
      .map((p) => readFileSync(path.join(stateOf(home), 'run', p), 'utf8'))
      .join('\n')

  beforeAll(async () => {
    scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-hostile-e2e-')))
    home = path.join(scratch, 'omh')
    repo = path.join(scratch, 'repo')
    hostFile = path.join(scratch, 'host', 'id_rsa')
    write(scratch, { 'host/id_rsa': `${SECRET}\n` })
    write(home, {
      'settings.toml': `runtime = "${engine}"\n[image]\nbase = "${TEST_BASE}"\nnetwork = "host"\n`,
      'rules/style.md': 'Be brief.\n',
      'adapters/probe.toml': PROBE_OVER_CLAUDE,
    })
    write(repo, { 'README.md': 'r\n', 'AGENTS.md': 'Project rules.\n' })
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe', env: { ...process.env, ...identity } })
    git('init', '-q', '-b', 'main')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
    const first = await omh(['probe', '--', 'cat /work/CLAUDE.md'])
    expect(first.status, first.stderr).toBe(0)
    expect(first.stdout).toContain('Project rules.')
  })

  afterAll(async () => {
    if (!home) return
    await omh(['sessions', 'rm', 's01', '--force'])
    const tags = client(engine, ['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', 'label=omh.adapter=probe']).stdout.split('\n').filter(Boolean)
    removeBuiltImages(engine, tags)
    rmSync(scratch, { recursive: true, force: true })
  })

  it("refuses the next launch when the agent links AGENTS.md to a host file, and stages nothing of it", async () => {
    const linked = await omh(['probe', '--', `ln -sf ${hostFile} /work/AGENTS.md && echo linked=yes`])
    expect(linked.stdout).toContain('linked=yes')
    expect(lstatSync(path.join(worktree(), 'AGENTS.md')).isSymbolicLink()).toBe(true)

    const relaunch = await omh(['probe', '--', 'cat /work/CLAUDE.md'])
    expect(relaunch.status).toBe(2)
    expect(relaunch.stderr).toContain(`${path.join(worktree(), 'AGENTS.md')} leads outside ${worktree()}, to ${hostFile}`)
    expect(relaunch.stderr).toContain('Code: FILE_OUTSIDE_TREE')
    expect(`${relaunch.stdout}${relaunch.stderr}`).not.toContain(SECRET)
    expect(staged()).not.toContain(SECRET)
    const inside = inContainer()
    expect(inside.status, inside.stderr).toBe(0)
    expect(inside.stdout).toContain('Be brief.')
    expect(inside.stdout).not.toContain(SECRET)
  })

  it("refuses a link to the process's own environment, whose secrets omh holds", async () => {
    await omh(['probe', '--', 'ln -sf /proc/self/environ /work/AGENTS.md'])
    const relaunch = await omh(['probe', '--', 'cat /work/CLAUDE.md'], { SECRET_TOKEN: SECRET })
    expect(relaunch.status).toBe(2)
    expect(relaunch.stderr).toContain('Code: FILE_OUTSIDE_TREE')
    expect(staged()).not.toContain(SECRET)
    expect(inContainer().stdout).not.toContain(SECRET)
  })

  it('launches again once the agent links AGENTS.md inside the worktree, composing what the link names', async () => {
    // The refused launches left the container as it was, so the agent can still be reached to repair it.
    const repaired = client(engine, ['exec', container(), 'sh', '-c', 'printf "Linked rules.\\n" > /work/rules.md && ln -sf rules.md /work/AGENTS.md'])
    expect(repaired.status, repaired.stderr).toBe(0)
    const relaunch = await omh(['probe', '--', 'cat /work/CLAUDE.md'])
    expect(relaunch.status, relaunch.stderr).toBe(0)
    expect(relaunch.stdout).toContain('Linked rules.')
  })

  // Each way in, planted by the agent in its own session of a repository whose base has a submodule
  // (`sub`, a gitlink: an empty directory in a worktree). The program would leave a file in the
  // host's /tmp; the container's /tmp is its own, so only host git could make it there.
  describe('host git runs nothing the agent configured', () => {
    let project: string
    const marker = (way: string) => path.join(os.tmpdir(), `omh-e2e-host-ran-${process.pid}-${engine}-${way.replace(/[^a-z]/gi, '-')}`)
    const leave = (way: string) => `sh -c 'touch ${marker(way)}; cat'`
    const nested = (dir: string, config: string) =>
      `mkdir -p ${dir} && cd ${dir} && git init -q && ${config} && echo a > f.txt && git add -A && git -c user.name=a -c user.email=a@a commit -qm inner && echo b > f.txt`
    const WAYS: Record<string, string> = {
      filter: `${nested('/work/made', `git config filter.x.clean "${leave('filter')}"`)} && echo '* filter=x' > .gitattributes && echo b > /work/work.txt`,
      'submodule filter': `${nested('/work/sub', `git config filter.x.clean "${leave('submodule filter')}"`)} && echo '* filter=x' > .gitattributes`,
      textconv: `${nested('/work/sub', `git config diff.x.textconv "${leave('textconv')}"`)} && echo '* diff=x' > .gitattributes`,
      fsmonitor: nested('/work/sub', `git config core.fsmonitor "touch ${marker('fsmonitor')}; false"`),
      hooksPath: `${nested('/work/sub', 'git config core.hooksPath hooks')} && mkdir hooks && for h in post-index-change pre-commit reference-transaction; do printf '#!/bin/sh\\ntouch ${marker('hooksPath')}\\n' > hooks/$h; chmod +x hooks/$h; done`,
      'diff.external': `${nested('/work/sub', `git config diff.external "sh -c 'touch ${marker('diff.external')}'"`)} && echo two > /work/README.md`,
      'gitfile elsewhere': `${nested('/tmp/elsewhere', `git config filter.x.clean "${leave('gitfile elsewhere')}" && git config core.fsmonitor "touch ${marker('gitfile elsewhere')}; false"`)} && cp -r /tmp/elsewhere/.git /work/.elsewhere && printf 'gitdir: ../.elsewhere\\n' > /work/sub/.git && echo '* filter=x' > /work/sub/.gitattributes && echo b > /work/sub/f.txt`,
      alternates: `mkdir -p /work/.store && git init -q --bare /work/.store && echo /work/.store/objects > /omh/shadow/objects/info/alternates && echo b > /work/work.txt && git add work.txt && git -c user.name=a -c user.email=a@a commit -qm work`,
    }

    beforeAll(() => {
      project = path.join(scratch, 'project')
      write(project, { 'README.md': 'one\n', 'data.txt': 'data\n' })
      const git = (...args: string[]) => execFileSync('git', args, { cwd: project, stdio: 'pipe', env: { ...process.env, ...identity } }).toString().trim()
      git('init', '-q', '-b', 'main')
      git('add', '-A')
      git('commit', '-q', '-m', 'init')
      git('update-index', '--add', '--cacheinfo', `160000,${git('rev-parse', 'HEAD')},sub`)
      git('commit', '-q', '-m', 'a submodule')
    })

    it.each(Object.keys(WAYS))('%s: sessions ls, diff, commit and rm leave no trace of it on the host', async (way) => {
      const at = (args: readonly string[], env: Record<string, string> = {}) => omhAsync(args, { cwd: project, env: { OMH_HOME: home, ...identity, ...env } })
      rmSync(marker(way), { force: true })
      const planted = await at(['--new', 'probe', '--', `${WAYS[way]} && echo planted=yes`])
      expect(planted.stdout, planted.stderr).toContain('planted=yes')
      const sid = /omh: probe on omh\/(s\d+)/.exec(planted.stderr)![1]!
      for (const args of [['sessions', 'ls'], ['sessions', 'diff', sid], ['sessions', 'diff', '--stat', sid], ['sessions', 'commit', sid, '-m', 'work'], ['sessions', 'ls'], ['sessions', 'rm', sid, '--force']]) {
        const r = await at(args)
        expect(r.stderr, args.join(' ')).not.toContain('INTERNAL')
        if (way === 'alternates' && args[1] === 'commit') expect(r.stderr).toContain('Code: SANDBOX_HISTORY_REFUSED')
        expect(existsSync(marker(way)), `${args.join(' ')} ran what the agent configured`).toBe(false)
      }
    })
  })
})
