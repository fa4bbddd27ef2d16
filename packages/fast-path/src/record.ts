/**
 * Records what a read-only command read and printed, so the next run with the same key can be
 * answered while those files are unchanged (answers.ts). Every path the process asks about is
 * noted: through `node:fs` (settings, adapters, plugin manifests, catalogue files, repository
 * files, oclif's own) and through the module loader (omh, plugins, what they import, and the
 * `node_modules` directories a package is looked up in). A run that starts a process, opens a
 * connection or writes a file is not kept: its answer is not a function of files alone. The one
 * process allowed is git asked which commit a ref names, whose answer is a function of the files
 * gitInputs notes.
 *
 * A launch is recorded the same way (`launch`), to keep what its next run needs to go straight to
 * the engine's exec (launches.ts): it writes its own bookkeeping and asks its engine, so what it
 * writes is left out of what it read, and the one program it may start besides git is the
 * engine's client. Just before the harness starts, the launch offers what it did, the exec its
 * runtime runs included, as data (`KeptLaunchOffer`); the recording stands only when that exec is
 * the one process the launch then started.
 *
 * Longer than 400 lines: one recorder, whose wrapping of `node:fs`, the loader and the process
 * functions, and whose check at exit, make sense only together.
 */
import fs from 'node:fs'
import module from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { KEPT_LAUNCH, type KeptLaunchListener, type KeptLaunchOffer } from '@omh/sandbox/kept'
import { fingerprint, presence, save, type Input, type Printed } from './answers.js'
import type { KeptExec } from './launches.js'
import { codeCachePath } from './script.js'

/** A file changed this recently may change again within the file system's time resolution, unseen. */
const SETTLED_MS = 2000
/**
 * The same on a file system that keeps times finer than a millisecond: its clock moves every tick
 * of the kernel's (a few ms), so a change a tenth of a second old cannot hide another.
 */
const SETTLED_FINE_MS = 100

const READS = ['access', 'exists', 'lstat', 'open', 'openAsBlob', 'opendir', 'readdir', 'readFile', 'readlink', 'realpath', 'stat', 'statfs', 'createReadStream', 'watch', 'watchFile']
const WRITES = [
  'appendFile', 'chmod', 'chown', 'copyFile', 'cp', 'createWriteStream', 'fchmod', 'fchown', 'ftruncate', 'futimes', 'lchmod', 'lchown',
  'link', 'lutimes', 'mkdir', 'mkdtemp', 'mkdtempDisposable', 'rename', 'rm', 'rmdir', 'symlink', 'truncate', 'unlink', 'utimes', 'writeFile', 'writev',
]
/**
 * Calls on a descriptor an `open` above already noted (or on none): nothing new is read by path.
 * `write` and `writeSync` are wrapped on their own, for output.
 */
const BY_DESCRIPTOR = ['close', 'fdatasync', 'fstat', 'fsync', 'read', 'readv', 'unwatchFile', 'write']
/** Reads that only ask what a path is: of a directory asked only these, a launch keeps its presence alone. */
const ASKS = ['access', 'exists', 'lstat', 'realpath', 'stat', 'statfs']
const SPAWNS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']

/** Kernel files that say what this machine is (is-wsl, under oclif, asks them): the same until a reboot. */
const MACHINE = new Set(['/dev/null', '/proc/version', '/proc/sys/fs/binfmt_misc/WSLInterop'])

type Functions = Record<string, unknown>
type Write = (this: NodeJS.WriteStream, chunk: unknown, encoding?: unknown, callback?: unknown) => boolean

export interface RecordOptions {
  /** A launch rather than a read-only command. */
  readonly launch?: boolean
  /** The fast path's own files, loaded before the recording starts: inputs of every answer, checked at its end. */
  readonly own?: readonly string[]
}

