/**
 * `[session] carry_in`: untracked files of the checkout copied into a new
 * session's worktree. Everything is read and checked before the session is
 * made, so a refused entry makes nothing; the copies are the agent's to
 * change, and the host's files are never mounted.
 */
import { statSync } from 'node:fs'
import { glob, mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { CARRY_IN_REFUSED, OmhError, isOmhError } from '@omh/plugin-api'
import { DEFAULT_CARRY_IN_BYTES, readFileSafe } from '@omh/kernel'
import type { KernelView } from '../kernel-view.js'
import { tryGit } from '../host/git.js'


const CARRIED = 'carried.json'

/** One file to copy: its path in the repository (and the worktree), and its bytes. */
export interface CarryFile {
  readonly path: string
  readonly bytes: Buffer
  readonly mode: number
}

/** Reads every untracked file `carry_in` names in the checkout at `root`; refuses (exit 2) with the entry at the first problem. */
export async function planCarryIn(kernel: Pick<KernelView, 'settings'>, root: string, env: Readonly<Record<string, string | undefined>>): Promise<CarryFile[]> {
  const decided = kernel.settings.last((s) => s.session?.carry_in)
  if (!decided?.value.length) return []
  const limit = kernel.settings.last((s) => s.limits?.carry_in_bytes)?.value ?? DEFAULT_CARRY_IN_BYTES
  const refuse = (entry: string, why: string) => OmhError.of(CARRY_IN_REFUSED, { args: [decided.file, entry, why], hintArgs: [] })
  const files = new Map<string, CarryFile>()
  let total = 0
  for (const entry of decided.value) {
    const normal = path.posix.normalize(entry.replaceAll('\\', '/'))
    if (path.isAbsolute(entry) || normal === '..' || normal.startsWith('../') || entry.includes('\0')) throw refuse(entry, 'it reaches outside the repository')
    const matches: string[] = []
    for await (const match of glob(normal, { cwd: root, exclude: (name) => name === '.git' })) matches.push(match.split(path.sep).join('/'))
    const untracked = await untrackedOf(root, matches.sort(), env)
    for (const rel of untracked) {
      if (files.has(rel)) continue
      // A directory a glob matches on the way (`fixtures/**`) is passed over; one the entry names is refused.
      if (statSync(path.join(root, rel), { throwIfNoEntry: false })?.isDirectory()) {
        if (/[*?[{]/.test(entry)) continue
        throw refuse(entry, `${rel} is a directory: name its files, e.g. "${rel}/**"`)
      }
      let bytes: Buffer | undefined
      try {
        bytes = readFileSafe(path.join(root, rel), { within: root, maxBytes: limit - total })
      } catch (error) {
        if (!isOmhError(error)) throw error
        const why =
          error.code === 'FILE_TOO_LARGE'
            ? `the files it and the entries before it name hold more than [limits] carry_in_bytes (${limit} bytes)`
            : error.code === 'FILE_NOT_REGULAR'
              ? `${rel} is not a regular file`
              : `${rel}: ${error.message}`
        throw refuse(entry, why)
      }
      if (!bytes) continue
      total += bytes.length
      const executable = (statSync(path.join(root, rel)).mode & 0o111) !== 0
      files.set(rel, { path: rel, bytes, mode: executable ? 0o755 : 0o644 })
    }
  }
  return [...files.values()]
}

/** Those of `paths` git does not track in the checkout: a tracked file is in the worktree already. */
async function untrackedOf(root: string, paths: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<string[]> {
  if (!paths.length) return []
  const tracked = await tryGit(['ls-files', '-z', '--', ...paths.map((p) => `:(literal)${p}`)], { cwd: root, env })
  const known = new Set(tracked.ok ? tracked.stdout.split('\0').filter(Boolean) : [])
  return paths.filter((p) => !known.has(p))
}

/** Writes the files into a new worktree and records their paths, so the sandbox repository excludes them at every launch. */
export async function carryIn(worktree: string, run: string, files: readonly CarryFile[]): Promise<void> {
  for (const file of files) {
    const target = path.join(worktree, file.path)
    await mkdir(path.dirname(target), { recursive: true })
    // `wx`: the worktree was just made from git, so nothing can be there; a link the checkout put there is never written through.
    await writeFile(target, file.bytes, { flag: 'wx', mode: file.mode })
  }
  await mkdir(run, { recursive: true })
  await writeFile(path.join(run, CARRIED), `${JSON.stringify(files.map((f) => f.path))}\n`)
}

/** The paths carried into a session, relative to its worktree. */
export async function carriedPaths(run: string): Promise<string[]> {
  try {
    const list: unknown = JSON.parse(await readFile(path.join(run, CARRIED), 'utf8'))
    return Array.isArray(list) ? list.filter((p): p is string => typeof p === 'string') : []
  } catch {
    return []
  }
}
