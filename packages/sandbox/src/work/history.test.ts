import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { readSandboxHistory } from './history.js'

const made: string[] = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const identity = { GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@a', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@a' }

/** A user's repository and a sandbox repository over a work tree, as a session has them. */
function setup() {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-history-')))
  made.push(dir)
  const [repo, shadow, work] = ['repo', 'shadow.git', 'work'].map((d) => path.join(dir, d)) as [string, string, string]
  mkdirSync(work)
  const run = (cwd: string, args: string[], input?: string) =>
    execFileSync('git', args, { cwd, encoding: 'utf8', stdio: 'pipe', input, env: { ...process.env, ...identity } }).trim()
  run(dir, ['init', '-q', '-b', 'main', repo])
  run(repo, ['commit', '-q', '--allow-empty', '-m', 'init'])
  run(dir, ['init', '-q', '--bare', '-b', 'sandbox', shadow])
  const agent = (...args: string[]) => run(work, ['--git-dir', shadow, '--work-tree', work, ...args])
  writeFileSync(path.join(work, 'a.txt'), 'a\n')
  agent('add', '-A')
  agent('commit', '-q', '-m', 'The session starts here.\n\nseed')
  const read = (limits?: { commits: number; blobBytes: number }) =>
    readSandboxHistory(shadow, 's01', undefined, () => false, { cwd: repo, env: process.env }, limits)
  return { shadow, work, agent, run, read }
}

describe('readSandboxHistory', () => {
  it("lists the agent's commits after the seed, with their changes", async () => {
    const { work, agent, read } = setup()
    writeFileSync(path.join(work, 'b.txt'), 'b\n')
    agent('add', '-A')
    agent('commit', '-q', '-m', 'Add b')
    const history = await read()
    expect(history.commits.map((c) => c.message.trim())).toEqual(['Add b'])
    expect(history.commits[0]!.changes).toMatchObject([{ path: 'b.txt', mode: '100644' }])
  })

  it('refuses a file over the limit and more commits than the limit, naming them', async () => {
    const { work, agent, read } = setup()
    writeFileSync(path.join(work, 'big.bin'), Buffer.alloc(2048))
    agent('add', '-A')
    agent('commit', '-q', '-m', 'Big')
    await expect(read({ commits: 10, blobBytes: 1024 })).rejects.toThrow(/big\.bin in [0-9a-f]{8} is 2048 bytes/)
    agent('commit', '-q', '--allow-empty', '-m', 'Two')
    await expect(read({ commits: 1, blobBytes: 4096 })).rejects.toThrow(/more than the 1 omh keeps/)
  })

  it('refuses a tree entry no repository may hold, crafted past git', async () => {
    const { shadow, agent, run, read } = setup()
    const blob = run(shadow, ['hash-object', '-w', '--stdin'], 'x\n')
    const inner = run(shadow, ['mktree'], `100644 blob ${blob}\tconfig\n`)
    const tree = run(shadow, ['mktree'], `040000 tree ${inner}\t.GIT\n`)
    const head = agent('rev-parse', 'HEAD')
    const commit = run(shadow, ['commit-tree', tree, '-p', head, '-m', 'Sneaky'])
    agent('update-ref', 'refs/heads/sandbox', commit)
    await expect(read()).rejects.toThrow(/names the path ".GIT\/config", which cannot be in a repository/)
  })

  it('refuses a HEAD that names no branch, and reads nothing of a missing repository', async () => {
    const { shadow, read } = setup()
    writeFileSync(path.join(shadow, 'HEAD'), 'ref: refs/heads/../../../etc\n')
    await expect(read()).rejects.toThrow(/names no branch/)
    rmSync(shadow, { recursive: true })
    expect((await read()).commits).toEqual([])
  })
})
