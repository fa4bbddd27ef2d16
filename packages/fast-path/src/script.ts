/**
 * omh's bundle run as a script, with V8's code cache of the functions it ran.
 *
 * Node's compile cache (module.enableCompileCache) keeps what V8 compiled before a module ran: its
 * top-level code. Most of a short command's compiling is of the functions it then calls, about 60 ms
 * of `omh adapters ls`, and that cache never holds them. A script's code cache can be made after it
 * ran, holding every function compiled by then. A run whose kind of command is not yet in the cache
 * makes it again at exit; functions read from the cache count as compiled, so the cache grows to the
 * union of the commands a user runs, and stops changing once each has run.
 *
 * The cache is bytecode V8 runs without checking it, so it is kept only in a directory that is the
 * user's own and private, under the temporary directory as Node keeps its own compile cache; one
 * that cannot be had means the bundle is compiled as it runs, as without the cache.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { privateDir } from './answers.js'

/** The names the bundle (scripts/bundle.js) is built to find: `import(x)`, `import.meta.url` and a builtin taken by name are rewritten to the last three. */
const PARAMETERS = ['exports', 'require', 'module', '__filename', '__dirname', '__omhImport', '__omhMetaUrl', '__omhLazy'] as const

/** The bundles this process ran, by file: one run each, however many modules stand for it. */
const RAN = Symbol.for('omh.scripts')

/** Kinds of command past which the cache is no longer made again: each remake costs a run some milliseconds. */
const MOST_KINDS = 32

export interface ScriptOptions {
  /** What the bundle's `import()` calls: made in the module that stands for the bundle, so a specifier resolves from there. */
  readonly importer: (specifier: string) => Promise<unknown>
  /** What the bundle's `import.meta.url` is, and where its `require` resolves from: the module that stands for it. */
  readonly url: string
  /** Which kind of command this run is, as far as the functions it compiles go; by default, this process's (runKind). */
  readonly kind?: string
  /** Where the code cache is kept, undefined for none; by default, the user's (codeCacheDir). */
  readonly cacheDir?: string | undefined
}

interface Cached {
  /** What the cache was made for; anything else (another build, Node or set of flags) is not read. */
  readonly identity: string
  readonly kinds: readonly string[]
}

/** Where the user's code caches are kept; undefined on a system without user IDs. */
export function codeCachePath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const uid = process.getuid?.()
  if (uid === undefined) return undefined
  // os.tmpdir()'s answer, without loading node:os.
  const tmp = (env['TMPDIR']?.startsWith('/') ? env['TMPDIR'].replace(/(.)\/+$/, '$1') : undefined) ?? '/tmp'
  return `${tmp}/omh-code-${uid}`
}

/** The user's own directory for code caches, made if missing; undefined when it is not theirs alone. */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = codeCachePath(env)
  if (!dir) return undefined
  try {
    mkdirSync(dir, { mode: 0o700 })
  } catch {
    // Already there, or cannot be made: whether it is usable is asked below either way.
  }
  return privateDir(dir) ? dir : undefined
}

/** 32-bit FNV-1a, for a short file name; what a name stands for is checked in full inside the file. */
function fnv(text: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return (hash >>> 0).toString(16).padStart(8, '0')
}

/** A cache file: the length of a JSON header (Cached), the header, then V8's bytes. */
function readCache(file: string, identity: string): { cached: Cached; data: Buffer } | undefined {
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch {
    return undefined
  }
  if (bytes.length < 4) return undefined
  const length = bytes.readUInt32LE(0)
  if (4 + length > bytes.length) return undefined
  let cached: Partial<Cached>
  try {
    cached = JSON.parse(bytes.subarray(4, 4 + length).toString('utf8')) as Partial<Cached>
  } catch {
    return undefined
  }
  if (cached.identity !== identity || !Array.isArray(cached.kinds) || !cached.kinds.every((kind) => typeof kind === 'string')) return undefined
  return { cached: { identity, kinds: cached.kinds }, data: bytes.subarray(4 + length) }
}

