import { closeSync, constants, fstatSync, openSync, readdirSync, readlinkSync, readSync, realpathSync, statSync, type Dirent, type Stats } from 'node:fs'
import path from 'node:path'
import { FILE_NOT_REGULAR, FILE_OUTSIDE_TREE, FILE_TOO_LARGE, FILE_UNREADABLE, NOT_A_FILE, OmhError } from '@omh/plugin-api'

/** The most bytes omh reads from one file unless `[limits] file_bytes` says otherwise. */
export const DEFAULT_FILE_BYTES = 8 * 1024 * 1024

/** Where a file belongs, and how much of it omh reads. */
export interface ReadBounds {
  /**
   * The tree the file belongs to, such as a repository or a session's
   * worktree: a link is followed only while it stays inside. Absent for the
   * user's own files, whose links may lead anywhere on this machine.
   */
  readonly within?: string | undefined
  /** The most bytes read from the file; a longer one is FILE_TOO_LARGE. Absent: DEFAULT_FILE_BYTES. */
  readonly maxBytes?: number | undefined
}

// Opening a FIFO for reading waits for a writer unless O_NONBLOCK; a terminal
// opened without O_NOCTTY could become omh's controlling terminal.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0)

/**
 * A regular file's bytes, or undefined when nothing is there (a dangling link
 * included). Anything else is an OmhError naming the file: a FIFO, device,
 * socket or directory (FILE_NOT_REGULAR), a file longer than the bound
 * (FILE_TOO_LARGE), a link out of `within` (FILE_OUTSIDE_TREE). Never waits on
 * a writer and never reads more than the bound and one byte.
 */
export function readFileSafe(file: string, bounds: ReadBounds = {}): Buffer | undefined {
  const max = bounds.maxBytes ?? DEFAULT_FILE_BYTES
  const target = bounds.within === undefined ? file : resolveInside(file, bounds.within)
  if (target === undefined) return undefined
  // Refused before opening, because opening some devices does something.
  const before = statOrUndefined(file, target)
  if (!before) return undefined
  refuseIrregular(file, before)
  let fd: number
  try {
    // The resolved path is opened without following a link, so one swapped in since is not.
    fd = openSync(target, OPEN_FLAGS | (bounds.within === undefined ? 0 : (constants.O_NOFOLLOW ?? 0)))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    if (code === 'ELOOP') throw outside(file, target, bounds.within!)
    throw unreadable(file, error)
  }
  try {
    const info = fstatSync(fd)
    refuseIrregular(file, info)
    if (bounds.within !== undefined) refuseOpenedOutside(file, fd, bounds.within)
    if (info.size > max) throw OmhError.of(FILE_TOO_LARGE, { args: [file, info.size, max] })
    return readUpTo(file, fd, info.size, max)
  } finally {
    closeSync(fd)
  }
}

/** A regular file's text, read as readFileSafe reads it. */
export function readTextSafe(file: string, bounds: ReadBounds = {}): string | undefined {
  return readFileSafe(file, bounds)?.toString('utf8')
}

/**
 * A directory's entries, or undefined when it does not exist; a directory
 * reached through a link out of `within` is FILE_OUTSIDE_TREE, so not even
 * its names are read. Names come as bytes.
 */
export function listDirSafe(dir: string, bounds: Pick<ReadBounds, 'within'> = {}): Dirent<Buffer>[] | undefined {
  const target = bounds.within === undefined ? dir : resolveInside(dir, bounds.within)
  if (target === undefined) return undefined
  try {
    // Names as bytes: one that is not UTF-8 read as text would name another file.
    return readdirSync(target, { withFileTypes: true, encoding: 'buffer' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw looping(dir)
    throw unreadable(dir, error)
  }
}

/** The real path of `file`, refused unless inside the real path of `tree`; undefined when nothing is there. */
function resolveInside(file: string, tree: string): string | undefined {
  let real: string
  try {
    real = realpathSync.native(file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    if (code === 'ELOOP') throw looping(file)
    throw unreadable(file, error)
  }
  if (!isInside(real, realTree(tree))) throw outside(file, real, tree)
  return real
}

function realTree(tree: string): string {
  try {
    return realpathSync.native(tree)
  } catch {
    return path.resolve(tree)
  }
}

const isInside = (real: string, tree: string): boolean => {
  const rel = path.relative(tree, real)
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel))
}

/**
 * Where Linux says the open file is: a directory on the way that was swapped
 * for a link after the path was resolved shows here. Elsewhere there is no
 * such record, and the resolved path opened without following stands.
 */
function refuseOpenedOutside(file: string, fd: number, tree: string): void {
  let opened: string
  try {
    opened = readlinkSync(`/proc/self/fd/${fd}`)
  } catch {
    return
  }
  if (!isInside(opened, realTree(tree))) throw outside(file, opened, tree)
}

function statOrUndefined(file: string, target: string): Stats | undefined {
  try {
    return statSync(target)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    if (code === 'ELOOP') throw looping(file)
    throw unreadable(file, error)
  }
}

function refuseIrregular(file: string, info: Stats): void {
  if (info.isFile()) return
  const kind = info.isFIFO()
    ? 'a FIFO'
    : info.isCharacterDevice()
      ? 'a character device'
      : info.isBlockDevice()
        ? 'a block device'
        : info.isSocket()
          ? 'a socket'
          : info.isDirectory()
            ? 'a directory'
            : 'not a file'
  throw OmhError.of(FILE_NOT_REGULAR, { args: [file, kind] })
}

// Some files say they are empty and are not (those under /proc), so the bound holds for what is
// read, not for what stat says; one byte more than stat says shows a file that grew meanwhile.
function readUpTo(file: string, fd: number, size: number, max: number): Buffer {
  let buffer = Buffer.allocUnsafe(Math.min(size > 0 ? size + 1 : 4096, max + 1))
  let total = 0
  for (;;) {
    if (total === buffer.length) {
      const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, max + 1))
      buffer.copy(grown, 0, 0, total)
      buffer = grown
    }
    let n: number
    try {
      n = readSync(fd, buffer, total, buffer.length - total, null)
    } catch (error) {
      throw unreadable(file, error)
    }
    if (n === 0) return buffer.subarray(0, total)
    total += n
    if (total > max) throw OmhError.of(FILE_TOO_LARGE, { args: [file, undefined, max] })
  }
}

const outside = (file: string, real: string, tree: string) => OmhError.of(FILE_OUTSIDE_TREE, { args: [file, tree, real], hintArgs: [tree] })

// A link chain that never ends is the user's to fix, like one that ends nowhere.
const looping = (file: string) => OmhError.of(NOT_A_FILE, { args: [file, 'is a link that leads back to itself'], details: { file } })

const unreadable = (file: string, error: unknown) => OmhError.of(FILE_UNREADABLE, { args: [file, (error as Error).message], cause: error })
