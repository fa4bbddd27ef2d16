import { readFileSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { statePath } from '@omh/kernel/locations'
import { tryGit } from './git.js'
import { SESSION_ID, repoRunDir, sessionId, sessionNumber, sessionPaths } from './layout.js'
import type { Repository } from './repo.js'

type Env = Readonly<Record<string, string | undefined>>

async function names(dir: string): Promise<string[]> {
  try {
    return await readdir(dir)
  } catch {
    return []
  }
}

/** The sessions of a repository: one per worktree directory, in id order. */
export async function listSessions(omhState: string, repo: Repository): Promise<string[]> {
  const ids = (await names(statePath(omhState, 'worktrees', repo.id))).filter((n) => SESSION_ID.test(n))
  return ids.sort((a, b) => sessionNumber(a) - sessionNumber(b))
}

/**
 * The next free id. Ids still used by anything a session leaves (a kept
 * branch, a shadow, a run directory) are skipped, so a new session never
 * adopts what a removed one left behind.
 */
export async function nextSessionId(omhState: string, repo: Repository, env: Env): Promise<string> {
  const used = new Set<number>()
  const add = (n: string) => SESSION_ID.test(n) && used.add(sessionNumber(n))
  for (const n of await names(statePath(omhState, 'worktrees', repo.id))) add(n)
  for (const n of await names(statePath(omhState, 'shadow', repo.id))) add(n.replace(/\.git$/, ''))
  for (const n of await names(repoRunDir(omhState, repo))) add(n)
  const branches = await tryGit(['for-each-ref', '--format=%(refname:strip=3)', 'refs/heads/omh/'], { cwd: repo.root, env })
  if (branches.ok) for (const n of branches.stdout.split('\n')) add(n.trim())
  return sessionId(Math.max(0, ...used) + 1)
}

export const alive = (pid: number): boolean => {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  return !zombie(pid)
}

/**
 * An exited process nobody has reaped still answers `kill(pid, 0)`. Where the
 * parent of an orphan never reaps (a container or sandbox whose PID 1 is not
 * an init), an omh that died with its terminal would otherwise hold its
 * session for ever.
 */
function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z'
  } catch {
    return false
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Holds the repository's session lock while `run` picks or creates a
 * session, so two launches at once never take the same id. The lock is a
 * directory (mkdir is atomic) naming its holder; a holder that died leaves
 * a lock the next caller takes over.
 */
export function withRepoLock<T>(omhState: string, repo: Repository, run: () => Promise<T>): Promise<T> {
  return withDirLock(path.join(repoRunDir(omhState, repo), '.lock'), run)
}

/**
 * Runs `run` holding a lock: a directory (mkdir is atomic) naming its
 * holder's pid, so a holder that died leaves a lock the next caller takes
 * over, however long a live one holds it.
 */
export async function withDirLock<T>(dir: string, run: () => Promise<T>): Promise<T> {
  await mkdir(path.dirname(dir), { recursive: true })
  for (let attempt = 0; ; attempt++) {
    try {
      await mkdir(dir)
      await writeFile(path.join(dir, 'pid'), String(process.pid))
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = Number(await readFile(path.join(dir, 'pid'), 'utf8').catch(() => ''))
      // A lock without a pid is being taken right now; give it a moment before calling it stale.
      if ((holder && !alive(holder)) || (!holder && attempt > 20)) await rm(dir, { recursive: true, force: true })
      else if (attempt > 600) throw new Error(`the lock ${dir} has been held by process ${holder} for a minute`, { cause: error })
      await sleep(25 + Math.floor(Math.random() * 50))
    }
  }
  try {
    return await run()
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Who is using a session right now: the omh process that launched into it. */
export interface Claim {
  readonly pid: number
  readonly harness: string
  readonly since: string
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
export async function claim(omhState: string, repo: Repository, sid: string, harness: string): Promise<() => Promise<void>> {
  const file = claimFile(omhState, repo, sid)
  await mkdir(path.dirname(file), { recursive: true })
  const mine: Claim = { pid: process.pid, harness, since: new Date().toISOString() }
  await writeFile(file, `${JSON.stringify(mine)}\n`)
  await writeFile(path.join(path.dirname(file), 'last-used'), `${mine.since}\n`)
  return async () => {
    const current = await readFile(file, 'utf8').catch(() => '')
    if (current.includes(`"pid":${process.pid},`)) await rm(file, { force: true })
  }
}
