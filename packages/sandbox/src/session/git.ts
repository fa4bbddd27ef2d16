import { execFile } from 'node:child_process'
import { GIT_FAILED, OmhError } from '@omh/plugin-api'

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
 * stay off, and nothing pages.
 */
export const NEUTRAL = [
  '-c', 'core.hooksPath=/dev/null',
  '-c', 'core.fsmonitor=false',
  '-c', 'core.pager=cat',
  '-c', 'protocol.file.allow=never',
  '-c', 'advice.detachedHead=false',
] as const

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
}

/** Runs git and resolves its result, failing or not. */
export function tryGit(args: readonly string[], options: GitOptions): Promise<GitResult> {
  const trust = (options.trust ?? []).flatMap((dir) => ['-c', `safe.directory=${dir}`])
  const full = [...NEUTRAL, ...trust, ...args]
  return new Promise((resolve) => {
    const child = execFile(
      'git',
      full,
      { cwd: options.cwd, env: { ...gitEnv(options.env), ...options.extraEnv }, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 128) : 0
        resolve({ ok: !error, code, stdout, stderr: error && !stderr ? error.message : stderr })
      },
    )
    if (options.input !== undefined) child.stdin?.end(options.input)
  })
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
