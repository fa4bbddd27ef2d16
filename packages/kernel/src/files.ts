import { randomBytes } from 'node:crypto'
import { access, constants, lstat, mkdir, open, readdir, readlink, realpath, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { FILE_CHANGED, FILE_READ_ONLY, FILE_UNWRITABLE, OmhError, isOmhError } from '@omh/plugin-api'
import { lockFile } from './file-lock.js'
import { readFileSafe, type ReadBounds } from './safe-read.js'

/** A file as it was read before planning a change to it. */
export interface FileSnapshot {
  readonly file: string
  /** The bytes read; undefined when the file did not exist. */
  readonly bytes: Buffer | undefined
}

/**
 * Reads a file a user owns before planning a change to it, as readFileSafe
 * reads (a regular file, bounded). A missing file is a snapshot of nothing.
 */
export async function snapshot(file: string, bounds: ReadBounds = {}): Promise<FileSnapshot> {
  return { file, bytes: readFileSafe(file, bounds) }
}

/** Whether two reads of a file found the same bytes (or both found no file). */
export const sameBytes = (a: FileSnapshot, b: FileSnapshot): boolean =>
  a.bytes === undefined ? b.bytes === undefined : b.bytes !== undefined && a.bytes.equals(b.bytes)

/** How often a write starts again when the file changes under it though the lock is held: an editor does not take omh's lock. */
const ATTEMPTS = 3

/** The temporary copies of `base` that omh writes beside it: `.<base>.omh-<pid>-<8 hex>`. */
const tempPattern = (base: string) => new RegExp(`^\\.${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.omh-\\d+-[0-9a-f]{8}$`)

/**
 * The file a path names once symbolic links are followed; the path itself
 * when nothing is there. A dotfiles link is written through, not replaced by
 * a file of its own.
 */
async function target(file: string): Promise<string> {
  let at = path.resolve(file)
  for (let hops = 0; hops < 40; hops++) {
    const info = await lstat(at).catch(() => undefined)
    if (!info?.isSymbolicLink()) return at
    // Resolved from the link's real directory, as the system does, so `..` in a link means what it says.
    const dir = await realpath(path.dirname(at)).catch(() => path.dirname(at))
    at = path.resolve(dir, await readlink(at))
  }
  throw OmhError.of(FILE_UNWRITABLE, { args: [file, 'too many levels of symbolic links'] })
}

/** Whether omh may change a file: one nobody may write is the user's to keep, whoever runs omh. */
async function writable(file: string): Promise<boolean> {
  const info = await stat(file).catch(() => undefined)
  if (!info) return true
  if ((info.mode & 0o222) === 0) return false
  return access(file, constants.W_OK).then(
    () => true,
    () => false,
  )
}

/** Removes what killed writes of `base` left in the directory; called under the lock, when no write of it is under way. */
async function removeLeftovers(dir: string, base: string): Promise<void> {
  const pattern = tempPattern(base)
  const names = await readdir(dir).catch(() => [] as string[])
  await Promise.all(names.filter((name) => pattern.test(name)).map((name) => rm(path.join(dir, name), { force: true })))
}

/** Writes `content` to a new file `tmp` with `mode`, flushed to disk. */
async function writeTemp(tmp: string, content: string | Uint8Array, mode: number): Promise<void> {
  const handle = await open(tmp, 'wx', mode)
  try {
    await handle.writeFile(content)
    await handle.chmod(mode)
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** The rename is durable only once the directory entry is flushed too; not every platform allows it. */
async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch {}
}

/**
 * Changes a file a user owns, whole or not at all. `plan` gets the file as it
 * is under the file's lock (see `lockFile`) and returns the new bytes, or
 * throws to write nothing. The bytes go to a temporary file beside the file,
 * are flushed, then renamed over it, once the file is seen to still hold what
 * `plan` was given; when something that takes no lock (an editor) changed it
 * meanwhile, `plan` is asked again, a few times at most.
 *
 * A link is written through: the lock, the temporary file and the rename are
 * in the directory of the file the link names. A file nobody may write is
 * refused (FILE_READ_ONLY). A new file gets `mode`; an existing one keeps its
 * own. Temporary files left by a killed write are removed.
 */
export async function updateFile(
  file: string,
  plan: (now: FileSnapshot) => string | Uint8Array,
  options: { readonly mode?: number; readonly bounds?: ReadBounds } = {},
): Promise<void> {
  const bounds = options.bounds ?? {}
  const real = await target(file)
  const dir = path.dirname(real)
  const unwritable = (error: unknown) =>
    isOmhError(error) ? error : OmhError.of(FILE_UNWRITABLE, { args: [file, (error as Error).message], cause: error })
  try {
    await mkdir(dir, { recursive: true })
  } catch (error) {
    throw unwritable(error)
  }
  const lock = await lockFile(real, { display: file }).catch((error: unknown) => {
    throw unwritable(error)
  })
  const tmp = path.join(dir, `.${path.basename(real)}.omh-${process.pid}-${randomBytes(4).toString('hex')}`)
  try {
    await removeLeftovers(dir, path.basename(real))
    for (let attempt = 1; ; attempt++) {
      const now = { ...(await snapshot(real, bounds)), file }
      if (!(await writable(real))) throw OmhError.of(FILE_READ_ONLY, { args: [file], hintArgs: [file] })
      const content = plan(now)
      const mode = now.bytes === undefined ? (options.mode ?? 0o600) : (await stat(real)).mode & 0o7777
      await writeTemp(tmp, content, mode)
      // Read again as late as can be, so an edit that takes no lock is not overwritten unseen.
      if (sameBytes(await snapshot(real, bounds), now) && (await lock.held())) {
        await rename(tmp, real)
        break
      }
      await rm(tmp, { force: true })
      if (attempt === ATTEMPTS || !(await lock.held())) throw OmhError.of(FILE_CHANGED, { args: [file] })
    }
  } catch (error) {
    await rm(tmp, { force: true })
    throw unwritable(error)
  } finally {
    await lock.release()
  }
  await syncDir(dir)
}

/**
 * Replaces a file a user owns with `content`, only if it still holds what
 * `before` read (FILE_CHANGED otherwise), so a change made meanwhile, by hand
 * or by another omh, is never lost. See `updateFile`.
 */
export async function replaceFile(before: FileSnapshot, content: string | Uint8Array, mode = 0o600): Promise<void> {
  await updateFile(
    before.file,
    (now) => {
      if (!sameBytes(now, before)) throw OmhError.of(FILE_CHANGED, { args: [before.file] })
      return content
    },
    { mode },
  )
}
