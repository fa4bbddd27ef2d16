/**
 * What `omh doctor` measures inside the container. This module's compiled file
 * is mounted into the container and run with Node (`node runner.mjs plan.json`
 * prints a report as JSON), so it imports nothing but Node's built-ins. It
 * measures and reports; every verdict is made on the host.
 *
 * The same code runs on the host to digest what was staged, so both sides of
 * a comparison are computed by one piece of code.
 */
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { accessSync, constants, copyFileSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

/** A command run for its output, with lines for its stdin. */
export interface RunnerProbe {
  readonly run: string
  /** The command's positional parameters (`"$@"` in `run`). */
  readonly args?: readonly string[]
  readonly send?: readonly { readonly line: string; readonly until?: string }[]
  readonly env?: Readonly<Record<string, string>>
  /** Seconds. */
  readonly timeout: number
}

/** What to measure. Every list may be empty. */
export interface RunnerPlan {
  /** Paths to digest: a file's bytes and mode, or a directory's whole tree (symbolic links at the top followed). */
  readonly digest?: readonly string[]
  /** Files to hand to `argv` (the file's path appended) for a syntax check, e.g. `node --check`. */
  readonly syntax?: readonly { readonly path: string; readonly argv: readonly string[] }[]
  /** Executables to find on PATH (a name with a slash: at that path, from /work). */
  readonly bins?: readonly string[]
  /** Paths where a saved login must land: each is replaced by a renamed copy of itself, or created and removed again. */
  readonly renames?: readonly string[]
  /** Probes by key, run one after another. */
  readonly probes?: Readonly<Record<string, RunnerProbe>>
  /** A turn against the scripted model, after the probes. */
  readonly turn?: RunnerTurn
}

/** A harness turn: the scripted model (its file and script) on 127.0.0.1:`port`, then `run` as a probe with hook tracing on. */
export interface RunnerTurn {
  readonly model: string
  readonly script: string
  readonly port: number
  readonly run: string
  /** What a session passes the harness: `run`'s positional parameters. */
  readonly args?: readonly string[]
  readonly env?: Readonly<Record<string, string>>
  /** Seconds. */
  readonly timeout: number
}

/** What a turn left: the command's output, every request the model received, and the hooks that recorded their invocation, in order. */
export interface TurnOutput {
  readonly output: ProbeOutput
  readonly requests: readonly unknown[]
  readonly trace: readonly string[]
  readonly error?: string
}

/** A digest, or why there is none. */
export type Digest = { readonly sha256: string; readonly kind: 'file' | 'directory' } | { readonly error: string }

export interface RunnerReport {
  readonly digest: Readonly<Record<string, Digest>>
  readonly syntax: Readonly<Record<string, { readonly ok: boolean; readonly output: string }>>
  readonly bins: Readonly<Record<string, { readonly path?: string }>>
  readonly renames: Readonly<Record<string, { readonly ok: boolean; readonly detail: string }>>
  readonly probes: Readonly<Record<string, ProbeOutput>>
  readonly turn?: TurnOutput
}

const reason = (error: unknown): string => {
  const e = error as NodeJS.ErrnoException
  return e.code ? `${e.code}: ${e.message.replace(/^[A-Z]+: /, '')}` : String(e.message ?? error)
}

/** Digest of the bytes of a string or buffer, as `digestOf` computes it for a file. */
export const digestBytes = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex')

/**
 * A file's digest is its content's; a tree's covers every entry's relative
 * path, type, executable bit and content (a link's target), in sorted order,
 * so equal trees digest equal on any machine. A symbolic link at the top is
 * followed: staged tree entries are links into mounted sources.
 */
export function digestOf(root: string): Digest {
  try {
    const top = statSync(root)
    if (top.isFile()) return { sha256: digestBytes(readFileSync(root)), kind: 'file' }
    if (!top.isDirectory()) return { error: 'neither a file nor a directory' }
    const hash = createHash('sha256')
    const walk = (dir: string, rel: string) => {
      for (const name of readdirSync(dir).sort()) {
        const full = path.join(dir, name)
        const at = rel ? `${rel}/${name}` : name
        const info = lstatSync(full)
        if (info.isSymbolicLink()) hash.update(`l ${at} ${readlinkSync(full)}\n`)
        else if (info.isDirectory()) {
          hash.update(`d ${at}\n`)
          walk(full, at)
        } else {
          hash.update(`f ${at} ${(info.mode & 0o111) !== 0 ? 'x' : '-'} ${digestBytes(readFileSync(full))}\n`)
        }
      }
    }
    walk(root, '')
    return { sha256: hash.digest('hex'), kind: 'directory' }
  } catch (error) {
    return { error: reason(error) }
  }
}

/** Runs every measurement of the plan. Never rejects: a failure is part of the report. */
export async function measure(plan: RunnerPlan): Promise<RunnerReport> {
  const digest: Record<string, Digest> = {}
  for (const p of plan.digest ?? []) digest[p] = digestOf(p)

  const syntax: Record<string, { ok: boolean; output: string }> = {}
  for (const { path: file, argv } of plan.syntax ?? []) {
    const r = spawnSync(argv[0]!, [...argv.slice(1), file], { encoding: 'utf8' })
    syntax[file] = r.error
      ? { ok: false, output: reason(r.error) }
      : { ok: r.status === 0, output: `${r.stderr ?? ''}${r.stdout ?? ''}`.trim() }
  }

  const bins: Record<string, { path?: string }> = {}
  for (const bin of plan.bins ?? []) {
    // A name with a slash is a path (from /work, where probes run), never looked up on PATH.
    const found = (bin.includes('/') ? [path.resolve('/work', bin)] : (process.env['PATH'] ?? '').split(':').filter(Boolean).map((dir) => path.join(dir, bin)))
      .find((candidate) => {
        try {
          accessSync(candidate, constants.X_OK)
          return statSync(candidate).isFile()
        } catch {
          return false
        }
      })
    bins[bin] = found ? { path: found } : {}
  }

  // The rename a harness does when it saves a login: write beside, then
  // rename over. Over a bind-mounted file that fails (EBUSY) and the login is
  // lost at the next start. An existing token is replaced by identical bytes.
  const renames: Record<string, { ok: boolean; detail: string }> = {}
  for (const target of plan.renames ?? []) {
    const temp = `${target}.omh-doctor-${process.pid}`
    try {
      const existing = existsSync(target)
      if (existing) copyFileSync(target, temp)
      else writeFileSync(temp, '')
      renameSync(temp, target)
      if (!existing) rmSync(target)
      renames[target] = { ok: true, detail: existing ? 'replaced by a renamed copy of itself' : 'created by rename, then removed' }
    } catch (error) {
      rmSync(temp, { force: true })
      renames[target] = { ok: false, detail: reason(error) }
    }
  }

  const probes: Record<string, ProbeOutput> = {}
  for (const [key, probe] of Object.entries(plan.probes ?? {})) probes[key] = await runProbe(probe)

  return { digest, syntax, bins, renames, probes, ...(plan.turn ? { turn: await runTurn(plan.turn) } : {}) }
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [])

/** Starts the scripted model, runs the turn, stops the model, and reads what both left. */
async function runTurn(turn: RunnerTurn): Promise<TurnOutput> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'omh-turn-'))
  const [log, ready, trace] = ['requests.jsonl', 'port', 'trace'].map((f) => path.join(dir, f)) as [string, string, string]
  const model = spawn(process.execPath, [turn.model, '--script', turn.script, '--log', log, '--port', String(turn.port), '--ready', ready], { stdio: ['ignore', 'ignore', 'pipe'] })
  let modelErr = ''
  model.stderr.on('data', (d: Buffer) => (modelErr += d.toString('utf8')))
  try {
    for (let i = 0; i < 100 && !existsSync(ready) && model.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100))
    if (!existsSync(ready)) return { output: { exit: null, stdout: '', stderr: '' }, requests: [], trace: [], error: `the scripted model did not start: ${modelErr.trim() || 'no output'}` }
    const output = await runProbe({ run: turn.run, ...(turn.args ? { args: turn.args } : {}), env: { ...turn.env, OMH_HOOK_TRACE: trace, OMH_HOOK_WHEN_MET: '1' }, timeout: turn.timeout })
    return { output, requests: lines(log).map((l) => JSON.parse(l) as unknown), trace: lines(trace) }
  } finally {
    model.kill('SIGKILL')
  }
}