export async function record(key: string, dir: string | undefined, options: RecordOptions = {}): Promise<void> {
  const launch = options.launch ?? false
  if (!dir || typeof module.registerHooks !== 'function') return
  const started = Date.now()
  /** Paths a launch wrote: its own output, never its input. */
  const written = new Set<string>()
  /** Programs a launch started besides git's ref queries. */
  const programs: { file: string; args: readonly string[] }[] = []
  let offer: KeptLaunchOffer | undefined
  /** Once the offered exec has started, nothing more may be printed or started. */
  let execStarted = false
  if (launch) {
    const listener: KeptLaunchListener = {
      offer(o) {
        offer = o
      },
    }
    ;(globalThis as { [KEPT_LAUNCH]?: KeptLaunchListener })[KEPT_LAUNCH] = listener
  }
  const touched = new Set([fileURLToPath(import.meta.url), ...(options.own ?? [])])
  const out: Printed[] = []
  let kept = true

  const asPath = (p: unknown): string | undefined => {
    if (p instanceof URL) p = p.protocol === 'file:' ? fileURLToPath(p) : undefined
    else if (Buffer.isBuffer(p)) p = p.toString()
    return typeof p === 'string' ? path.resolve(p) : undefined
  }
  /** Each path's fingerprint when the run first asked about it, before it read anything there. */
  const first = new Map<string, string>()
  let fingerprinting = false
  const spoil = () => {
    kept = false
  }
  // omh's compiled code (script.ts) decides nothing a command says: neither an input nor a write of one.
  const codeCache = codeCachePath()
  const compiled = (abs: string) => codeCache !== undefined && (abs === codeCache || abs.startsWith(`${codeCache}/`))
  const touch = (p: unknown) => {
    const abs = asPath(p)
    if (!abs || touched.has(abs) || MACHINE.has(abs) || compiled(abs)) return
    // Devices, and the kernel's views of processes and of itself, answer differently with nothing
    // on disk changed: `/dev/stdin`, `/proc/self/root/…`. A run that reads one is not kept.
    // `/dev/shm` is a file system like any other, where a profile or a repository may live.
    if (/^\/(proc|sys|dev)(\/|$)/.test(abs) && !/^\/dev\/shm\//.test(abs)) return spoil()
    touched.add(abs)
    // What was read is what the run saw then: a parent link switched while it ran would otherwise
    // have the answer it gave kept under what the files are at its end.
    if (fingerprinting) return
    fingerprinting = true
    try {
      first.set(abs, fingerprint(abs))
    } finally {
      fingerprinting = false
    }
  }
  /** Paths whose content was read, not only asked about: a directory listed, a file opened. */
  const contents = new Set<string>()
  const read = (p: unknown) => {
    const abs = asPath(p)
    if (abs) contents.add(abs)
  }
  const wrote = (p: unknown) => {
    const abs = asPath(p)
    if (abs && compiled(abs)) return
    if (!launch) return spoil()
    if (abs) written.add(abs)
  }
  const writes = (flags: unknown) => (typeof flags === 'number' ? (flags & 3) !== 0 || (flags & fs.constants.O_CREAT) !== 0 : typeof flags === 'string' && /[wa+]/.test(flags))

  // Before `node:fs` is wrapped: a stream to a file writes through fs.writeSync, taken when the stream is made.
  for (const [fd, stream] of [
    [1, process.stdout],
    [2, process.stderr],
  ] as const) {
    const write = stream.write as Write
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, encoding?: unknown, callback?: unknown) {
      // oclif flushes stdout at its end by writing nothing.
      if (execStarted) ((chunk as { length?: number } | undefined)?.length ? spoil : Boolean)()
      else if (typeof chunk === 'string' && (typeof encoding !== 'string' || /^utf-?8$/i.test(encoding))) out.push([fd, chunk, false])
      else out.push([fd, (typeof chunk === 'string' ? Buffer.from(chunk, encoding as BufferEncoding) : Buffer.from(chunk as Uint8Array)).toString('base64'), true])
      return write.call(this, chunk, encoding, callback)
    } as typeof stream.write
  }

  const wrap = (target: Functions, name: string, before: (args: unknown[]) => void) => {
    const original = target[name]
    if (typeof original !== 'function') return
    const wrapped = function (this: unknown, ...args: unknown[]) {
      before(args)
      return (original as (...a: unknown[]) => unknown).apply(this, args)
    }
    // Every own property, symbols and non-enumerable ones too: `util.promisify.custom` on
    // execFile is what makes its promise resolve to { stdout, stderr }.
    Object.defineProperties(wrapped, Object.getOwnPropertyDescriptors(original))
    target[name] = wrapped
  }
  const targets = [fs, fs.promises] as unknown as Functions[]
  for (const target of targets) {
    const names = (base: string) => (target === targets[0] ? [base, `${base}Sync`] : [base])
    for (const base of READS) {
      for (const name of names(base)) {
        wrap(target, name, (args) => {
          // Where a descriptor this run opened leads: the file behind it was noted by its own path.
          if (base === 'readlink' && /^\/proc\/self\/fd\/\d+$/.test(String(args[0]))) return
          touch(args[0])
          if (!ASKS.includes(base)) read(args[0])
          if (base === 'open' && writes(args[1])) wrote(args[0])
        })
      }
    }
    for (const base of WRITES) {
      for (const name of names(base)) {
        wrap(target, name, (args) => {
          wrote(args[0])
          // The second path of a rename, copy or link is written too.
          if (/^(rename|copyFile|cp|link|symlink)$/.test(base)) wrote(args[1])
        })
      }
    }
  }
  // Every other function of `node:fs` (one added in a later Node: `glob`) reads or writes in a
  // way not noted here, so a run that calls one is not kept: the list fails closed.
  const known = new Set([...READS, ...WRITES, ...BY_DESCRIPTOR].flatMap((base) => [base, `${base}Sync`]))
  for (const target of targets) {
    for (const name of Object.keys(target)) {
      if (typeof target[name] === 'function' && /^[a-z]/.test(name) && !known.has(name)) wrap(target, name, spoil)
    }
  }
  for (const name of ['realpathSync', 'realpath'] as const) {
    const native = fs[name].native as (...args: unknown[]) => unknown
    if (native) {
      ;(fs[name] as { native: unknown }).native = function (this: unknown, ...args: unknown[]) {
        touch(args[0])
        return native.apply(this, args)
      }
    }
  }
  // Output written past the streams; anything else written by descriptor spoils the run.
  for (const name of ['write', 'writeSync']) {
    wrap(fs as unknown as Functions, name, (args) => {
      const fd = args[0]
      if ((fd === 1 || fd === 2) && execStarted) spoil()
      else if (fd === 1 || fd === 2) out.push([fd, Buffer.from(args[1] as string | Uint8Array).toString('base64'), true])
      else spoil()
    })
  }
  const childProcess = (await import('node:child_process')).default
  // Unwrapped: the engine is asked at the end, when nothing is recorded any more.
  const { spawnSync } = childProcess
  const repos = new Set<string>()
  for (const name of SPAWNS) {
    wrap(childProcess as unknown as Functions, name, (args) => {
      const cwd = name === 'execFile' ? refQuery(args) : undefined
      if (cwd !== undefined) repos.add(cwd)
      else if (!launch || name !== 'spawn' || typeof args[0] !== 'string' || !Array.isArray(args[1])) spoil()
      else {
        programs.push({ file: args[0], args: args[1] as string[] })
        const exec = offer?.exec
        if (exec && args[0] === exec.file && sameStrings(args[1] as string[], exec.args)) execStarted = true
      }
    })
  }
  const net = (await import('node:net')).default
  for (const name of ['connect', 'createConnection', 'createServer']) wrap(net as unknown as Functions, name, spoil)
  wrap(net.Socket.prototype as unknown as Functions, 'connect', spoil)
  const workers = (await import('node:worker_threads')).default
  const { Worker } = workers
  ;(workers as { Worker: unknown }).Worker = class extends Worker {
    constructor(...args: ConstructorParameters<typeof Worker>) {
      spoil()
      super(...args)
    }
  }
  module.syncBuiltinESMExports()

  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context)
      if (resolved.url.startsWith('file:')) {
        const file = fileURLToPath(resolved.url)
        touch(file)
        if (context.parentURL?.startsWith('file:') && !/^(\.|\/|#|[a-z]+:)/i.test(specifier)) {
          // A package installed in a nearer node_modules later would be found instead.
          const name = specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')
          for (let d = path.dirname(fileURLToPath(context.parentURL)); ; d = path.dirname(d)) {
            const candidate = path.join(d, 'node_modules', name)
            touch(candidate)
            if (file.startsWith(`${candidate}/`)) {
              touch(path.join(candidate, 'package.json'))
              break
            }
            if (path.dirname(d) === d) break
          }
        }
      }
      return resolved
    },
  })

  // After the hooks, so a change to either is seen like any other module's.
  const { omhStateOf, statePath } = await import('@omh/kernel/locations')
  const { CHECKED, idleCheckDueAt } = await import('@omh/sandbox/idle-due')
  // The stamp of the last look for idle containers is omh's own, and what it decides is kept as
  // `dueAt`: a look that stamps it again does not spoil the answers of the commands after it.
  const stamp = statePath(omhStateOf(process.env), 'run', CHECKED)

  process.on('exit', (code) => {
    if (!kept) return
    const exec = launch ? keptExec() : undefined
    if (launch && !exec) return
    for (const cwd of repos) if (!gitInputs(cwd, touch)) return
    // Every command looks for idle session containers when a look is due; a kept answer stands only until then.
    const dueAt = idleCheckDueAt(omhStateOf(process.env))
    const inputs: Input[] = []
    // A time with nothing below the millisecond comes from a coarse clock (or a coarse file system).
    const settled = (ns: bigint) => BigInt(started - (ns % 1_000_000n === 0n ? SETTLED_MS : SETTLED_FINE_MS)) * 1_000_000n
    for (const file of touched) {
      if (written.has(file) || file === stamp) continue
      // A run that only asked whether a directory is there (the repository's `.git`, a package's
      // directory, omh's state) does not depend on what comes and goes in it: what it read there
      // was noted by its own path. So omh's own writes beside it (a launch's bookkeeping) do not
      // spoil the answers of the commands after them.
      if (!contents.has(file) && fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) {
        inputs.push([file, presence(file), 'presence'])
        continue
      }
      const fp = fingerprint(file)
      // A launch writes beside what it reads (its run directory); it is held to the files it read.
      if (first.has(file) && first.get(file) !== fp && !(launch && fs.statSync(file, { throwIfNoEntry: false })?.isDirectory())) return
      // mode:dev:ino:size:mtime:ctime, the times in nanoseconds
      for (const part of fp.split('>')) {
        const fields = part.split(':')
        if (fields.length === 6 && [BigInt(fields[4]!), BigInt(fields[5]!)].some((ns) => ns > settled(ns))) return
      }
      inputs.push([file, fp])
    }
    const due = dueAt === undefined ? {} : { dueAt }
    if (!exec || !offer) return save(dir, key, { inputs, out, code: code ?? 0, ...due })
    // The engine is asked now what the next run will ask it: that answer, and no other, lets it go straight to the exec.
    const env: Record<string, string | undefined> = { ...process.env, ...exec.env }
    for (const name of exec.unset) delete env[name]
    const asked = spawnSync(exec.file, offer.check, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 })
    // The launch has just run in these containers: this answer is what "still running, the same" looks like.
    const lines = asked.status === 0 ? asked.stdout.trim().split('\n') : []
    if (lines.length !== offer.containers.length) return
    save(dir, key, { inputs, out, exec, check: { args: offer.check, answer: asked.stdout }, offer, ...due })
  })

  /**
   * The offered exec as a relaunch repeats it, when the launch started it and no other program
   * besides: the environment as a difference from this one (the next run has the same, it is part
   * of the key).
   */
  function keptExec(): KeptExec | undefined {
    const offered = offer?.exec
    if (!offered || !execStarted || programs.some((p) => p.file !== offered.file)) return undefined
    const env: Record<string, string> = {}
    for (const [name, value] of Object.entries(offered.env)) if (process.env[name] !== value) env[name] = value
    const unset = Object.keys(process.env).filter((name) => offered.env[name] === undefined)
    return { file: offered.file, args: offered.args, env, unset, stdio: offered.stdio }
  }
}

