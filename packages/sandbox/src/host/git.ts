/**
 * git, run on the host for omh's own reading and writing of repositories: with the user's git but
 * none of a repository's hooks, filters or helpers, which are its code.
 */
import { execFile } from 'node:child_process'
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import path from 'node:path'
import { FILE_NOT_REGULAR, GIT_FAILED, OmhError } from '@omh/plugin-api'

/** The outcome of one git call that was allowed to fail. */
export interface GitResult {
  readonly ok: boolean
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** A git call that failed: the command, and what git said. */
export class GitError extends Error {
  override readonly name = 'GitError'
  constructor(
    readonly args: readonly string[],
    readonly result: GitResult,
  ) {
    super(`git ${args.join(' ')} exited ${result.code}: ${result.stderr.trim().split('\n').slice(-3).join(' ') || '(no message)'}`)
  }
}

/**
 * Settings that keep a host-side git call from running anything a sandbox
 * could have planted: the agent writes the worktree (including any
 * `node_modules/.bin` a hook would call), so hooks and filesystem monitors
 * stay off, and nothing pages. A directory holding a repository of its own (a
 * submodule, or one the agent made with `git init`) is never entered: its
 * config, hooks and filters would all be the agent's.
 */
export const NEUTRAL = [
  '-c', 'core.hooksPath=/dev/null',
  '-c', 'core.fsmonitor=false',
  '-c', 'core.pager=cat',
  '-c', 'protocol.file.allow=never',
  '-c', 'advice.detachedHead=false',
  '-c', 'submodule.recurse=false',
  '-c', 'diff.ignoreSubmodules=all',
  '-c', 'status.submoduleSummary=false',
] as const

/**
 * For `diff` and `log -p` over files the agent wrote: no external diff program
 * and no textconv, whichever config or attribute names one.
 */
export const NO_DIFF_PROGRAMS = ['--no-ext-diff', '--no-textconv'] as const

/** For the sandbox's own commits, which are never the user's to sign. */
export const UNSIGNED = ['-c', 'commit.gpgsign=false', '-c', 'tag.gpgsign=false'] as const

/**
 * The environment for host git: the caller's, minus every `GIT_*` variable
 * that could point git at another repository, index or work tree. The
 * identity variables stay, so a commit carries the user's name.
 */
export function gitEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue
    if (key.startsWith('GIT_') && !/^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)$/.test(key)) continue
    out[key] = value
  }
  out['GIT_TERMINAL_PROMPT'] = '0'
  return out
}

export interface GitOptions {
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  /** Directories git should trust although another user owns them (omh's own worktrees and shadows). */
  readonly trust?: readonly string[]
  /** Extra variables, e.g. a temporary `GIT_INDEX_FILE`. */
  readonly extraEnv?: Readonly<Record<string, string>>
  readonly input?: string
  /**
   * The call reads files the agent wrote (the worktree, its `.gitattributes`):
   * every filter driver git's config defines is switched off for it, since an
   * attribute the agent wrote picks which one runs on what.
   */
  readonly agentFiles?: boolean
}

/** How long the question of which filter drivers exist may take. */
const CONFIG_TIMEOUT_MS = 30_000

// Filter drivers per directory, asked once per process: the config is the user's and does not change under one command.
const drivers = new Map<string, Promise<Record<string, string> | GitResult>>()

/**
 * Variables that switch off every filter driver the config at `cwd` defines
 * (`filter.<name>.clean`, `smudge`, `process`, and `required` so a missing
 * one is no failure), passed as `GIT_CONFIG_KEY_n`, which takes a driver name
 * as it is, `=` and all; or git's failure to say, which fails the call that
 * needed them rather than letting it run with a filter on.
 */
