import { randomBytes } from 'node:crypto'
import { open, readFile, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { FILE_LOCKED, OmhError } from '@omh/plugin-api'

/** What a lock file holds: who took it, where, and when (ms since the epoch). */
interface Holder {
  readonly pid: number
  readonly host: string
  readonly time: number
  /** Tells this lock from a later one by the same process. */
  readonly id: string
}

/** How long a lock is trusted without proof that its holder is gone; a write holds it for milliseconds. */
export const LOCK_STALE_MS = 10_000
/** How long a writer waits for another before giving up; longer than a lock can stay trusted. */
export const LOCK_WAIT_MS = 15_000

/** The lock file of a file: beside it, so every writer of it, on any host sharing the directory, finds the same one. */
export const lockFileOf = (file: string): string => path.join(path.dirname(file), `.${path.basename(file)}.omh-lock`)

/** A lock held by this process: `held()` says whether it is still this one's, `release()` gives it up. */
export interface FileLock {
  readonly file: string
  held(): Promise<boolean>
  release(): Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

const parse = (text: string): Holder | undefined => {
  try {
    const data = JSON.parse(text) as Partial<Holder>
    return typeof data.pid === 'number' && typeof data.host === 'string' && typeof data.time === 'number' ? (data as Holder) : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether a lock may be taken over: its holder's process is gone (known only
 * on the same host), or it is older than any write takes. A lock still being
 * written (empty, unreadable) is judged by its file's age.
 */
async function stale(lock: string, text: string, now: number): Promise<boolean> {
  const holder = parse(text)
  if (holder) return (holder.host === os.hostname() && !alive(holder.pid)) || now - holder.time > LOCK_STALE_MS
  const info = await stat(lock).catch(() => undefined)
  return info !== undefined && now - info.mtimeMs > LOCK_STALE_MS
}

const describe = (text: string): string => {
  const holder = parse(text)
  return holder ? `another omh (process ${holder.pid} on ${holder.host}, since ${new Date(holder.time).toISOString()})` : 'another omh'
}

/**
 * Removes a stale lock, but only the one judged stale: two writers that both
 * judged it so must not each remove it, or the second would remove the lock
 * the first has just taken. Breaking is itself serialised by an exclusive
 * file; one left by a writer killed while breaking goes once it is old.
 */
async function breakLock(lock: string, judged: string): Promise<void> {
  const breaker = `${lock}.break`
  let handle
  try {
    handle = await open(breaker, 'wx', 0o600)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    const info = await stat(breaker).catch(() => undefined)
    if (info && Date.now() - info.mtimeMs > LOCK_STALE_MS) await rm(breaker, { force: true })
    return
  }
  try {
    await handle.close()
    if ((await readFile(lock, 'utf8').catch(() => undefined)) === judged) await rm(lock, { force: true })
  } finally {
    await rm(breaker, { force: true })
  }
}

/**
 * Takes the lock of `file`: a lock file made with O_EXCL beside it, naming
 * this process, its host and the time. Waits while another writer holds it;
 * takes over a lock whose holder is gone or that is too old to be a write in
 * progress; refuses with FILE_LOCKED after `wait` ms.
 */
export async function lockFile(file: string, options: { readonly wait?: number; readonly display?: string } = {}): Promise<FileLock> {
  const lock = lockFileOf(file)
  const mine = JSON.stringify({ pid: process.pid, host: os.hostname(), time: Date.now(), id: randomBytes(6).toString('hex') } satisfies Holder)
  const deadline = Date.now() + (options.wait ?? LOCK_WAIT_MS)
  for (;;) {
    try {
      const handle = await open(lock, 'wx', 0o600)
      try {
        await handle.writeFile(mine)
      } finally {
        await handle.close()
      }
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    // Gone between the open and the read: the holder released it; try again at once.
    const text = await readFile(lock, 'utf8').catch(() => undefined)
    if (text === undefined) continue
    if (await stale(lock, text, Date.now())) {
      await breakLock(lock, text)
      continue
    }
    if (Date.now() > deadline) throw OmhError.of(FILE_LOCKED, { args: [options.display ?? file, describe(text)], hintArgs: [lock] })
    // Spread out, so waiting writers do not all retry at the same moment.
    await sleep(5 + Math.floor(Math.random() * 20))
  }
  const held = async () => (await readFile(lock, 'utf8').catch(() => undefined)) === mine
  return {
    file: lock,
    held,
    release: async () => {
      if (await held()) await rm(lock, { force: true })
    },
  }
}
