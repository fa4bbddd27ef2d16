/**
 * The prepared spare: one session per repository and harness made ahead, in the background after a
 * launch, so that the next `--new` claims it instead of making one. Until claimed it is no session
 * anyone sees: its run directory holds a mark, and every listing passes it over. It is claimed only
 * while what it was made from still holds (the commit a new session starts at, the files it carries
 * in, its worktree as made); else it goes, and the launch makes its session as before.
 */
import { createHash } from 'node:crypto'
import { lstat, readdir, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { readFileSafe } from '@omh/kernel'
import { tryGit } from '../host/git.js'
import { repoRunDir, sessionPaths } from '../host/layout.js'
import type { Repository } from '../host/repo.js'
import type { CarryFile } from '../work/carry-in.js'
import { placeholdersIn } from './mountpoints.js'

type Env = Readonly<Record<string, string | undefined>>

/** The mark in a spare's run directory. Not a harness name (those have no dot), so no staging directory takes it. */
export const SPARE_MARK = 'spare.json'

/** What a spare was made from, and whether it is ready to be claimed. */
export interface SpareMark {
  readonly harness: string
  /** The commit its branch starts at. */
  readonly base: string
  /** The files `carry_in` put in its worktree, as one digest. */
  readonly carried: string
  /** Its container is up; a spare still being made is never claimed. */
  readonly ready: boolean
}

const markFile = (run: string): string => path.join(run, SPARE_MARK)

/** Whether the session whose run directory is `run` is a spare: what listings ask before showing it. */
export async function isSpare(run: string): Promise<boolean> {
  return lstat(markFile(run)).then(
    (found) => found.isFile(),
    () => false,
  )
}

/** The spare's mark; undefined when there is none or it is not one omh wrote (a link out, a FIFO, too big, not its shape). */
export async function readSpare(run: string): Promise<SpareMark | undefined> {
  try {
    const bytes = readFileSafe(markFile(run), { within: run, maxBytes: 4096 })
    if (!bytes) return undefined
    const { harness, base, carried, ready } = JSON.parse(bytes.toString('utf8')) as Partial<SpareMark>
    if (typeof harness !== 'string' || typeof base !== 'string' || typeof carried !== 'string' || typeof ready !== 'boolean') return undefined
    return { harness, base, carried, ready }
  } catch {
    return undefined
  }
}

/** Writes the mark whole (a reader sees the old one or the new one, never half). */
export async function writeSpare(run: string, mark: SpareMark): Promise<void> {
  const temporary = `${markFile(run)}.${process.pid}`
  await writeFile(temporary, `${JSON.stringify(mark)}\n`, { mode: 0o600 })
  await rename(temporary, markFile(run))
}

/** Claiming a spare is taking its mark away: from then on it is a session like any other. */
export const unmarkSpare = (run: string): Promise<void> => rm(markFile(run), { force: true })

/** One digest of the files a new session carries in: their paths, modes and contents, in order. */
export function carriedDigest(files: readonly CarryFile[]): string {
  const hash = createHash('sha256')
  for (const file of files) hash.update(`${file.path}\0${file.mode}\0${file.bytes.length}\0`).update(file.bytes)
  return hash.digest('hex')
}

/** The repository's spares, any harness, ready or not, by session id. */
export async function listSpares(omhState: string, repo: Repository): Promise<{ sid: string; mark: SpareMark | undefined }[]> {
  const dir = repoRunDir(omhState, repo)
  const names = await readdir(dir).catch(() => [] as string[])
  const found = await Promise.all(
    names.map(async (sid) => {
      const run = sessionPaths(omhState, repo, sid).run
      return (await isSpare(run)) ? [{ sid, mark: await readSpare(run) }] : []
    }),
  )
  return found.flat()
}

/**
 * Whether a spare still is what a new session made now would be: its mark as written, the same
 * base commit and carried files, and its worktree on that commit with nothing in it changed but the
 * files carried in, and those as carried (an agent never ran there; anything else wrote to it).
 * `carriedIn` reads what `carry_in` would carry from a checkout, as a new session does.
 */
export async function spareHolds(
  omhState: string,
  repo: Repository,
  sid: string,
  wanted: Promise<{ harness: string; base: string; carried: string }>,
  carriedIn: (checkout: string) => Promise<readonly CarryFile[]>,
  env: Env,
): Promise<boolean> {
  const paths = sessionPaths(omhState, repo, sid)
  const at = { cwd: paths.worktree, env, trust: [paths.worktree] }
  const [mark, head, status, carried, placeholders, want] = await Promise.all([
    readSpare(paths.run),
    tryGit(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], at),
    tryGit(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=no'], at),
    carriedIn(paths.worktree).catch(() => undefined),
    placeholdersIn(paths.run, paths.worktree),
    wanted,
  ])
  if (!mark?.ready || mark.harness !== want.harness || mark.base !== want.base || mark.carried !== want.carried) return false
  if (!head.ok || head.stdout.trim() !== want.base || !status.ok || !carried || carriedDigest(carried) !== want.carried) return false
  const expected = new Set([...carried.map((file) => file.path), ...placeholders].map((rel) => `?? ${rel}`))
  return status.stdout.split('\0').filter(Boolean).every((line) => expected.has(line))
}
