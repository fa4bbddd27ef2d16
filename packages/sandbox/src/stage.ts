import { createHash } from 'node:crypto'
import { chmod, lstat, mkdir, readdir, readFile, readlink, rename, rm, rmdir, stat, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { RenderReport } from '@omh/kernel'
import { byText } from '@omh/plugin-kit'
import type { Mount, StagedEntry } from '@omh/plugin-api'

/** Where the host sources of `tree` entries appear inside the container. */
export const GUEST_SOURCES = '/omh/src'

/**
 * Staged documents may hold secrets (an MCP server's token), and `mcp.json`
 * itself is its owner's alone: what is staged keeps only the owner's bits, so
 * `0o755` is staged `0o700` and directories are `0o700`. The agent reads them
 * as their owner (see the sandbox's ownership).
 */
const OWNER_ONLY = 0o700
const ownerOnly = (mode: number) => mode & OWNER_ONLY

/** What staging produced: the mounts that show it to a container, and how much it touched. */
export interface StageResult {
  readonly dir: string
  /** Read-only mounts, sorted by guest path: staged files and trees, and the host sources trees point into. */
  readonly mounts: readonly Mount[]
  /** Files and links written because they were new or changed. Zero for an unchanged profile. */
  readonly written: number
  /** Files and links removed because the profile no longer has them. */
  readonly removed: number
}

/**
 * Writes a render report into the staging directory and describes the mounts that show it to a
 * container. A re-stage writes only what changed (a running container keeps
 * seeing unchanged files, and an unchanged profile writes nothing) and removes
 * what the report no longer holds.
 *
 * Layout: `files/<guest path>` for documents; `trees/<guest path>/<name>` for
 * tree entries, each a symlink to the entry's guest path under `/omh/src/<k>`,
 * where the entry's host parent directory is mounted. The links dangle on the
 * host and resolve in the container, so nothing is copied. A tree whose entries are `mounted`
 * holds an empty mount point per entry instead (a directory, or a file for a file), where the
 * entry's source is mounted read-only.
 *
 * With `dryRun`, nothing is written and the mounts are those a real stage
 * would describe.
 */
export async function stage(
  report: Pick<RenderReport, 'files'>,
  dir: string,
  options: { readonly dryRun?: boolean } = {},
): Promise<StageResult> {
  const wanted = new Map<string, Wanted>()
  const mounts: Mount[] = []
  // Mount points of mounted tree entries: empty directories that pruning keeps.
  const points = new Set<string>()
  const sources = new Map<string, string>()

  // A document inside a tree (a command as a skill) goes into it: no mount point fits in a read-only mount.
  const trees = report.files.filter((f) => f.kind === 'tree').map((f) => f.guest)
  for (const entry of report.files) {
    assertGuest(entry)
    if (entry.kind === 'file') {
      const inTree = trees.some((t) => entry.guest.startsWith(`${t}/`))
      const host = path.join(dir, inTree ? 'trees' : 'files', entry.guest)
      const data = typeof entry.content === 'string' ? Buffer.from(entry.content) : Buffer.from(entry.content)
      wanted.set(host, { kind: 'file', data, mode: ownerOnly(entry.mode ?? 0o644) })
      if (!inTree) mounts.push({ host, guest: entry.guest, readOnly: true })
    } else {
      const treeDir = path.join(dir, 'trees', entry.guest)
      for (const e of entry.entries) {
        if (!e.name || e.name.includes('/') || e.name === '.' || e.name === '..') {
          throw new Error(`tree ${entry.guest} has an entry named ${JSON.stringify(e.name)}, which is not a file name`)
        }
        if (entry.mounted) {
          const point = path.join(treeDir, e.name)
          const isDir = (await stat(e.source).catch(() => undefined))?.isDirectory() ?? false
          wanted.set(point, isDir ? { kind: 'point' } : { kind: 'file', data: Buffer.alloc(0), mode: 0o600 })
          if (isDir) points.add(point)
          mounts.push({ host: e.source, guest: `${entry.guest}/${e.name}`, readOnly: true })
          continue
        }
        const parent = path.dirname(e.source)
        let guestParent = sources.get(parent)
        if (!guestParent) {
          guestParent = `${GUEST_SOURCES}/${createHash('sha256').update(parent).digest('hex').slice(0, 12)}`
          sources.set(parent, guestParent)
          mounts.push({ host: parent, guest: guestParent, readOnly: true })
        }
        wanted.set(path.join(treeDir, e.name), { kind: 'link', target: `${guestParent}/${path.basename(e.source)}` })
      }
      if (!options.dryRun) await mkdir(treeDir, { recursive: true, mode: OWNER_ONLY })
      mounts.push({ host: treeDir, guest: entry.guest, readOnly: true })
    }
  }
  if (options.dryRun) {
    mounts.sort((a, b) => byText(a.guest, b.guest))
    return { dir, mounts, written: 0, removed: 0 }
  }

  await mkdir(dir, { recursive: true, mode: OWNER_ONLY })
  await chmod(dir, OWNER_ONLY)
  let written = 0
  for (const [host, want] of wanted) {
    if (await current(host, want)) continue
    await mkdir(path.dirname(host), { recursive: true, mode: OWNER_ONLY })
    const tmp = `${host}.omh-tmp-${process.pid}`
    await rm(tmp, { force: true })
    // An entry that changed between a mount point and a file or link: the old one goes first.
    const was = await lstat(host).catch(() => undefined)
    if (was?.isDirectory()) await rm(host, { recursive: true, force: true })
    else if (was && want.kind === 'point') await rm(host, { force: true })
    if (want.kind === 'point') {
      await mkdir(host, { recursive: true, mode: OWNER_ONLY })
      written++
      continue
    }
    if (want.kind === 'file') {
      await writeFile(tmp, want.data, { mode: want.mode })
      await chmod(tmp, want.mode)
    } else {
      await symlink(want.target, tmp)
    }
    await rename(tmp, host)
    written++
  }

  let removed = 0
  for (const sub of ['files', 'trees']) {
    removed += await prune(path.join(dir, sub), (file) => wanted.has(file), new Set([...mounts.map((m) => m.host), ...points]))
  }

  mounts.sort((a, b) => byText(a.guest, b.guest))
  return { dir, mounts, written, removed }
}

function assertGuest(entry: StagedEntry): void {
  if (!path.posix.isAbsolute(entry.guest) || path.posix.normalize(entry.guest) !== entry.guest || entry.guest === '/') {
    throw new Error(`a renderer staged ${JSON.stringify(entry.guest)}, which is not an absolute, normalised guest path`)
  }
}

type Wanted = { kind: 'file'; data: Buffer; mode: number } | { kind: 'link'; target: string } | { kind: 'point' }

async function current(host: string, want: Wanted): Promise<boolean> {
  try {
    const info = await lstat(host)
    if (want.kind === 'point') return info.isDirectory()
    if (want.kind === 'link') return info.isSymbolicLink() && (await readlink(host)) === want.target
    return info.isFile() && (info.mode & 0o7777) === want.mode && info.size === want.data.length && (await readFile(host)).equals(want.data)
  } catch {
    return false
  }
}

/**
 * Removes files and links under `root` that are not wanted; empty directories go too, unless a mount
 * needs them. Directories that stay are made the owner's alone, those an older omh made open too.
 */
async function prune(root: string, keep: (file: string) => boolean, mountDirs: ReadonlySet<string>): Promise<number> {
  let removed = 0
  let names: string[]
  try {
    names = await readdir(root)
  } catch {
    return 0
  }
  if (((await lstat(root)).mode & 0o777) !== OWNER_ONLY) await chmod(root, OWNER_ONLY)
  for (const name of names) {
    const file = path.join(root, name)
    const info = await lstat(file)
    if (info.isDirectory()) {
      removed += await prune(file, keep, mountDirs)
      if (!mountDirs.has(file) && (await readdir(file)).length === 0) await rmdir(file)
    } else if (!keep(file)) {
      await rm(file, { force: true })
      removed++
    }
  }
  return removed
}