export interface ProbeOutput {
  exit: number | null
  stdout: string
  stderr: string
  timedOut?: boolean
  error?: string
}

/** How long output may still arrive after the command exited, before what it left running is killed. */
const AFTER_EXIT_MS = 2000

/**
 * Runs one probe: writes its stdin lines in order (each `until` waits for that
 * text on stdout), closes stdin after the last, and collects the output. The
 * command runs in a process group of its own, which is killed when it exits or
 * times out: harnesses leave servers behind.
 */
export function runProbe(probe: RunnerProbe): Promise<ProbeOutput> {
  return new Promise((resolve) => {
    let stdout = ''
    let stderr = ''
    let timedOut = false
    let exit: number | null = null
    const steps = [...(probe.send ?? [])]
    let waiting: string | undefined
    const proc = spawn('sh', ['-c', probe.run, 'sh', ...(probe.args ?? [])], { env: { ...process.env, ...probe.env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true })
    const kill = () => {
      try {
        process.kill(-proc.pid!, 'SIGKILL')
      } catch {
        // The group is gone already.
      }
    }
    const next = () => {
      while (steps.length) {
        const step = steps.shift()!
        proc.stdin.write(`${step.line}\n`)
        if (step.until !== undefined && !stdout.includes(step.until)) {
          waiting = step.until
          return
        }
      }
      proc.stdin.end()
    }
    proc.stdin.on('error', () => undefined)
    proc.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8')
      if (waiting !== undefined && stdout.includes(waiting)) {
        waiting = undefined
        next()
      }
    })
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    const timer = setTimeout(() => {
      timedOut = true
      kill()
    }, probe.timeout * 1000)
    let grace: NodeJS.Timeout | undefined
    proc.on('exit', (code) => {
      exit = code
      grace = setTimeout(kill, AFTER_EXIT_MS)
    })
    proc.on('error', (error) => {
      clearTimeout(timer)
      resolve({ exit: null, stdout, stderr, error: reason(error) })
    })
    proc.on('close', () => {
      clearTimeout(timer)
      clearTimeout(grace)
      kill()
      resolve({ exit: timedOut ? null : exit, stdout, stderr, ...(timedOut ? { timedOut } : {}) })
    })
    next()
  })
}

// `node runner.mjs plan.json`: the report as JSON on stdout. Node names a module by its real
// path, and the runner may be reached through a link (files copied into a volume).
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  // Not a top-level await: omh's bundle, which holds this module, is a script.
  const plan = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as RunnerPlan
  void measure(plan).then((report) => process.stdout.write(JSON.stringify(report)))
}