const sameStrings = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((s, n) => s === b[n])

/** The settings omh passes every host git call; any other `-c` may change an answer in ways no file shows. */
export const NEUTRAL = new Set(['core.hooksPath=/dev/null', 'core.fsmonitor=false', 'core.pager=cat', 'protocol.file.allow=never', 'advice.detachedHead=false', 'submodule.recurse=false', 'diff.ignoreSubmodules=all', 'status.submoduleSummary=false'])

/**
 * The repository of a git call that only reads refs (finding the default branch), or undefined for
 * anything else. Its answer is a function of the repository's ref and config files, which gitInputs
 * notes.
 */
function refQuery([file, args, options]: unknown[]): string | undefined {
  const cwd = (options as { cwd?: unknown } | undefined)?.cwd
  if (file !== 'git' || !Array.isArray(args) || typeof cwd !== 'string') return undefined
  const env = (options as { env?: Record<string, unknown> }).env ?? {}
  if (Object.keys(env).some((name) => name.startsWith('GIT_') && !/^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)$|^GIT_TERMINAL_PROMPT$/.test(name))) return undefined
  let n = 0
  while (args[n] === '-c' && NEUTRAL.has(args[n + 1] as string)) n += 2
  const rest = args.slice(n).join(' ')
  const ref = '[A-Za-z0-9/._-]+'
  const reads = [
    new RegExp(`^symbolic-ref --quiet ${ref}$`),
    new RegExp(`^rev-parse --verify --quiet ${ref}(\\^\\{commit\\})?$`),
    /^for-each-ref --count=1 --format=%\(refname\) refs\/heads$/,
  ]
  return reads.some((re) => re.test(rest)) ? path.resolve(cwd) : undefined
}

