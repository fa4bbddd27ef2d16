import { randomBytes } from 'node:crypto'
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { FILE_CHANGED, FILE_UNREADABLE, FILE_UNWRITABLE, OmhError } from '@omh/plugin-api'

/** A file as it was read before planning a change to it. */
export interface FileSnapshot {
  readonly file: string
  /** The bytes read; undefined when the file did not exist. */
  readonly bytes: Buffer | undefined
}

/** Reads a file a user owns before planning a change to it. A missing file is a snapshot of nothing. */
export async function snapshot(file: string): Promise<FileSnapshot> {
  try {
    return { file, bytes: await readFile(file) }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { file, bytes: undefined }
    throw OmhError.of(FILE_UNREADABLE, { args: [file, (error as Error).message], cause: error })
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
  const now = await snapshot(file)
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
