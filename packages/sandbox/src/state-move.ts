/**
 * The one-time move of omh's state out of a profile directory that still
 * holds it (`$OMH_HOME/worktrees`, `creds`, …) into `$OMH_STATE`.
 *
 * The move goes unit by unit (a session's worktree, one account's login, a
 * repository's key), and each unit is whole at exactly one place at every
 * instant: within a filesystem by one rename; across filesystems by a copy
 * into `$OMH_STATE/.moving`, checked file by file against the original,
 * renamed into place, and only then the original removed. A journal in the
 * state directory marks a move under way, so an interrupted one is finished
 * by the next omh command, and a lock keeps two omh processes from moving at
 * once. A unit already at the destination is a conflict: both stay, and it is
 * reported. Afterwards git's links to the moved worktrees are pointed at
 * their new place. ssh entries are written again by the next `omh attach`.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chmod, copyFile, lchown, lstat, mkdir, readdir, readFile, readlink, rename, rm, rmdir, symlink, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { MOVE_JOURNAL, STATE_ENTRIES } from '@omh/kernel/locations'
import { tryGit } from './host/git.js'
import { withDirLock } from './session/store.js'

type Env = Readonly<Record<string, string | undefined>>

/** How deep below each entry a unit sits: `worktrees/<repo>/<sid>` moves whole, never file by file. */
const UNIT_DEPTH: Readonly<Record<(typeof STATE_ENTRIES)[number], number>> = {
  creds: 2,
  keys: 1,
  logins: 2,
  run: 2,
  scratch: 1,
  setups: 2,
  shadow: 2,
  ssh: 2,
  'trust.json': 0,
  worktrees: 2,
}

const MOVING = '.moving'
const LOCK = '.move.lock'

export interface StateMove {
  readonly from: string
  readonly to: string
  /** Units moved, relative to both directories. */
  readonly moved: readonly string[]
  /** Units left in the profile because the state directory already holds one of the same name. */
  readonly conflicts: readonly string[]
}

/** The state directory, made readable by its owner only when omh makes it: it holds logins and keys. */
export async function ensureStateDir(state: string): Promise<void> {
  if (existsSync(state)) return
  await mkdir(path.dirname(state), { recursive: true })
  await mkdir(state, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error
  })
  await chmod(state, 0o700)
}

/**
 * Moves every state entry of `home` into `state`, first finishing a move the
 * journal says was cut short (from whichever profile it was); see the file's comment.
 */
export async function moveState(home: string, state: string, env: Env): Promise<StateMove> {
  await ensureStateDir(state)
  return withDirLock(path.join(state, LOCK), async () => {
    const journal = path.join(state, MOVE_JOURNAL)
    const unfinished = await readFile(journal, 'utf8').then((text) => (JSON.parse(text) as { from?: unknown }).from, () => undefined)
    const moved: string[] = []
    const conflicts: string[] = []
    for (const from of new Set([...(typeof unfinished === 'string' ? [unfinished] : []), home])) {
      if (path.resolve(from) === path.resolve(state)) continue
      await writeFile(journal, `${JSON.stringify({ from, started: new Date().toISOString() })}\n`, { mode: 0o600 })
      await finishCopies(from, state)
      for (const entry of STATE_ENTRIES) await moveLevel(from, state, entry, UNIT_DEPTH[entry], moved, conflicts)
      await rm(path.join(state, MOVING), { recursive: true, force: true })
    }
    await relinkWorktrees(state, env)
    await rm(journal, { force: true })
    return { from: home, to: state, moved, conflicts }
  })
}

async function moveLevel(home: string, state: string, rel: string, depth: number, moved: string[], conflicts: string[]): Promise<void> {
  const src = path.join(home, rel)
  const info = await lstat(src).catch(() => undefined)
  if (!info) return
  const dst = path.join(state, rel)
  const there = await lstat(dst).catch(() => undefined)
  if (depth > 0 && info.isDirectory() && (!there || there.isDirectory())) {
    if (!there) await mkdir(dst, { mode: info.mode & 0o7777 })
    for (const name of await readdir(src)) await moveLevel(home, state, path.join(rel, name), depth - 1, moved, conflicts)
    await rmdir(src).catch(() => undefined)
    return
  }
  if (there) {
    conflicts.push(rel)
    return
  }
  await moveUnit(src, dst, state, rel)
  moved.push(rel)
}

