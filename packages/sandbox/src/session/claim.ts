/**
 * Who holds a session, and the locks that keep two launches apart: kept
 * apart with nothing but `node:fs`, so a kept launch (bin/launches.js) claims
 * its session as a launch does without loading the sandbox.
 */
import { readFileSync } from 'node:fs'
import { mkdir, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'

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

/** The lock a repository's launches take to pick or claim a session, beside its sessions' directories. */
export const repoLock = (sessionRun: string): string => path.join(path.dirname(sessionRun), '.lock')

/** Who is using a session right now: the omh process that launched into it. */
export interface Claim {
  readonly pid: number
  readonly harness: string
  readonly since: string
}

/**
 * Marks the session whose bookkeeping directory is `run` as used by this
 * process, and stamps it as launched into last; call under the repository
 * lock. Resolves the release.
 */
export async function claimRun(run: string, harness: string): Promise<() => Promise<void>> {
  const file = path.join(run, 'claim')
  await mkdir(run, { recursive: true })
  const mine: Claim = { pid: process.pid, harness, since: new Date().toISOString() }
  await writeFile(file, `${JSON.stringify(mine)}\n`)
  await writeFile(path.join(run, 'last-used'), `${mine.since}\n`)
  return async () => {
    const current = await readFile(file, 'utf8').catch(() => '')
    if (current.includes(`"pid":${process.pid},`)) await rm(file, { force: true })
  }
}

/** Each launch leaves this record beside a session's bookkeeping: what to stop once it sits idle (see idle.ts). */
export const UP = 'up.json'

/** Marks the session as used just now: the idle clock starts again when a launch ends. */
export async function touchUp(run: string): Promise<void> {
  const now = new Date()
  await utimes(path.join(run, UP), now, now).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error
  })
}
