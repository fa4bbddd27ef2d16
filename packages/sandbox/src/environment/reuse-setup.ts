/**
 * Setups reused between a repository's sessions. Once a new session's setup
 * succeeds, what it left in the worktree (the files git does not track that
 * were not there before: `node_modules/`, `.venv/`, `target/`) is copied aside,
 * under a key of everything the setup started from: the session image, the
 * setup's commands, the commit's tree and the files carried in. The next new
 * session whose key is the same gets those files copied into its worktree and
 * skips the commands: an `npm ci` of the same lockfile on the same image would
 * have made the same tree.
 *
 * What a setup writes outside the worktree lasts as long as its container, as
 * it always has (a replaced container starts from the image again), so it is
 * not kept. A setup that changes a tracked file is not kept either: its result
 * depends on more than its inputs say.
 *
 * The copies are per repository, like the dependency caches, and under the
 * same trust: they reach that repository's later sessions only. The newest
 * few are kept; `omh caches rm` removes them.
 */
import { createHash } from 'node:crypto'
import { execFile } from 'node:child_process'
import { lstat, mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { readFileSafe } from '@omh/kernel'
import { statePath } from '@omh/kernel/locations'
import { tryGit } from '../host/git.js'
import type { SetupStep } from './project.js'

type Env = Readonly<Record<string, string | undefined>>

/** How many kept setups a repository holds: the newest, as keys change with each commit. */
export const KEPT_SETUPS = 3
const RECORD = 'kept.json'
const FILES = 'files'

export interface KeptSetup {
  /** The key's first characters, as `caches ls` shows it. */
  readonly key: string
  readonly dir: string
  /** The session whose setup made it. */
  readonly session: string
  readonly at: string
  /** The worktree paths it holds. */
  readonly paths: readonly string[]
}

export interface SetupInputs {
  /** The session container's image. */
  readonly image: string
  readonly steps: readonly SetupStep[]
  readonly worktree: string
  /** Paths carried into the worktree (ignored files such as `.env`), read for their bytes. */
  readonly carried: readonly string[]
  readonly env: Env
}

const gitAt = (worktree: string, env: Env) => ({ cwd: worktree, env, trust: [worktree], agentFiles: true })

/** The key of a setup about to run, or undefined when its inputs cannot all be read. */
export async function setupKey(inputs: SetupInputs): Promise<string | undefined> {
  const tree = await tryGit(['rev-parse', '--verify', 'HEAD^{tree}'], gitAt(inputs.worktree, inputs.env))
  if (!tree.ok) return undefined
  const hash = createHash('sha256').update(JSON.stringify({ image: inputs.image, steps: inputs.steps.map((s) => s.command), tree: tree.stdout.trim() }))
  for (const rel of [...inputs.carried].sort()) {
    // The worktree is the agent's: a carried file it turned into a link out, a FIFO or something huge is no input to read.
    let file: Buffer | undefined
    try {
      file = (await lstat(path.join(inputs.worktree, rel))).isFile() ? readFileSafe(path.join(inputs.worktree, rel), { within: inputs.worktree }) : undefined
    } catch {
      file = undefined
    }
    if (file === undefined) return undefined
    hash.update(`\0${rel}\0${file.length}\0`).update(file)
  }
  return hash.digest('hex')
}

/** What git does not track in the worktree, each ignored or untracked directory once; `changed`: a tracked file differs from the commit. */
export interface Extras {
  readonly paths: ReadonlySet<string>
  readonly changed: boolean
}

export async function worktreeExtras(worktree: string, env: Env): Promise<Extras | undefined> {
  const status = await tryGit(['status', '--porcelain', '-z', '--ignored=traditional', '--untracked-files=normal', '--ignore-submodules=all'], gitAt(worktree, env)).catch(() => undefined)
  if (!status?.ok) return undefined
  const paths = new Set<string>()
  let changed = false
  const entries = status.stdout.split('\0')
  for (let n = 0; n < entries.length; n++) {
    const entry = entries[n]!
    if (entry.length < 4) continue
    const code = entry.slice(0, 2)
    if (code === '??' || code === '!!') paths.add(entry.slice(3).replace(/\/$/, ''))
    else {
      changed = true
      // A rename's entry is followed by its old path.
      if (code.includes('R') || code.includes('C')) n++
    }
  }
  return { paths, changed }
}

/** The kept setups' directory of one repository. */
export const keptSetupsDir = (omhState: string, repoId: string) => statePath(omhState, 'setups', repoId)
/** The kept setups' directories of one repository, or of every repository when none is named. */
export const keptSetupsDirs = async (omhState: string, repoId?: string): Promise<string[]> =>
  repoId !== undefined ? [keptSetupsDir(omhState, repoId)] : (await readdir(statePath(omhState, 'setups')).catch(() => [] as string[])).map((id) => keptSetupsDir(omhState, id))

/** A kept setup for the key, when one is there whole. */
async function keptFor(store: string, key: string): Promise<KeptSetup | undefined> {
  const dir = path.join(store, key)
  const record = await readRecord(dir)
  return record && (await stat(path.join(dir, FILES)).catch(() => undefined))?.isDirectory() ? record : undefined
}

async function readRecord(dir: string): Promise<KeptSetup | undefined> {
  try {
    const parsed = JSON.parse(await readFile(path.join(dir, RECORD), 'utf8')) as Partial<KeptSetup>
    const paths = Array.isArray(parsed.paths) ? parsed.paths.filter((p): p is string => typeof p === 'string' && safeRelative(p)) : undefined
    if (typeof parsed.session !== 'string' || typeof parsed.at !== 'string' || !paths) return undefined
    return { key: path.basename(dir).slice(0, 12), dir, session: parsed.session, at: parsed.at, paths }
  } catch {
    return undefined
  }
}

/**
 * A path inside the worktree as git names it: relative, without `..`, never git's own directory, and
 * without control characters, since the paths kept are shown on the user's terminal.
 */
const safeRelative = (rel: string) =>
  rel.length > 0 &&
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  !/[\u0000-\u001f\u007f-\u009f]/.test(rel) &&
  !path.isAbsolute(rel) &&
  rel.split('/').every((part) => part !== '' && part !== '.' && part !== '..') && rel.split('/')[0] !== '.git'

/** `cp -a`: links stay links, nothing is read through one, and the agent keeps owning what it made. */
const copyTree = (from: string, to: string) =>
  new Promise<void>((resolve, reject) =>
    execFile('cp', ['-a', '--reflink=auto', '--', from, to], { maxBuffer: 1024 * 1024 }, (error, _out, stderr) => (error ? reject(new Error(stderr.trim() || error.message)) : resolve())),
  )

/**
 * Copies what the setup left (`after` less `before`) aside under its key, then keeps only the newest
 * few of the repository's. Resolves the paths kept, or undefined when the setup is not one to keep.
 */
export async function keepSetup(at: { store: string; key: string; worktree: string; session: string; before: Extras; after: Extras }): Promise<readonly string[] | undefined> {
  if (at.after.changed || at.before.changed) return undefined
  const made = [...at.after.paths].filter((p) => !at.before.paths.has(p) && safeRelative(p)).sort()
  if (!made.length) return undefined
  await mkdir(at.store, { recursive: true, mode: 0o700 })
  const dir = path.join(at.store, at.key)
  const partial = `${dir}.${process.pid}.partial`
  await rm(partial, { recursive: true, force: true })
  try {
    for (const rel of made) {
      const target = path.join(partial, FILES, rel)
      await mkdir(path.dirname(target), { recursive: true })
      await copyTree(path.join(at.worktree, rel), target)
    }
    await writeFile(path.join(partial, RECORD), `${JSON.stringify({ session: at.session, at: new Date().toISOString(), paths: made }, null, 2)}\n`)
    await rm(dir, { recursive: true, force: true })
    await rename(partial, dir)
  } finally {
    await rm(partial, { recursive: true, force: true })
  }
  await pruneKept(at.store)
  return made
}

/** Keeps the newest `KEPT_SETUPS` of a repository's kept setups. */
async function pruneKept(store: string): Promise<void> {
  const kept = (await listKept(store)).sort((a, b) => b.at.localeCompare(a.at))
  for (const old of kept.slice(KEPT_SETUPS)) await rm(old.dir, { recursive: true, force: true })
}

/** Every kept setup of a repository's store, whole ones only. */
export async function listKept(store: string): Promise<KeptSetup[]> {
  const names = await readdir(store).catch(() => [] as string[])
  const found = await Promise.all(names.filter((n) => /^[0-9a-f]{64}$/.test(n)).map((n) => keptFor(store, n)))
  return found.filter((k): k is KeptSetup => k !== undefined)
}

/**
 * Copies the setup kept under the key into a new worktree. Resolves what was copied, or undefined
 * when there is none, or when a path it would fill is already there or lies behind a link (then the
 * setup runs as usual).
 */
export async function reuseSetup(store: string, key: string, worktree: string): Promise<KeptSetup | undefined> {
  const kept = await keptFor(store, key)
  if (!kept) return undefined
  for (const rel of kept.paths) if (!(await fillable(worktree, rel))) return undefined
  for (const rel of kept.paths) {
    await mkdir(path.dirname(path.join(worktree, rel)), { recursive: true })
    await copyTree(path.join(kept.dir, FILES, rel), path.join(worktree, rel))
  }
  return kept
}

/** Whether `rel` is free in the worktree and every directory above it is a real one (or absent). */
async function fillable(worktree: string, rel: string): Promise<boolean> {
  const parts = rel.split('/')
  let at = worktree
  for (const [n, part] of parts.entries()) {
    at = path.join(at, part)
    const info = await lstat(at).catch(() => undefined)
    if (!info) return true
    if (n === parts.length - 1 || !info.isDirectory()) return false
  }
  return false
}

/** Removes every kept setup in the stores given; resolves those removed. */
export async function removeKept(stores: readonly string[]): Promise<KeptSetup[]> {
  const removed: KeptSetup[] = []
  for (const store of stores) {
    for (const kept of await listKept(store)) {
      await rm(kept.dir, { recursive: true, force: true })
      removed.push(kept)
    }
  }
  return removed
}