async function moveUnit(src: string, dst: string, state: string, rel: string): Promise<void> {
  try {
    await rename(src, dst)
    return
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error
  }
  const staging = path.join(state, MOVING, rel)
  await rm(staging, { recursive: true, force: true })
  await mkdir(path.dirname(staging), { recursive: true })
  await copyTree(src, staging)
  await assertSameTree(src, staging)
  // From here the unit is whole at the destination; the journal lets an interrupted run finish removing the original.
  await writeFile(path.join(state, MOVING, '.placing'), rel)
  await rename(staging, dst)
  await rm(src, { recursive: true, force: true })
  await rm(path.join(state, MOVING, '.placing'), { force: true })
}

/** Ends a cross-filesystem move cut short between placing a unit and removing its original. */
async function finishCopies(home: string, state: string): Promise<void> {
  const placing = await readFile(path.join(state, MOVING, '.placing'), 'utf8').catch(() => undefined)
  if (!placing) return
  const src = path.join(home, placing)
  const dst = path.join(state, placing)
  if (existsSync(src) && existsSync(dst)) {
    await assertSameTree(src, dst)
    await rm(src, { recursive: true, force: true })
  }
  await rm(path.join(state, MOVING, '.placing'), { force: true })
}

async function copyTree(src: string, dst: string): Promise<void> {
  const info = await lstat(src)
  if (info.isSymbolicLink()) await symlink(await readlink(src), dst)
  else if (info.isDirectory()) {
    await mkdir(dst, { mode: 0o700 })
    for (const name of await readdir(src)) await copyTree(path.join(src, name), path.join(dst, name))
  } else if (info.isFile()) await copyFile(src, dst)
  // Sockets and FIFOs are endpoints of processes that are gone once their state moves; they are not carried.
  else return
  if (!info.isSymbolicLink()) {
    await chmod(dst, info.mode & 0o7777)
    await utimes(dst, info.atime, info.mtime)
  }
  if (process.getuid?.() === 0) await lchown(dst, info.uid, info.gid)
}

/** Throws unless `copy` holds what `original` holds: the same entries, kinds, modes, link targets and bytes. */
async function assertSameTree(original: string, copy: string): Promise<void> {
  const a = await lstat(original)
  const b = await lstat(copy).catch(() => undefined)
  const differ = () => new Error(`${copy} does not match ${original} after copying; the original is kept`)
  if (!a.isFile() && !a.isDirectory() && !a.isSymbolicLink()) return
  if (!b || a.isFile() !== b.isFile() || a.isDirectory() !== b.isDirectory() || a.isSymbolicLink() !== b.isSymbolicLink()) throw differ()
  if (a.isSymbolicLink()) {
    if ((await readlink(original)) !== (await readlink(copy))) throw differ()
    return
  }
  if ((a.mode & 0o7777) !== (b.mode & 0o7777)) throw differ()
  if (a.isFile()) {
    if (a.size !== b.size || (await digest(original)) !== (await digest(copy))) throw differ()
    return
  }
  const names = (await readdir(original)).sort()
  for (const name of names) await assertSameTree(path.join(original, name), path.join(copy, name))
  const copied = await readdir(copy)
  for (const name of copied) if (!names.includes(name)) throw differ()
}

const digest = async (file: string) => createHash('sha256').update(await readFile(file)).digest('hex')

/** Points git's records of each moved worktree at its new place (`git worktree repair` run from inside it). */
async function relinkWorktrees(state: string, env: Env): Promise<void> {
  const root = path.join(state, 'worktrees')
  for (const repo of await readdir(root).catch(() => [])) {
    for (const sid of await readdir(path.join(root, repo)).catch(() => [])) {
      const worktree = path.join(root, repo, sid)
      if (existsSync(path.join(worktree, '.git'))) await tryGit(['worktree', 'repair'], { cwd: worktree, env, trust: [worktree] })
    }
  }
}