/** Refs and config files at most; a repository with more is not worth checking on every run. */
const MOST_REFS = 2000

/**
 * Notes every file git reads to answer a ref query in `cwd`: the git binary PATH finds, the `.git`
 * it discovers, HEAD, config (global and system too), packed refs and every loose ref. False when
 * the answer cannot be tied to files: an `include` in a config, or too many refs.
 */
function gitInputs(cwd: string, touch: (p: string) => void): boolean {
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    const bin = path.join(dir || '.', 'git')
    touch(bin)
    if (fs.statSync(bin, { throwIfNoEntry: false })?.isFile()) break
  }
  let top = cwd
  while (!fs.existsSync(path.join(top, '.git'))) {
    touch(path.join(top, '.git'))
    if (path.dirname(top) === top) return false
    top = path.dirname(top)
  }
  const dot = path.join(top, '.git')
  touch(dot)
  let gitDir = dot
  if (fs.statSync(dot).isFile()) {
    const named = /^gitdir: (.+)$/m.exec(fs.readFileSync(dot, 'utf8'))?.[1]
    if (!named) return false
    gitDir = path.resolve(top, named.trim())
  }
  const commonFile = path.join(gitDir, 'commondir')
  touch(commonFile)
  const common = fs.existsSync(commonFile) ? path.resolve(gitDir, fs.readFileSync(commonFile, 'utf8').trim()) : gitDir
  const home = process.env['HOME'] ?? ''
  const xdg = process.env['XDG_CONFIG_HOME'] || path.join(home, '.config')
  const configs = [path.join(common, 'config'), path.join(gitDir, 'config.worktree'), path.join(home, '.gitconfig'), path.join(xdg, 'git/config'), '/etc/gitconfig']
  for (const file of configs) {
    touch(file)
    let text = ''
    try {
      text = fs.readFileSync(file, 'utf8')
    } catch {
      // A config file that is not there is noted as missing; one that appears is a change.
    }
    if (/^\s*\[\s*include/im.test(text)) return false
  }
  for (const file of [path.join(gitDir, 'HEAD'), path.join(common, 'packed-refs')]) touch(file)
  let count = 0
  const walk = (dir: string): boolean => {
    touch(dir)
    let names: fs.Dirent[]
    try {
      names = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return true
    }
    for (const entry of names) {
      if (++count > MOST_REFS) return false
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (!walk(full)) return false
      } else touch(full)
    }
    return true
  }
  return [...new Set([path.join(common, 'refs'), path.join(gitDir, 'refs'), path.join(common, 'reftable')])].every(walk)
}
