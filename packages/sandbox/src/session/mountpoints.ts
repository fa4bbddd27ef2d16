import { lstat, mkdir, readFile, readlink, rm, rmdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { MOUNTPOINT_LINK, OmhError } from '@omh/plugin-api'
import type { Mountpoint } from './plan.js'

const record = (runDir: string) => path.join(runDir, 'mountpoints.json')

/** A path omh created, and the writable directory it was created in. */
interface Created {
  readonly path: string
  readonly root: string
}

/**
 * The paths from just below `root` down to `target`, each to be checked
 * before anything is made or removed below it.
 */
function steps(root: string, target: string): string[] {
  const rel = path.relative(root, target)
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`${target} is not inside ${root}`)
  const out: string[] = []
  for (const part of rel.split(path.sep)) out.push(path.join(out.at(-1) ?? root, part))
  return out
}

/**
 * Creates the mountpoints a plan needs inside writable host directories, as
 * the user running omh. Left to the engine, they would be created as root
 * and stay behind in the worktree after the container is gone. Everything
 * created here (parents included) is recorded, so `clearMountpoints` removes
 * exactly that and nothing the agent or the user made.
 *
 * Those directories are written by the agent and by the repository, so each
 * component below them is looked at without following it, and a symbolic
 * link is refused (MOUNTPOINT_LINK): followed, it would have omh create files
 * wherever the link points on the host. The last component is created with
 * calls that fail on anything already there, a link included.
 */
export async function prepareMountpoints(runDir: string, wanted: readonly Mountpoint[]): Promise<string[]> {
  const created = await readRecord(runDir)
  const add = (p: string, root: string) => !created.some((c) => c.path === p) && created.push({ path: p, root })
  // A login's folder is omh's own, shared by every repository's sessions of the harness: a link the
  // agent put where omh mounts is taken away (never followed), so one session cannot stop every
  // launch. Below a worktree, a link may be the repository's own, and is refused.
  const logins = path.join(stateOf(runDir), 'creds')
  try {
    for (const m of wanted) {
      const walk = steps(m.root, m.host)
      for (const [n, at] of walk.entries()) {
        let info = await lstat(at).catch(() => undefined)
        if (info?.isSymbolicLink() && inside(logins, m.root)) {
          await rm(at)
          info = undefined
        }
        if (info?.isSymbolicLink()) throw OmhError.of(MOUNTPOINT_LINK, { args: [at, await readlink(at), m.host], hintArgs: [at] })
        if (info) continue
        if (n < walk.length - 1 || m.kind === 'directory') await mkdir(at)
        else await writeFile(at, '', { flag: 'wx' })
        add(at, m.root)
      }
    }
  } finally {
    await mkdir(runDir, { recursive: true })
    await writeFile(record(runDir), `${JSON.stringify(created, null, 2)}\n`)
  }
  return created.map((c) => c.path)
}

/** omh's state directory, which every run directory sits three levels below (`run/<repo>/<sid>`, a doctor's `scratch/<check>/run`). */
const stateOf = (runDir: string) => path.resolve(runDir, '..', '..', '..')

const inside = (dir: string, file: string) => {
  const rel = path.relative(path.resolve(dir), path.resolve(file))
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)
}

/** Whether a link now stands anywhere between a created path's root and the path itself. */
async function behindLink(created: Created): Promise<boolean> {
  for (const at of steps(created.root, created.path)) if ((await lstat(at).catch(() => undefined))?.isSymbolicLink()) return true
  return false
}

/**
 * Removes the mountpoints omh created, once no container mounts over them.
 * A file that gained content or a directory that gained entries is not a
 * placeholder any more and stays; so does one a link now stands in front of,
 * since removing it would remove what the link points to.
 */
export async function clearMountpoints(runDir: string): Promise<void> {
  const created = await readRecord(runDir)
  const kept: Created[] = []
  // The record is data in a place the user owns, and may be wrong: omh removes only what lies in
  // its own state, inside the directory it was made in.
  const state = stateOf(runDir)
  const ours = (c: Created) => inside(state, c.root) && inside(c.root, c.path)
  for (const c of [...created].filter(ours).sort((a, b) => b.path.length - a.path.length)) {
    if (await behindLink(c)) continue
    const info = await lstat(c.path).catch(() => undefined)
    if (!info) continue
    try {
      if (info.isDirectory()) await rmdir(c.path)
      else if (info.isFile() && info.size === 0) await rm(c.path)
      else kept.push(c)
    } catch {
      kept.push(c)
    }
  }
  if (kept.length) await writeFile(record(runDir), `${JSON.stringify(kept, null, 2)}\n`)
  else await rm(record(runDir), { force: true })
}

/** The empty files omh made below `checkout` for the engine to mount over, relative to it: all a spare's worktree may show besides its carried files. */
export async function placeholdersIn(runDir: string, checkout: string): Promise<string[]> {
  const created = await readRecord(runDir)
  const found = await Promise.all(
    created
      .filter((c) => inside(checkout, c.path) && c.path !== checkout)
      .map(async (c) => {
        const info = await lstat(c.path).catch(() => undefined)
        return info?.isFile() && info.size === 0 ? [path.relative(checkout, c.path).split(path.sep).join('/')] : []
      }),
  )
  return found.flat()
}

async function readRecord(runDir: string): Promise<Created[]> {
  try {
    const parsed: unknown = JSON.parse(await readFile(record(runDir), 'utf8'))
    if (!Array.isArray(parsed)) return []
    // An older omh recorded paths alone: their own directory is all that can be checked.
    return parsed.flatMap((c: unknown): Created[] =>
      typeof c === 'string'
        ? [{ path: c, root: path.dirname(c) }]
        : typeof c === 'object' && c !== null && typeof (c as Created).path === 'string' && typeof (c as Created).root === 'string'
          ? [c as Created]
          : [],
    )
  } catch {
    return []
  }
}
