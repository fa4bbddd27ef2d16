// Records what a read-only command read and printed, so the next run with the
// same key can be answered while those files are unchanged (bin/answers.js).
// Every path the process asks about is noted: through `node:fs` (settings,
// adapters, plugin manifests, catalogue files, repository files, oclif's own)
// and through the module loader (omh, plugins, what they import, and the
// `node_modules` directories a package is looked up in). A run that starts a
// process, opens a connection or writes a file is not kept: its answer is not
// a function of files alone. The one process allowed is git asked which
// commit a ref names, whose answer is a function of the files gitInputs notes.
//
// A launch is recorded the same way (`launch`), to keep what its next run
// needs to go straight to the engine's exec (bin/launches.js): it writes its
// own bookkeeping and asks its engine, so what it writes is left out of what
// it read, and the one program it may start besides git is the engine, whose
// answers the next run asks again. The launch offers what it did (see
// packages/sandbox/src/session/kept.ts) just before the exec, which is caught
// here as the next process started.
import fs from 'node:fs'
import module from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { fingerprint, presence, save } from './answers.js'

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

export async function record(key, dir, { launch = false } = {}) {
  if (!dir || typeof module.registerHooks !== 'function') return
  const started = Date.now()
  /** Paths a launch wrote: its own output, never its input. */
  const written = new Set()
  /** Programs a launch started besides git's ref queries. */
  const programs = new Set()
  let offer
  let exec
  let execNext = false
  if (launch) {
    globalThis[Symbol.for('omh.kept-launch')] = {
      offer(o) {
        offer = o
        execNext = true
      },
    }
  }
  const touched = new Set(['record.js', 'answers.js', 'launches.js', 'run.js'].map((name) => fileURLToPath(new URL(name, import.meta.url))))
  const out = []
  let kept = true

  const asPath = (p) => {
    if (p instanceof URL) p = p.protocol === 'file:' ? fileURLToPath(p) : undefined
    else if (Buffer.isBuffer(p)) p = p.toString()
    return typeof p === 'string' ? path.resolve(p) : undefined
  }
  /** Each path's fingerprint when the run first asked about it, before it read anything there. */
  const first = new Map()
  let fingerprinting = false
  const touch = (p) => {
    const abs = asPath(p)
    if (!abs || touched.has(abs) || MACHINE.has(abs)) return
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
  const spoil = () => {
    kept = false
  }
  /** Paths whose content was read, not only asked about: a directory listed, a file opened. */
  const contents = new Set()
  const read = (p) => {
    const abs = asPath(p)
    if (abs) contents.add(abs)
  }
  const wrote = (p) => {
    if (!launch) return spoil()
    const abs = asPath(p)
    if (abs) written.add(abs)
  }
  const writes = (flags) => typeof flags === 'number' ? (flags & 3) !== 0 || (flags & fs.constants.O_CREAT) !== 0 : typeof flags === 'string' && /[wa+]/.test(flags)

  // Before `node:fs` is wrapped: a stream to a file writes through fs.writeSync, taken when the stream is made.
  for (const [fd, stream] of [
    [1, process.stdout],
    [2, process.stderr],
  ]) {
    const write = stream.write
    stream.write = function (chunk, encoding, callback) {
      // oclif flushes stdout at its end by writing nothing.
      if (exec) (chunk?.length ? spoil : Boolean)()
      else if (typeof chunk === 'string' && (typeof encoding !== 'string' || /^utf-?8$/i.test(encoding))) out.push([fd, chunk, false])
      else out.push([fd, Buffer.from(chunk, typeof encoding === 'string' ? encoding : undefined).toString('base64'), true])
      return write.call(this, chunk, encoding, callback)
    }
  }

  const wrap = (target, name, before) => {
    const original = target[name]
    if (typeof original !== 'function') return
    const wrapped = function (...args) {
      before(args)
      return original.apply(this, args)
    }
    // Every own property, symbols and non-enumerable ones too: `util.promisify.custom` on
    // execFile is what makes its promise resolve to { stdout, stderr }.
    Object.defineProperties(wrapped, Object.getOwnPropertyDescriptors(original))
    target[name] = wrapped
  }
  for (const target of [fs, fs.promises]) {
    for (const base of READS) {
      for (const name of target === fs ? [base, `${base}Sync`] : [base]) {
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
      for (const name of target === fs ? [base, `${base}Sync`] : [base]) {
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
  for (const target of [fs, fs.promises]) {
    for (const name of Object.keys(target)) {
      if (typeof target[name] === 'function' && /^[a-z]/.test(name) && !known.has(name)) wrap(target, name, spoil)
    }
  }
  for (const name of ['realpathSync', 'realpath']) {
    const native = fs[name].native
    if (native) {
      fs[name].native = function (...args) {
        touch(args[0])
        return native.apply(this, args)
      }
    }
  }
  // Output written past the streams; anything else written by descriptor spoils the run.
  for (const name of ['write', 'writeSync']) {
    wrap(fs, name, (args) => {
      if ((args[0] === 1 || args[0] === 2) && exec) spoil()
      else if (args[0] === 1 || args[0] === 2) out.push([args[0], Buffer.from(typeof args[1] === 'string' ? args[1] : args[1]).toString('base64'), true])
      else spoil()
    })
  }
  const childProcess = await import('node:child_process')
  // Unwrapped: the engine is asked at the end, when nothing is recorded any more.
  const { spawnSync } = childProcess.default
  const repos = new Set()
  for (const name of SPAWNS) {
    wrap(childProcess.default, name, (args) => {
      const cwd = name === 'execFile' ? refQuery(args) : undefined
      if (cwd !== undefined) repos.add(cwd)
      else if (!launch || name !== 'spawn' || typeof args[0] !== 'string' || !Array.isArray(args[1])) spoil()
      else {
        programs.add(args[0])
        if (execNext) {
          execNext = false
          exec = { file: args[0], args: [...args[1]], options: args[2] ?? {} }
        }
      }
    })
  }
  const net = await import('node:net')
  for (const name of ['connect', 'createConnection', 'createServer']) wrap(net.default, name, spoil)
  wrap(net.default.Socket.prototype, 'connect', spoil)
  const workers = await import('node:worker_threads')
  const { Worker } = workers.default
  workers.default.Worker = class extends Worker {
    constructor(...args) {
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
  const { omhStateOf } = await import('@omh/kernel/locations')
  const { idleCheckDueAt } = await import('@omh/sandbox/idle-due')

  process.on('exit', (code) => {
    if (!kept || (launch && !keptLaunch())) return
    for (const cwd of repos) if (!gitInputs(cwd, touch)) return
    // Every command looks for idle session containers when a look is due; a kept answer stands only until then.
    const dueAt = idleCheckDueAt(omhStateOf(process.env))
    const inputs = []
    // A time with nothing below the millisecond comes from a coarse clock (or a coarse file system).
    const settled = (ns) => BigInt(started - (ns % 1_000_000n === 0n ? SETTLED_MS : SETTLED_FINE_MS)) * 1_000_000n
    for (const file of touched) {
      if (written.has(file)) continue
      // A launch that only asked whether a directory is there (the repository's `.git`, a
      // package's directory) does not depend on what comes and goes in it.
      if (launch && !contents.has(file) && fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) {
        inputs.push([file, presence(file), 'presence'])
        continue
      }
      const fp = fingerprint(file)
      // A launch writes beside what it reads (its run directory); it is held to the files it read.
      if (first.has(file) && first.get(file) !== fp && !(launch && fs.statSync(file, { throwIfNoEntry: false })?.isDirectory())) return
      // mode:dev:ino:size:mtime:ctime, the times in nanoseconds
      for (const part of fp.split('>')) {
        const fields = part.split(':')
        if (fields.length === 6 && [BigInt(fields[4]), BigInt(fields[5])].some((ns) => ns > settled(ns))) return
      }
      inputs.push([file, fp])
    }
    if (!launch) return save(dir, key, { inputs, out, code: code ?? 0, ...(dueAt === undefined ? {} : { dueAt }) })
    // The engine is asked now what the next run will ask it: that answer, and no other, lets it go straight to the exec.
    const env = { ...process.env, ...exec.env }
    for (const name of exec.unset) delete env[name]
    const check = offer.check
    if (!Array.isArray(check) || !check.every((arg) => typeof arg === 'string')) return
    const asked = spawnSync(exec.file, check, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 })
    // The launch has just run in these containers: this answer is what "still running, the same" looks like.
    const lines = asked.status === 0 ? asked.stdout.trim().split('\n') : []
    if (lines.length !== offer.containers.length) return
    save(dir, key, { inputs, out, exec: { file: exec.file, args: exec.args, env: exec.env, unset: exec.unset, stdio: exec.stdio }, check: { args: check, answer: asked.stdout }, offer, ...(dueAt === undefined ? {} : { dueAt }) })
  })

  /** Whether the launch offered a relaunch and ran its exec as one that can be repeated; `exec` then holds it whole. */
  function keptLaunch() {
    if (!offer || !exec) return false
    if ([...programs].some((file) => file !== exec.file)) return false
    const { env: full, stdio, signal, ...rest } = exec.options
    if (signal || Object.keys(rest).length || !Array.isArray(stdio) || !stdio.every((s) => s === 'inherit' || s === 'ignore') || typeof full !== 'object') return false
    // The environment as a difference from this one: the next run has the same (it is part of the key).
    const env = {}
    for (const [name, value] of Object.entries(full)) if (value !== undefined && process.env[name] !== value) env[name] = String(value)
    const unset = Object.keys(process.env).filter((name) => full[name] === undefined)
    exec = { file: exec.file, args: exec.args, env, unset, stdio }
    return true
  }
}

/** The settings omh passes every host git call; any other `-c` may change an answer in ways no file shows. */
const NEUTRAL = new Set(['core.hooksPath=/dev/null', 'core.fsmonitor=false', 'core.pager=cat', 'protocol.file.allow=never', 'advice.detachedHead=false', 'submodule.recurse=false', 'diff.ignoreSubmodules=all', 'status.submoduleSummary=false'])

/**
 * The repository of a git call that only reads refs (finding the default
 * branch), or undefined for anything else. Its answer is a function of the
 * repository's ref and config files, which gitInputs notes.
 */
function refQuery([file, args, options]) {
  if (file !== 'git' || !Array.isArray(args) || typeof options?.cwd !== 'string') return undefined
  if (Object.keys(options.env ?? {}).some((name) => name.startsWith('GIT_') && !/^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)$|^GIT_TERMINAL_PROMPT$/.test(name))) return undefined
  let n = 0
  while (args[n] === '-c' && NEUTRAL.has(args[n + 1])) n += 2
  const rest = args.slice(n).join(' ')
  const ref = '[A-Za-z0-9/._-]+'
  const reads = [
    new RegExp(`^symbolic-ref --quiet ${ref}$`),
    new RegExp(`^rev-parse --verify --quiet ${ref}(\\^\\{commit\\})?$`),
    /^for-each-ref --count=1 --format=%\(refname\) refs\/heads$/,
  ]
  return reads.some((re) => re.test(rest)) ? path.resolve(options.cwd) : undefined
}

/** Refs and config files at most; a repository with more is not worth checking on every run. */
const MOST_REFS = 2000

/**
 * Notes every file git reads to answer a ref query in `cwd`: the git binary
 * PATH finds, the `.git` it discovers, HEAD, config (global and system too),
 * packed refs and every loose ref. False when the answer cannot be tied to
 * files: an `include` in a config, or too many refs.
 */
function gitInputs(cwd, touch) {
  for (const dir of (process.env.PATH ?? '').split(':')) {
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
  const home = process.env.HOME ?? ''
  const xdg = process.env.XDG_CONFIG_HOME || path.join(home, '.config')
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
  const walk = (dir) => {
    touch(dir)
    let names
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
