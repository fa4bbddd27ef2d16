import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { gitRepo, testdir } from '@omh/test-utils'
import { createSession } from './create.js'
import { sessionPaths } from '../host/layout.js'
import { repository, resolveBase } from '../host/repo.js'
import { prepareMountpoints } from './mountpoints.js'
import { hasSession, listSessions, nextSessionId } from './store.js'
import { SPARE_MARK, carriedDigest, isSpare, listSpares, readSpare, spareHolds, unmarkSpare, writeSpare } from './spare.js'
import type { CarryFile } from '../work/carry-in.js'

const env = { ...process.env, GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd, env, encoding: 'utf8', stdio: 'pipe' }).trim()

/** What `carry_in = [".env"]` carries from a checkout: the file, when there is one. */
const carriedIn = async (checkout: string): Promise<CarryFile[]> => {
  try {
    return [{ path: '.env', bytes: readFileSync(path.join(checkout, '.env')), mode: 0o644 }]
  } catch {
    return []
  }
}

/** A repository with an ignored `.env`, and a spare of `probe` made from it as a launch makes one. */
async function withSpare() {
  const root = gitRepo()
  writeFileSync(path.join(root, '.gitignore'), '.env\n')
  git(root, 'add', '.gitignore')
  git(root, 'commit', '-q', '-m', 'ignore .env')
  writeFileSync(path.join(root, '.env'), 'KEY=one\n')
  const state = testdir()
  const repo = repository(root)
  const base = await resolveBase(repo, env)
  const carry = await carriedIn(root)
  const sid = await nextSessionId(state, repo, env)
  const paths = sessionPaths(state, repo, sid)
  mkdirSync(paths.run, { recursive: true })
  await writeSpare(paths.run, { harness: 'probe', base: base.commit, carried: carriedDigest(carry), ready: false })
  await createSession(state, repo, sid, base, env, carry)
  await writeSpare(paths.run, { harness: 'probe', base: base.commit, carried: carriedDigest(carry), ready: true })
  const want = async () => ({ harness: 'probe', base: (await resolveBase(repo, env)).commit, carried: carriedDigest(await carriedIn(root)) })
  const holds = async () => spareHolds(state, repo, sid, want(), carriedIn, env)
  return { root, state, repo, sid, paths, holds }
}

describe('the prepared spare', () => {
  it('is no session to any listing until claimed, and its id is not given again', async () => {
    const { state, repo, sid, paths } = await withSpare()
    expect(await listSessions(state, repo)).toEqual([])
    expect(await hasSession(state, repo, sid)).toBe(false)
    expect(await nextSessionId(state, repo, env)).not.toBe(sid)
    expect((await listSpares(state, repo)).map((s) => s.sid)).toEqual([sid])
    await unmarkSpare(paths.run)
    expect(await listSessions(state, repo)).toEqual([sid])
    expect(await hasSession(state, repo, sid)).toBe(true)
  })

  it('holds while nothing it was made from changed, the placeholders omh made for mounts included', async () => {
    const { paths, holds } = await withSpare()
    await prepareMountpoints(paths.run, [{ host: path.join(paths.worktree, 'AGENTS.md'), kind: 'file', root: paths.worktree }])
    expect(await holds()).toBe(true)
  })

  it('no longer holds after a commit on the default branch', async () => {
    const { root, holds } = await withSpare()
    git(root, 'commit', '-q', '--allow-empty', '-m', 'new work')
    expect(await holds()).toBe(false)
  })

  it('no longer holds when a file it carries in changed in the checkout', async () => {
    const { root, holds } = await withSpare()
    writeFileSync(path.join(root, '.env'), 'KEY=two\n')
    expect(await holds()).toBe(false)
  })

  it("no longer holds when anything wrote to the spare's worktree: a tracked file, a new file, a carried one", async () => {
    for (const change of [
      (worktree: string) => writeFileSync(path.join(worktree, '.gitignore'), '.env\nmore\n'),
      (worktree: string) => writeFileSync(path.join(worktree, 'planted.sh'), 'echo hi\n'),
      (worktree: string) => writeFileSync(path.join(worktree, '.env'), 'KEY=planted\n'),
    ]) {
      const { paths, holds } = await withSpare()
      change(paths.worktree)
      expect(await holds()).toBe(false)
    }
  })

  it('no longer holds when its branch moved', async () => {
    const { paths, holds } = await withSpare()
    git(paths.worktree, 'commit', '-q', '--allow-empty', '-m', 'moved')
    expect(await holds()).toBe(false)
  })

  it('is not claimed before it is ready, nor for another harness', async () => {
    const { state, repo, sid, paths, holds } = await withSpare()
    const mark = (await readSpare(paths.run))!
    await writeSpare(paths.run, { ...mark, ready: false })
    expect(await holds()).toBe(false)
    await writeSpare(paths.run, mark)
    expect(await spareHolds(state, repo, sid, Promise.resolve({ ...mark, harness: 'other' }), carriedIn, env)).toBe(false)
  })

  it('reads only a mark omh wrote: a link, or one not of its shape, is none, and still hides the session', async () => {
    const { paths, holds } = await withSpare()
    const elsewhere = path.join(testdir(), 'mark.json')
    writeFileSync(elsewhere, readFileSync(path.join(paths.run, SPARE_MARK)))
    execFileSync('rm', [path.join(paths.run, SPARE_MARK)])
    symlinkSync(elsewhere, path.join(paths.run, SPARE_MARK))
    expect(await readSpare(paths.run)).toBeUndefined()
    expect(await holds()).toBe(false)
    execFileSync('rm', [path.join(paths.run, SPARE_MARK)])
    writeFileSync(path.join(paths.run, SPARE_MARK), '{"harness": 1}')
    expect(await readSpare(paths.run)).toBeUndefined()
    expect(await isSpare(paths.run)).toBe(true)
  })
})
