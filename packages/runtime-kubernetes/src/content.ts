/**
 * Reads what the read-only mounts of a description hold on this host, so the
 * files can travel to a cluster that cannot see this disk. A link inside a
 * mounted directory that points into another mount's guest path (staging
 * points tree entries at their sources that way) is read through that mount;
 * any other link is refused, as it would dangle in the Pod.
 */
import { lstat, readdir, readFile, stat } from 'node:fs/promises'
import { readlink } from 'node:fs/promises'
import path from 'node:path'
import type { Mount } from '@omh/plugin-api'
import type { FileContent, MountContent } from './manifests.js'

const EXECUTABLE = 0o111

/** The host path behind a guest path, through the mount that holds it (the deepest one). */
function hostOf(guest: string, mounts: readonly Mount[]): string | undefined {
  const holder = mounts
    .filter((m) => guest === m.guest || guest.startsWith(`${m.guest}/`))
    .sort((a, b) => b.guest.length - a.guest.length)[0]
  return holder && path.join(holder.host, path.posix.relative(holder.guest, guest))
}

async function readTree(dir: string, rel: string, mounts: readonly Mount[], out: FileContent[], depth: number): Promise<void> {
  if (depth > 32) throw new Error(`${dir} nests deeper than 32 directories or links back into itself`)
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const host = path.join(dir, entry.name)
    const at = rel ? `${rel}/${entry.name}` : entry.name
    await readEntry(host, at, mounts, out, depth)
  }
}

async function readEntry(host: string, at: string, mounts: readonly Mount[], out: FileContent[], depth: number): Promise<void> {
  let info = await lstat(host)
  let real = host
  if (info.isSymbolicLink()) {
    const target = await readlink(host)
    const through = path.posix.isAbsolute(target) ? hostOf(target, mounts) : undefined
    if (!through) throw new Error(`${host} links to ${target}, which no mount of the container holds`)
    real = through
    info = await stat(real)
  }
  if (info.isDirectory()) return readTree(real, at, mounts, out, depth + 1)
  if (!info.isFile()) throw new Error(`${real} is neither a file nor a directory`)
  out.push({ path: at, content: await readFile(real), executable: (info.mode & EXECUTABLE) !== 0 })
}

/**
 * What each mount holds: every file of a read-only one, in name order, and
 * for a writable one only whether it is a file or a directory (its content
 * reaches the cluster another way).
 */
export async function readMounts(mounts: readonly Mount[]): Promise<MountContent[]> {
  const readOnly = mounts.filter((m) => m.readOnly)
  const out: MountContent[] = []
  for (const m of mounts) {
    const info = await stat(m.host)
    const kind = info.isDirectory() ? ('directory' as const) : ('file' as const)
    const files: FileContent[] = []
    if (m.readOnly) {
      if (kind === 'directory') await readTree(m.host, '', readOnly, files, 0)
      else files.push({ path: '', content: await readFile(m.host), executable: (info.mode & EXECUTABLE) !== 0 })
    }
    out.push({ guest: m.guest, kind, files })
  }
  return out
}
