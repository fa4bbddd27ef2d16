import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { GIT_FAILED, NOTHING_TO_COMMIT, OmhError, SESSION_OFF_BRANCH, GUEST_WORK } from '@omh/plugin-api'
import { carriedPaths } from './carry-in.js'
import { GitError, tryGit, type GitOptions } from './git.js'
import { branchOf, sessionPaths, type SessionPaths } from './layout.js'
import type { Repository } from './repo.js'

type Env = Readonly<Record<string, string | undefined>>

/** A count git answered, or `unknown` when it could not: never mistaken for zero. */
export type Count = number | 'unknown'

/**
 * Paths in the worktree that are omh's, not the agent's: everything staged
 * over `/work` for any harness of the session, and the mountpoints omh made.
 */
export async function omhPaths(paths: SessionPaths): Promise<string[]> {
  const out = new Set<string>()
  const guestWork = GUEST_WORK.replace(/^\//, '')
  for (const harness of await names(paths.run)) {
    for (const sub of ['files', 'trees']) {
      const root = path.join(paths.run, harness, sub, guestWork)
      for (const rel of await walk(root, sub === 'trees')) out.add(rel)
    }
  }
  try {
    const made: unknown = JSON.parse(await readFile(path.join(paths.run, 'mountpoints.json'), 'utf8'))
    if (Array.isArray(made)) {
      for (const p of made) {
        const rel = typeof p === 'string' ? path.relative(paths.worktree, p) : '..'
        if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) out.add(rel.split(path.sep).join('/'))
      }
    }
  } catch {
    // No mountpoints recorded.
  }
  for (const rel of await carriedPaths(paths.run)) out.add(rel)
  return [...out].sort()
}

/** Pathspecs for "everything but omh's files". */
export const excluding = (omh: readonly string[]): string[] => ['.', ...omh.map((p) => `:(exclude,literal)${p}`)]

async function names(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name)
  } catch {
    return []
  }
}

/** Files below `root`, relative; with `dirsAreLeaves`, a directory holding links counts as one path. */
async function walk(root: string, dirsAreLeaves: boolean, rel = ''): Promise<string[]> {
  let entries
  try {
    entries = await readdir(path.join(root, rel), { withFileTypes: true })
  } catch {
    return []
  }
  if (dirsAreLeaves && rel && entries.some((e) => e.isSymbolicLink())) return [rel]
  const out: string[] = []
  for (const e of entries) {
    const child = rel ? `${rel}/${e.name}` : e.name
    if (e.isDirectory()) out.push(...(await walk(root, dirsAreLeaves, child)))
    else out.push(child)
  }
  return out
}

/** What `omh sessions ls` shows about one session's work. */
export interface WorkState {
  /** The branch the worktree is on, or `unknown`. */
  readonly on: string
  /** Commits on `omh/<sid>` since the base. */
  readonly ahead: Count
  /** Changed and new files in the worktree, omh's own left out. */
  readonly uncommitted: Count
}

const options = (repo: Repository, paths: SessionPaths, env: Env, cwd = paths.worktree): GitOptions => ({
  cwd,
  env,
  trust: [paths.worktree],
})

export async function workState(omhState: string, repo: Repository, sid: string, baseCommit: string | undefined, env: Env): Promise<WorkState> {
  const paths = sessionPaths(omhState, repo, sid)
  const at = options(repo, paths, env)
  const head = await tryGit(['symbolic-ref', '--quiet', '--short', 'HEAD'], at)
  const ahead = baseCommit
    ? await tryGit(['rev-list', '--count', `${baseCommit}..refs/heads/${branchOf(sid)}`], options(repo, paths, env, repo.root))
    : undefined
  const status = await tryGit(['status', '--porcelain', '--untracked-files=all', '--', ...excluding(await omhPaths(paths))], at)
  return {
    on: head.ok ? head.stdout.trim() : 'unknown',
    ahead: ahead?.ok ? Number(ahead.stdout.trim()) : 'unknown',
    uncommitted: status.ok ? status.stdout.split('\n').filter(Boolean).length : 'unknown',
  }
}

