/**
 * Answers of read-only commands, kept per user and given again while every file they read is
 * unchanged. Loading oclif, the kernel and the plugins costs several bare `node` start-ups; a
 * command that only reads files can be answered from its last answer when none of those files
 * changed. This module is on the path of every such command, so it imports nothing but `node:fs`,
 * which Node has loaded already.
 */
import { accessSync, closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, type BigIntStats } from 'node:fs'

/** Bumped whenever the entry format or the recording rules change. */
const FORMAT = 'omh-answer-4'

/** Entries kept at most; the oldest go first. */
const KEEP = 256

type Env = Readonly<Record<string, string | undefined>>

/** Output as a run printed it: the descriptor (1 or 2), the text, and whether the text is base64. */
export type Printed = readonly [fd: 1 | 2, data: string, base64: boolean]

/**
 * A file a run read, and what it was then: its fingerprint, or with `presence` only whether it was
 * there (a directory whose entries the run never listed).
 */
export type Input = readonly [file: string, fingerprint: string, kind?: 'presence']

/** What an answer's entry holds besides its key's digest. */
export interface Entry {
  readonly inputs: readonly Input[]
  readonly out: readonly Printed[]
  /** The exit code of a kept answer; a kept launch has the harness's own. */
  readonly code?: number
  /** When a look for idle session containers falls due (ms since the epoch): the entry stands until then. */
  readonly dueAt?: number
}

/**
 * Where answers are kept: `$XDG_CACHE_HOME/omh/answers`, else `~/.cache/omh/answers`. The one place
 * that says so.
 */
export function cacheDir(env: Env = process.env): string | undefined {
  const base = env['XDG_CACHE_HOME']?.startsWith('/') ? env['XDG_CACHE_HOME'] : env['HOME']?.startsWith('/') ? `${env['HOME']}/.cache` : undefined
  return base && `${base}/omh/answers`
}

/** Whether a descriptor is a terminal. `node:tty` loads some thirty modules, so it is asked only about a character device that is not /dev/null. */
function isatty(fd: number): boolean {
  try {
    const s = fstatSync(fd)
    if (!s.isCharacterDevice() || s.rdev === statSync('/dev/null').rdev) return false
  } catch {
    return false
  }
  return process.getBuiltinModule?.('node:tty').isatty(fd) ?? true
}

/** Everything besides files that can change an answer: arguments, directory, user, environment, terminal, Node. */
export function answerKey(argv: readonly string[], env: Env = process.env): string {
  const names = Object.keys(env)
    .filter((name) => name !== '_' && name !== 'OLDPWD')
    .sort()
  const tty = [0, 1, 2].map((fd) => isatty(fd))
  return JSON.stringify({
    format: FORMAT,
    argv,
    cwd: process.cwd(),
    uid: process.getuid?.(),
    node: [process.execPath, process.version, process.execArgv],
    tty,
    columns: [tty[1] ? process.stdout.columns : 0, tty[2] ? process.stderr.columns : 0],
    env: names.map((name) => `${name}=${env[name]}`),
  })
}

/**
 * What an entry keeps of its key: a digest, compared on use. The key holds the whole environment,
 * API keys and tokens among it, which must not lie in a file at rest.
 */
export function keyDigest(key: string): string {
  // 128 bits in four lanes, each FNV-1a from its own basis, mixed at the end (murmur3's fmix32):
  // `node:crypto` would cost this path more than the rest of a kept answer. Far fewer bits than
  // any key holds, so no key can be read back from it; enough that two keys never meet by chance.
  const lanes = [0x811c9dc5, 0x050c5d1f, 0x6b43a9b5, 0x1b873593]
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i)
    for (let n = 0; n < 4; n++) lanes[n] = Math.imul(lanes[n]! ^ c ^ (n << 8), 0x01000193 + n * 2)
  }
  return lanes
    .map((h) => {
      h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
      h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
      return ((h ^ (h >>> 16)) >>> 0).toString(16).padStart(8, '0')
    })
    .join('')
}

/** File name for a key: two 32-bit FNV-1a hashes. The entry holds the key's digest, compared on use. */
export function entryName(key: string): string {
  let a = 0x811c9dc5
  let b = 0x050c5d1f
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15)
  }
  return `${(a >>> 0).toString(16).padStart(8, '0')}${(b >>> 0).toString(16).padStart(8, '0')}.json`
}

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code

/**
 * What a path is now: kind, device, inode, size and both times, to the nanosecond; through a link,
 * the same of what it points at. A file edited, replaced, created or removed reads differently.
 */
export function fingerprint(file: string): string {
  let fp: string
  try {
    const s = lstatSync(file, { bigint: true, throwIfNoEntry: false })
    if (!s) return '-'
    fp = stamp(s)
    if (s.isSymbolicLink()) {
      const t = statSync(file, { bigint: true, throwIfNoEntry: false })
      fp += `>${t ? stamp(t) : '-'}`
    }
  } catch (error) {
    return `!${errorCode(error)}`
  }
  return fp
}

/**
 * What a directory is when only its being there was asked, not what it holds: kind, device and
 * inode (through a link, of its target too). Entries made or removed in it since do not count; it
 * made, removed or replaced does.
 */