function neutralDrivers(options: GitOptions, trust: readonly string[]): Promise<Record<string, string> | GitResult> {
  const known = drivers.get(options.cwd)
  if (known) return known
  const asked = new Promise<Record<string, string> | GitResult>((resolve) => {
    execFile(
      'git',
      [...NEUTRAL, ...trust, 'config', '-z', '--name-only', '--get-regexp', '^filter\\.'],
      { cwd: options.cwd, env: gitEnv(options.env), maxBuffer: 1024 * 1024, encoding: 'utf8', timeout: CONFIG_TIMEOUT_MS },
      (error, stdout, stderr) => {
        // Exit 1 is "no such key": no driver to switch off.
        if (error && error.code !== 1) return resolve({ ok: false, code: typeof error.code === 'number' ? error.code : 128, stdout: '', stderr: stderr || error.message })
        const names = new Set<string>()
        for (const key of (stdout ?? '').split('\0')) {
          const last = key.lastIndexOf('.')
          if (key.startsWith('filter.') && last > 'filter.'.length) names.add(key.slice('filter.'.length, last))
        }
        const pairs = [...names].flatMap((name) => [
          [`filter.${name}.clean`, ''],
          [`filter.${name}.smudge`, ''],
          [`filter.${name}.process`, ''],
          [`filter.${name}.required`, 'false'],
        ])
        const env: Record<string, string> = pairs.length ? { GIT_CONFIG_COUNT: String(pairs.length) } : {}
        pairs.forEach(([key, value], n) => {
          env[`GIT_CONFIG_KEY_${n}`] = key!
          env[`GIT_CONFIG_VALUE_${n}`] = value!
        })
        resolve(env)
      },
    )
  })
  drivers.set(options.cwd, asked)
  return asked
}

/** Runs git and resolves its result, failing or not. */
export async function tryGit(args: readonly string[], options: GitOptions): Promise<GitResult> {
  const trust = (options.trust ?? []).flatMap((dir) => ['-c', `safe.directory=${dir}`])
  const full = [...NEUTRAL, ...trust, ...args]
  const off = options.agentFiles ? await neutralDrivers(options, trust) : {}
  if ('ok' in off) return off as GitResult
  return new Promise((resolve, reject) => {
    let blocked: string | undefined
    const child = execFile(
      'git',
      full,
      { cwd: options.cwd, env: { ...gitEnv(options.env), ...off, ...options.extraEnv }, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        clearInterval(watch)
        if (blocked !== undefined) return reject(OmhError.of(FILE_NOT_REGULAR, { args: [blocked, 'a FIFO'] }))
        const code = error ? (typeof error.code === 'number' ? error.code : 128) : 0
        resolve({ ok: !error, code, stdout, stderr: error && !stderr ? error.message : stderr })
      },
    )
    // The agent can put a FIFO where git opens a file (a `.gitignore`, a loose object), and git
    // would wait on it for a writer forever. Git never does that on its own, so one found waiting
    // is stopped (SIGTERM, on which git removes its lock files) and the FIFO named.
    const watch = setInterval(() => {
      const fifo = child.pid === undefined ? undefined : waitingOnFifo(child.pid, options.cwd)
      if (fifo === undefined) return
      blocked = fifo
      child.kill('SIGTERM')
    }, FIFO_WATCH_MS)
    watch.unref()
    if (options.input !== undefined) child.stdin?.end(options.input)
  })
}

/** How often a running host git is checked for waiting on a FIFO. */
const FIFO_WATCH_MS = 250

/**
 * Whether a process waits to open a FIFO (Linux says so in `wchan`), and then which: a FIFO in a
 * directory it has open, as git has the one it reads; `undefined` when it is not waiting on one,
 * or the system cannot say.
 */
function waitingOnFifo(pid: number, cwd: string): string | undefined {
  let waiting: string
  try {
    waiting = readFileSync(`/proc/${pid}/wchan`, 'utf8')
  } catch {
    return undefined
  }
  if (!/^(wait_for_partner|fifo_open)$/.test(waiting.trim())) return undefined
  const dirs: string[] = []
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`, { encoding: 'utf8' })
      if (target.startsWith('/') && lstatSync(target, { throwIfNoEntry: false })?.isDirectory()) dirs.push(target)
    }
  } catch {
    // Gone meanwhile: it waits no more.
  }
  for (const dir of dirs.reverse()) {
    try {
      const fifo = readdirSync(dir, { withFileTypes: true }).find((e) => e.isFIFO())
      if (fifo) return path.join(dir, fifo.name)
    } catch {
      // Removed meanwhile: not where git waits.
    }
  }
  return `a file git opened for ${cwd} (a loose object, or one a config names)`
}

/** Runs git; a non-zero exit throws a GitError. Resolves stdout. */
export async function git(args: readonly string[], options: GitOptions): Promise<string> {
  const result = await tryGit(args, options)
  if (!result.ok) throw new GitError(args, result)
  return result.stdout
}

/** For `.catch`: a GitError becomes GIT_FAILED, quoting git's last line; anything else passes on untouched. */
export const gitFailure =
  (doing: string, root: string) =>
  (error: unknown): never => {
    if (error instanceof GitError) {
      throw OmhError.of(GIT_FAILED, { args: [doing, error.result.stderr.trim().split('\n').pop() ?? ''], hintArgs: [root], cause: error })
    }
    throw error
  }
