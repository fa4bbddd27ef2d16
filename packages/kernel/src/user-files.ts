import { isUtf8 } from 'node:buffer'
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readlinkSync, type Stats } from 'node:fs'
import path from 'node:path'
import { FILE_UNREADABLE, NOT_A_FILE, OmhError, type Problem } from '@omh/plugin-api'

// Everything omh reads that a user keeps (adapters, settings, the catalogue) is
// read here, so that a folder, a FIFO or a dangling link where a file belongs
// is refused by name instead of hanging or failing as something else.

const unusable = (file: string, why: string) => OmhError.of(NOT_A_FILE, { args: [file, why], details: { file } })

function kindOf(info: Stats): string | undefined {
  if (info.isFile()) return undefined
  if (info.isDirectory()) return 'is a directory, not a file'
  if (info.isFIFO()) return 'is a FIFO, not a file'
  if (info.isSocket()) return 'is a socket, not a file'
  return 'is a device, not a file'
}

function whyNotOpened(file: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ELOOP') return 'is a link that leads back to itself'
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    try {
      if (lstatSync(file).isSymbolicLink()) return `is a link to ${path.resolve(path.dirname(file), readlinkSync(file))}, which does not exist`
    } catch {}
    return 'does not exist'
  }
  throw OmhError.of(FILE_UNREADABLE, { args: [file, (error as Error).message], cause: error })
}

/**
 * An open descriptor of a file the user keeps; undefined when nothing is at
 * the path. A folder, FIFO, socket, device or dangling link there is
 * NOT_A_FILE; a file the system will not let omh open is FILE_UNREADABLE.
 */
function openUserFile(file: string): number | undefined {
  let fd: number
  try {
    // Non-blocking, so that opening a FIFO returns at once instead of waiting for a writer.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (error) {
    const why = whyNotOpened(file, error)
    if (why === 'does not exist') return undefined
    throw unusable(file, why)
  }
  const why = kindOf(fstatSync(fd))
  if (!why) return fd
  closeSync(fd)
  throw unusable(file, why)
}

/** Whether a file the user keeps is there; anything other than a file at the path is NOT_A_FILE. */
export function isUserFile(file: string): boolean {
  const fd = openUserFile(file)
  if (fd === undefined) return false
  closeSync(fd)
  return true
}

/** The bytes of a file the user keeps; undefined when nothing is at the path. */
export function readUserFile(file: string): Buffer | undefined {
  const fd = openUserFile(file)
  if (fd === undefined) return undefined
  try {
    return readFileSync(fd)
  } catch (error) {
    throw OmhError.of(FILE_UNREADABLE, { args: [file, (error as Error).message], cause: error })
  } finally {
    closeSync(fd)
  }
}

/** A user's file as text: the text, or the problem that its bytes are not UTF-8. */
export type TextRead = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly problem: Problem }

/**
 * A file the user keeps, as UTF-8 text; undefined when nothing is at the
 * path. Bytes that are not UTF-8 are a problem located at the first one: read
 * leniently they would reach a harness as replacement characters.
 */
export function readTextFile(file: string): TextRead | undefined {
  const bytes = readUserFile(file)
  if (bytes === undefined) return undefined
  if (isUtf8(bytes)) return { ok: true, text: bytes.toString('utf8') }
  const at = invalidUtf8At(bytes)
  const before = bytes.subarray(0, at).toString('utf8')
  const line = before.split('\n').length
  const column = before.length - before.lastIndexOf('\n')
  return {
    ok: false,
    problem: {
      file,
      line,
      column,
      message: `is not UTF-8 text (byte 0x${bytes[at]!.toString(16).padStart(2, '0')}); save it as UTF-8`,
    },
  }
}

/** Raw bytes, such as a file name, as text with every byte that is not UTF-8 written `\xNN`. */
export function showBytes(bytes: Uint8Array): string {
  let out = ''
  for (let i = 0; i < bytes.length; ) {
    const n = sequenceLength(bytes, i)
    out += n ? Buffer.from(bytes.subarray(i, i + n)).toString('utf8') : `\\x${bytes[i]!.toString(16).padStart(2, '0')}`
    i += n || 1
  }
  return out
}

/** The offset of the first byte that does not start a valid UTF-8 sequence; -1 when there is none. */
function invalidUtf8At(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const n = sequenceLength(bytes, i)
    if (!n) return i
    i += n
  }
  return -1
}

/** The length of the valid UTF-8 sequence at `i`, or 0. */
function sequenceLength(bytes: Uint8Array, i: number): number {
  const b = bytes[i]!
  const n = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0
  return n && i + n <= bytes.length && isUtf8(bytes.subarray(i, i + n)) ? n : 0
}