export function presence(file: string): string {
  try {
    const s = lstatSync(file, { bigint: true, throwIfNoEntry: false })
    if (!s) return '-'
    const t = s.isSymbolicLink() ? statSync(file, { bigint: true, throwIfNoEntry: false }) : undefined
    return `${s.mode}:${s.dev}:${s.ino}${s.isSymbolicLink() ? `>${t ? `${t.mode}:${t.dev}:${t.ino}` : '-'}` : ''}`
  } catch (error) {
    return `!${errorCode(error)}`
  }
}

const stamp = (s: BigIntStats) => `${s.mode}:${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`

/** The cache directory, only when it is a real directory of this user's that no one else may read or write. */
export function privateDir(dir: string): boolean {
  try {
    const s = lstatSync(dir)
    return s.isDirectory() && s.uid === process.getuid?.() && (s.mode & 0o077) === 0
  } catch {
    return false
  }
}

/**
 * Whether entries can be kept in the directory: it is made if missing (with its parent, one level at a
 * time: a recursive mkdir can spin where a parent cannot be made, under /proc), and is the user's
 * own, private and writable. A run whose answer could not be kept is not recorded at all.
 */
export function canKeep(dir: string): boolean {
  const parts = dir.split('/')
  for (let n = parts.length - 2; n <= parts.length; n++) {
    try {
      mkdirSync(parts.slice(0, n).join('/'), { mode: 0o700 })
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') return false
    }
  }
  try {
    accessSync(dir, constants.W_OK)
  } catch {
    return false
  }
  return privateDir(dir)
}

/** Writes what a run printed, as it printed it. */
export function reprint(out: readonly Printed[]): void {
  for (const [fd, data, base64] of out) (fd === 1 ? process.stdout : process.stderr).write(base64 ? Buffer.from(data, 'base64') : data)
}

/**
 * Prints the kept answer for `key` and sets the exit code, when one exists and every file it read
 * is as it was; false otherwise. An entry that cannot be read, parsed or trusted is ignored (and
 * replaced by the next run).
 */
export function replay(key: string, dir: string | undefined): boolean {
  const entry = readEntry(key, dir)
  if (!entry || !Number.isInteger(entry.code) || !current(entry)) return false
  reprint(entry.out)
  process.exitCode = entry.code
  return true
}

/** The entry kept for `key`, when one can be read and trusted: this user's, private, and for this very key. */
export function readEntry(key: string, dir: string | undefined): (Entry & Record<string, unknown>) | undefined {
  if (!dir || !privateDir(dir)) return undefined
  let entry: unknown
  try {
    // Non-blocking: a FIFO planted at an entry's name would hold every run of its command open.
    const fd = openSync(`${dir}/${entryName(key)}`, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW)
    try {
      const s = fstatSync(fd)
      if (!s.isFile() || s.uid !== process.getuid?.() || (s.mode & 0o077) !== 0) return undefined
      entry = JSON.parse(readFileSync(fd, 'utf8'))
    } finally {
      closeSync(fd)
    }
  } catch {
    return undefined
  }
  if (!entry || typeof entry !== 'object') return undefined
  const held = entry as Record<string, unknown>
  return held['key'] === keyDigest(key) && Array.isArray(held['inputs']) && printed(held['out']) ? (held as Entry & Record<string, unknown>) : undefined
}

/** Whether `out` is output as a run printed it: `[fd, text, base64]` with fd 1 or 2. */
function printed(out: unknown): out is Printed[] {
  return Array.isArray(out) && out.every((o) => Array.isArray(o) && (o[0] === 1 || o[0] === 2) && typeof o[1] === 'string' && (o[2] === undefined || typeof o[2] === 'boolean'))
}

/** Whether an entry still stands: no look for idle session containers due, and every file it read as it was. */
export function current(entry: Entry): boolean {
  // Once a look for idle session containers is due, the command runs and looks.
  if (entry.dueAt !== undefined && !(Date.now() < entry.dueAt)) return false
  for (const input of entry.inputs) {
    if (!Array.isArray(input) || (input[2] === 'presence' ? presence(input[0]) : fingerprint(input[0])) !== input[1]) return false
  }
  return true
}

/** Writes an entry whole (temporary file, then rename), mode 0600 in a 0700 directory; keeps the newest `KEEP`. */
export function save(dir: string, key: string, entry: Entry & Record<string, unknown>): void {
  try {
    if (!canKeep(dir)) return
    const file = `${dir}/${entryName(key)}`
    const temp = `${file}.${process.pid}.tmp`
    writeFileSync(temp, JSON.stringify({ key: keyDigest(key), ...entry }), { mode: 0o600, flag: 'wx' })
    renameSync(temp, file)
    const names = readdirSync(dir)
    if (names.length > KEEP) {
      const aged = names.map((name) => ({ name, t: lstatSync(`${dir}/${name}`).mtimeMs })).sort((x, y) => x.t - y.t)
      for (const { name } of aged.slice(0, names.length - KEEP / 2)) unlinkSync(`${dir}/${name}`)
    }
  } catch {
    // A cache that cannot be written only costs the next run its speed.
  }
}