async function requireOnBranch(repo: Repository, paths: SessionPaths, sid: string, env: Env): Promise<void> {
  const head = await tryGit(['symbolic-ref', '--quiet', 'HEAD'], options(repo, paths, env))
  const branch = branchOf(sid)
  if (head.stdout.trim() !== `refs/heads/${branch}`) {
    const on = head.ok ? head.stdout.trim().replace(/^refs\/heads\//, '') : 'a detached HEAD'
    throw OmhError.of(SESSION_OFF_BRANCH, { args: [sid, on, branch], hintArgs: [paths.worktree, branch] })
  }
}

const failed = (doing: string, repo: Repository, error: GitError) =>
  OmhError.of(GIT_FAILED, { args: [doing, error.result.stderr.trim().split('\n').pop() ?? ''], hintArgs: [repo.root], cause: error })

async function must(doing: string, repo: Repository, args: string[], at: GitOptions): Promise<string> {
  const r = await tryGit(args, at)
  if (!r.ok) throw failed(doing, repo, new GitError(args, r))
  return r.stdout
}

/** A session's changes against where it started: committed and not, omh's files left out. */
export interface SessionDiff {
  readonly base: string
  /** Output of `git diff` (a patch, or `--stat` lines). */
  readonly text: string
  readonly files: readonly { readonly path: string; readonly added: number | null; readonly deleted: number | null }[]
}

export async function sessionDiff(
  omhState: string,
  repo: Repository,
  sid: string,
  baseCommit: string,
  env: Env,
  format: 'patch' | 'stat',
): Promise<SessionDiff> {
  const paths = sessionPaths(omhState, repo, sid)
  await requireOnBranch(repo, paths, sid, env)
  // A throwaway index, so untracked files show and the worktree's own index is untouched.
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'omh-diff-'))
  const at = { ...options(repo, paths, env), extraEnv: { GIT_INDEX_FILE: path.join(tmp, 'index') } }
  try {
    const doing = `reading the changes of ${sid}`
    const mergeBase = (await must(doing, repo, ['merge-base', baseCommit, 'HEAD'], at)).trim()
    await must(doing, repo, ['read-tree', 'HEAD'], at)
    await must(doing, repo, ['add', '--all', '--', ...excluding(await omhPaths(paths))], at)
    const numstat = await must(doing, repo, ['diff', '--cached', '--numstat', '-z', mergeBase], at)
    const text = await must(doing, repo, ['diff', '--cached', format === 'stat' ? '--stat' : '--patch', '--no-color', mergeBase], at)
    return { base: mergeBase, text, files: parseNumstat(numstat) }
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

function parseNumstat(z: string): SessionDiff['files'] {
  const out: { path: string; added: number | null; deleted: number | null }[] = []
  const parts = z.split('\0')
  for (let n = 0; n < parts.length; n++) {
    const head = parts[n]
    if (!head) continue
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(head)
    if (!m) continue
    // A rename leaves the path empty here and gives old and new in the next two fields.
    const file = m[3] ? m[3] : (n += 2, parts[n]!)
    out.push({ path: file, added: m[1] === '-' ? null : Number(m[1]), deleted: m[2] === '-' ? null : Number(m[2]) })
  }
  return out
}

/**
 * Commits the worktree's changes to `omh/<sid>` with the user's message and
 * identity. omh's files are never staged; "nothing to commit" is an error,
 * not a success. Resolves the new commit.
 */
export async function commitSession(omhState: string, repo: Repository, sid: string, message: string, env: Env): Promise<string> {
  const paths = sessionPaths(omhState, repo, sid)
  await requireOnBranch(repo, paths, sid, env)
  const at = options(repo, paths, env)
  const doing = `committing the work of ${sid}`
  await must(doing, repo, ['add', '--all', '--', ...excluding(await omhPaths(paths))], at)
  const staged = await tryGit(['diff', '--cached', '--quiet'], at)
  if (staged.ok) throw OmhError.of(NOTHING_TO_COMMIT, { args: [branchOf(sid)], hintArgs: [sid] })
  await must(doing, repo, ['commit', '--quiet', '--no-verify', '--file', '-'], { ...at, input: message })
  return (await must(doing, repo, ['rev-parse', 'HEAD'], at)).trim()
}

/**
 * What a session holds that exists nowhere else: commits on its branch that
 * no other ref reaches, and uncommitted files. `unknown` where git cannot
 * tell, which callers treat as "there may be".
 */
export async function unsavedWork(omhState: string, repo: Repository, sid: string, env: Env): Promise<{ commits: Count; uncommitted: Count }> {
  const paths = sessionPaths(omhState, repo, sid)
  const branch = `refs/heads/${branchOf(sid)}`
  const atRepo = options(repo, paths, env, repo.root)
  let commits: Count = 'unknown'
  const exists = await tryGit(['rev-parse', '--verify', '--quiet', branch], atRepo)
  if (!exists.ok) commits = exists.code === 1 ? 0 : 'unknown'
  else {
    const refs = await tryGit(['for-each-ref', '--format=%(refname)'], atRepo)
    if (refs.ok) {
      const others = refs.stdout.split('\n').filter((r) => r && r !== branch)
      const count = await tryGit(['rev-list', '--count', branch, '--stdin'], { ...atRepo, input: others.map((r) => `^${r}\n`).join('') })
      if (count.ok) commits = Number(count.stdout.trim())
    }
  }
  const state = await workState(omhState, repo, sid, undefined, env)
  return { commits, uncommitted: state.uncommitted }
}
