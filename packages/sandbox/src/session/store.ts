import { readFileSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
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
export async function listSessions(omhHome: string, repo: Repository): Promise<string[]> {
  const ids = (await names(path.join(omhHome, 'worktrees', repo.id))).filter((n) => SESSION_ID.test(n))
  return ids.sort((a, b) => sessionNumber(a) - sessionNumber(b))
}

/**
 * The next free id. Ids still used by anything a session leaves (a kept
 * branch, a shadow, a run directory) are skipped, so a new session never
 * adopts what a removed one left behind.
 */
export async function nextSessionId(omhHome: string, repo: Repository, env: Env): Promise<string> {
  const used = new Set<number>()
  const add = (n: string) => SESSION_ID.test(n) && used.add(sessionNumber(n))
  for (const n of await names(path.join(omhHome, 'worktrees', repo.id))) add(n)
  for (const n of await names(path.join(omhHome, 'shadow', repo.id))) add(n.replace(/\.git$/, ''))
  for (const n of await names(repoRunDir(omhHome, repo))) add(n)
  const branches = await tryGit(['for-each-ref', '--format=%(refname:strip=3)', 'refs/heads/omh/'], { cwd: repo.root, env })
  if (branches.ok) for (const n of branches.stdout.split('\n')) add(n.trim())
  return sessionId(Math.max(0, ...used) + 1)
}

const alive = (pid: number): boolean => {
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
export async function withRepoLock<T>(omhHome: string, repo: Repository, run: () => Promise<T>): Promise<T> {
  const dir = path.join(repoRunDir(omhHome, repo), '.lock')
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
      else if (attempt > 600) throw new Error(`the session lock ${dir} has been held by process ${holder} for a minute`, { cause: error })
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

const claimFile = (omhHome: string, repo: Repository, sid: string) => path.join(sessionPaths(omhHome, repo, sid).run, 'claim')

/** When a launch last went into a session; 0 for never. */
export async function lastUsed(omhHome: string, repo: Repository, sid: string): Promise<number> {
  try {
    return (await stat(path.join(sessionPaths(omhHome, repo, sid).run, 'last-used'))).mtimeMs
  } catch {
    return 0
  }
}

/** The live claim on a session, if an omh process still holds it. */
export async function readClaim(omhHome: string, repo: Repository, sid: string): Promise<Claim | undefined> {
  try {
    const claim = JSON.parse(await readFile(claimFile(omhHome, repo, sid), 'utf8')) as Claim
    return alive(claim.pid) ? claim : undefined
  } catch {
    return undefined
  }
}

/** Marks a session as used by this process; call under the repository lock. Resolves the release. */
export async function claim(omhHome: string, repo: Repository, sid: string, harness: string): Promise<() => Promise<void>> {
  const file = claimFile(omhHome, repo, sid)
  await mkdir(path.dirname(file), { recursive: true })
  const mine: Claim = { pid: process.pid, harness, since: new Date().toISOString() }
  await writeFile(file, `${JSON.stringify(mine)}\n`)
  await writeFile(path.join(path.dirname(file), 'last-used'), `${mine.since}\n`)
  return async () => {
    const current = await readFile(file, 'utf8').catch(() => '')
    if (current.includes(`"pid":${process.pid},`)) await rm(file, { force: true })
  }
}
