import { isUtf8 } from 'node:buffer'
import { lstatSync, readlinkSync } from 'node:fs'
import path from 'node:path'
import { NOT_A_FILE, OmhError, type Problem } from '@omh/plugin-api'
import { readFileSafe, type ReadBounds } from './safe-read.js'

// What omh reads that a user keeps (adapters, settings, the catalogue) is read
// as readFileSafe reads it (regular files only, bounded), and as UTF-8 text
// whose first bad byte is a located problem.

/** A file named to omh that is not there: how to say so, a dangling link included. */
export function notThere(file: string): OmhError {
  let why = 'does not exist'
  try {
    if (lstatSync(file).isSymbolicLink()) why = `is a link to ${path.resolve(path.dirname(file), readlinkSync(file))}, which does not exist`
  } catch {}
  return OmhError.of(NOT_A_FILE, { args: [file, why], details: { file } })
}

/** The bytes of a file the user keeps; undefined when nothing is at the path. */
function readUserFile(file: string, bounds: ReadBounds = {}): Buffer | undefined {
  const bytes = readFileSafe(file, bounds)
  // A link whose target is gone is a mistake to name, not an empty entry.
  if (bytes === undefined && isLink(file)) throw notThere(file)
  return bytes
}

function isLink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink()
  } catch {
    return false
  }
}

/** A user's file as text: the text, or the problem that its bytes are not UTF-8. */
export type TextRead = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly problem: Problem }

/**
 * A file the user keeps, as UTF-8 text; undefined when nothing is at the
 * path. Bytes that are not UTF-8 are a problem located at the first one: read
 * leniently they would reach a harness as replacement characters.
 */
export function readTextFile(file: string, bounds: ReadBounds = {}): TextRead | undefined {
  const bytes = readUserFile(file, bounds)
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