/** Writes a cache file whole (a new file, then renamed over), and takes away those of other builds of the same bundle. */
function writeCache(dir: string, names: { prefix: string; build: string }, file: string, cached: Cached, data: Buffer): void {
  const header = Buffer.from(JSON.stringify(cached), 'utf8')
  const length = Buffer.alloc(4)
  length.writeUInt32LE(header.length, 0)
  const partial = `${file}.${process.pid}.partial`
  try {
    writeFileSync(partial, Buffer.concat([length, header, data]), { flag: 'wx', mode: 0o600 })
    renameSync(partial, file)
    for (const name of readdirSync(dir)) if (name.startsWith(names.prefix) && !name.startsWith(names.build) && name.endsWith('.v8')) rmSync(path.join(dir, name), { force: true })
  } catch {
    rmSync(partial, { force: true })
  }
}

/**
 * Runs the bundle at `file` as a script and returns its exports; once per process and file.
 * Its code cache is read from `options.cacheDir`, and made again at exit when there was none, V8
 * refused it, or this kind of command had not run with it.
 */
export function runScript(file: string, options: ScriptOptions): Record<string, unknown> {
  const ran = ((globalThis as { [RAN]?: Map<string, Record<string, unknown>> })[RAN] ??= new Map())
  const done = ran.get(file)
  if (done) return done
  const source = readFileSync(file, 'utf8')
  const cacheDir = 'cacheDir' in options ? options.cacheDir : codeCacheDir()
  const kind = options.kind ?? runKind(process.argv.slice(2))
  let cache: { file: string; prefix: string; build: string; identity: string; found: ReturnType<typeof readCache> } | undefined
  if (cacheDir) {
    const { ino, size, mtimeMs } = statSync(file)
    // V8 refuses a cache made by another V8 or with other flags, but takes one made from another
    // source of the same length: the build is told apart here, by the file's identity. Caches of
    // the same build for other Node versions or flags stay beside it; those of earlier builds go.
    const build = JSON.stringify([file, ino, size, mtimeMs])
    const runtime = JSON.stringify([process.version, process.arch, process.execArgv, process.env['NODE_OPTIONS'] ?? ''])
    const prefix = `${fnv(file)}-`
    const cacheFile = path.join(cacheDir, `${prefix}${fnv(build)}-${fnv(runtime)}.v8`)
    cache = { file: cacheFile, prefix, build: `${prefix}${fnv(build)}-`, identity: `${build}${runtime}`, found: readCache(cacheFile, `${build}${runtime}`) }
  }
  // Strict, as the modules it was bundled from are; on the first line, so lines keep their numbers.
  // Taken when the bundle runs, not at every start: the recorder in the boot file imports this module.
  const { Script } = process.getBuiltinModule('node:vm')
  const script = new Script(`(function (${PARAMETERS.join(', ')}) {'use strict';${source}\n})`, {
    filename: file,
    ...(cache?.found ? { cachedData: cache.found.data } : {}),
  })
  const module = { exports: {} as Record<string, unknown> }
  const run = script.runInThisContext() as (...args: unknown[]) => void
  run(module.exports, createRequire(options.url), module, file, path.dirname(file), options.importer, options.url, lazyBuiltin)
  ran.set(file, module.exports)

  const kinds = cache?.found && !script.cachedDataRejected ? cache.found.cached.kinds : []
  if (cache && (kinds.length === 0 || (!kinds.includes(kind) && kinds.length < MOST_KINDS))) {
    const { file: cacheFile, prefix, build, identity } = cache
    process.once('exit', () => writeCache(cacheDir!, { prefix, build }, cacheFile, { identity, kinds: [...kinds, kind] }, script.createCachedData()))
  }
  return module.exports
}

/** A builtin module loaded at the first read of one of its exports: the bundle reads them only so (scripts/bundle.js). */
function lazyBuiltin(id: string): object {
  let loaded: Record<string | symbol, unknown> | undefined
  const real = () => (loaded ??= process.getBuiltinModule(id) as Record<string | symbol, unknown>)
  return new Proxy({}, { get: (_, key) => real()[key], has: (_, key) => key in real() })
}

/** The kind of command `argv` runs, for the cache: its leading words, each a word or not. */
export function runKind(argv: readonly string[]): string {
  return argv
    .slice(0, 2)
    .map((word) => (/^(--?)?[a-z][a-z0-9-]*$/.test(word) ? word : '*'))
    .join(' ')
}
