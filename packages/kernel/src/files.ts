import { randomBytes } from 'node:crypto'
import { mkdir, open, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { FILE_CHANGED, FILE_TOO_LARGE, FILE_UNWRITABLE, OmhError, isOmhError } from '@omh/plugin-api'
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

/** The file as it is now, or FILE_CHANGED when it is longer than `before`: the comparison needs no more. */
async function current(before: FileSnapshot): Promise<FileSnapshot> {
  try {
    return await snapshot(before.file, { maxBytes: Math.max(before.bytes?.length ?? 0, 1) })
  } catch (error) {
    if (isOmhError(error) && error.code === FILE_TOO_LARGE.code) throw OmhError.of(FILE_CHANGED, { args: [before.file] })
    throw error
  }
}

/**
 * Replaces a file a user owns, whole or not at all: the new bytes go to a
 * temporary file beside it, are flushed to disk, then renamed over it. The
 * write is refused (FILE_CHANGED) when the file no longer holds what
 * `before` read, so a change made meanwhile, by hand or by another omh, is
 * never lost. A new file gets `mode`; an existing one keeps its own.
 */
export async function replaceFile(before: FileSnapshot, content: string | Uint8Array, mode = 0o600): Promise<void> {
  const { file } = before
  const now = await current(before)
  const same = now.bytes === undefined ? before.bytes === undefined : before.bytes !== undefined && now.bytes.equals(before.bytes)
  if (!same) throw OmhError.of(FILE_CHANGED, { args: [file] })
  const dir = path.dirname(file)
  const tmp = path.join(dir, `.${path.basename(file)}.omh-${process.pid}-${randomBytes(4).toString('hex')}`)
  try {
    await mkdir(dir, { recursive: true })
    const keep = now.bytes === undefined ? mode : (await stat(file)).mode & 0o7777
    const handle = await open(tmp, 'wx', keep)
    try {
      await handle.writeFile(content)
      await handle.chmod(keep)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(tmp, file)
  } catch (error) {
    await rm(tmp, { force: true })
    if (error instanceof OmhError) throw error
    throw OmhError.of(FILE_UNWRITABLE, { args: [file, (error as Error).message], cause: error })
  }
  // The rename is durable only once the directory entry is flushed too; not every platform allows it.
  try {
    const handle = await open(dir, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch {}
}
