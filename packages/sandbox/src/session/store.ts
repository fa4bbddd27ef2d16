import { lstat, readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { statePath } from '@omh/kernel/locations'
import { alive, claimRun, withDirLock, type Claim } from './claim.js'
import { tryGit } from '../host/git.js'
import { NUMBERED_SESSION, SESSION_ID, bySession, repoRunDir, sessionId, sessionNumber, sessionPaths } from '../host/layout.js'
import type { Repository } from '../host/repo.js'
import { isSpare } from './spare.js'

export { alive, withDirLock, type Claim } from './claim.js'

type Env = Readonly<Record<string, string | undefined>>

async function names(dir: string): Promise<string[]> {
  try {
    return await readdir(dir)
  } catch {
    return []
  }
}

/** The sessions of a repository: one per worktree directory, in id order; a spare not claimed yet is none (spare.ts). */
export async function listSessions(omhState: string, repo: Repository): Promise<string[]> {
  const ids = (await names(statePath(omhState, 'worktrees', repo.id))).filter((n) => SESSION_ID.test(n))
  const spare = await Promise.all(ids.map((sid) => isSpare(sessionPaths(omhState, repo, sid).run)))
  return ids.filter((_, n) => !spare[n]).sort(bySession)
}

/** Whether `sid` is one of the repository's sessions, as `listSessions` would say, asking about it alone. */
export async function hasSession(omhState: string, repo: Repository, sid: string): Promise<boolean> {
  if (!SESSION_ID.test(sid)) return false
  const [worktree, spare] = await Promise.all([
    lstat(statePath(omhState, 'worktrees', repo.id, sid)).then(
      () => true,
      () => false,
    ),
    isSpare(sessionPaths(omhState, repo, sid).run),
  ])
  return worktree && !spare
}

/**
 * The next free id. Ids still used by anything a session leaves (a kept
 * branch, a shadow, a run directory) are skipped, so a new session never
 * adopts what a removed one left behind.
 */
export async function nextSessionId(omhState: string, repo: Repository, env: Env): Promise<string> {
  const used = new Set<number>()
  const add = (n: string) => NUMBERED_SESSION.test(n) && used.add(sessionNumber(n))
  for (const n of await names(statePath(omhState, 'worktrees', repo.id))) add(n)
  for (const n of await names(statePath(omhState, 'shadow', repo.id))) add(n.replace(/\.git$/, ''))
  for (const n of await names(repoRunDir(omhState, repo))) add(n)
  const branches = await tryGit(['for-each-ref', '--format=%(refname:strip=3)', 'refs/heads/omh/'], { cwd: repo.root, env })
  if (branches.ok) for (const n of branches.stdout.split('\n')) add(n.trim())
  return sessionId(Math.max(0, ...used) + 1)
}

/**
 * Holds the repository's session lock while `run` picks or creates a
 * session, so two launches at once never take the same id. The lock is a
 * directory (mkdir is atomic) naming its holder; a holder that died leaves
 * a lock the next caller takes over.
 */
export function withRepoLock<T>(omhState: string, repo: Repository, run: () => Promise<T>): Promise<T> {
  return withDirLock(path.join(repoRunDir(omhState, repo), '.lock'), run)
}

const claimFile = (omhState: string, repo: Repository, sid: string) => path.join(sessionPaths(omhState, repo, sid).run, 'claim')

/** When a launch last went into a session; 0 for never. */
export async function lastUsed(omhState: string, repo: Repository, sid: string): Promise<number> {
  try {
    return (await stat(path.join(sessionPaths(omhState, repo, sid).run, 'last-used'))).mtimeMs
  } catch {
    return 0
  }
}

/** The live claim on a session, if an omh process still holds it. */
export async function readClaim(omhState: string, repo: Repository, sid: string): Promise<Claim | undefined> {
  try {
    const claim = JSON.parse(await readFile(claimFile(omhState, repo, sid), 'utf8')) as Claim
    return alive(claim.pid) ? claim : undefined
  } catch {
    return undefined
  }
}

/** Marks a session as used by this process; call under the repository lock. Resolves the release. */
export const claimSession = (omhState: string, repo: Repository, sid: string, harness: string): Promise<() => Promise<void>> =>
  claimRun(sessionPaths(omhState, repo, sid).run, harness)
