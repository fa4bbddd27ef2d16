/**
 * The agent's work as the host reviews it: what changed in a session's worktree against where it
 * began, for `sessions ls`, `diff` and `commit`, with omh's own mounted paths never counted.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { NOTHING_TO_COMMIT, OmhError, SESSION_OFF_BRANCH, GUEST_WORK } from '@omh/plugin-api'
import { carriedPaths } from './carry-in.js'
import { addAll, excluding, failed, must, refuseLargeFiles } from './work-index.js'
import { GitError, NO_DIFF_PROGRAMS, tryGit, type GitOptions } from '../host/git.js'
import { MAX_BLOB_BYTES, agentIdentity, readCarried, sandboxHead, readSandboxHistory, writeCarried } from './history.js'
import { branchOf, sessionPaths, type SessionPaths } from '../host/layout.js'
import type { Repository } from '../host/repo.js'

type Env = Readonly<Record<string, string | undefined>>

export { excluding }

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

const options_ = (repo: Repository, paths: SessionPaths, env: Env, cwd = paths.worktree): GitOptions => ({
  cwd,
  env,
  trust: [paths.worktree],
  agentFiles: true,
})

/** Status lines of the agent's files: a repository of its own inside the worktree (`sub/`) is never the session's work. */
const STATUS = ['status', '--porcelain', '--untracked-files=all', '--ignore-submodules=all'] as const
const isNestedRepository = (entry: string) => entry.endsWith('/')

export async function workState(omhState: string, repo: Repository, sid: string, baseCommit: string | undefined, env: Env): Promise<WorkState> {
  const paths = sessionPaths(omhState, repo, sid)
  const at = options_(repo, paths, env)
  const head = await tryGit(['symbolic-ref', '--quiet', '--short', 'HEAD'], at)
  const ahead = baseCommit
    ? await tryGit(['rev-list', '--count', `${baseCommit}..refs/heads/${branchOf(sid)}`], options_(repo, paths, env, repo.root))
    : undefined
  const status = await tryGit([...STATUS, '-z', '--', ...excluding(await omhPaths(paths))], at)
  return {
    on: head.ok ? head.stdout.trim() : 'unknown',
    ahead: ahead?.ok ? Number(ahead.stdout.trim()) : 'unknown',
    uncommitted: status.ok ? status.stdout.split('\0').filter((e) => e && !isNestedRepository(e)).length : 'unknown',
  }
}

/**
 * The files a session has changed since the base, committed on its branch
 * or not, omh's own left out; undefined when git cannot tell.
 */
export async function changedFiles(omhState: string, repo: Repository, sid: string, baseCommit: string, env: Env): Promise<string[] | undefined> {
  const paths = sessionPaths(omhState, repo, sid)
  const omh = await omhPaths(paths)
  const [committed, status] = await Promise.all([
    tryGit(['diff', '--name-only', '--no-renames', '-z', `${baseCommit}...refs/heads/${branchOf(sid)}`, '--', ...excluding(omh)], options_(repo, paths, env, repo.root)),
    tryGit([...STATUS, '-z', '--no-renames', '--', ...excluding(omh)], options_(repo, paths, env)),
  ])
  if (!committed.ok || !status.ok) return undefined
  const files = new Set(committed.stdout.split('\0').filter(Boolean))
  for (const entry of status.stdout.split('\0')) if (entry.length > 3 && !isNestedRepository(entry)) files.add(entry.slice(3))
  return [...files].sort()
}

async function requireOnBranch(repo: Repository, paths: SessionPaths, sid: string, env: Env): Promise<void> {
  const head = await tryGit(['symbolic-ref', '--quiet', 'HEAD'], options_(repo, paths, env))
  const branch = branchOf(sid)
  if (head.stdout.trim() !== `refs/heads/${branch}`) {
    const on = head.ok ? head.stdout.trim().replace(/^refs\/heads\//, '') : 'a detached HEAD'
    throw OmhError.of(SESSION_OFF_BRANCH, { args: [sid, on, branch], hintArgs: [paths.worktree, branch] })
  }
}

/** A session's changes against where it started: committed and not, omh's files left out. */
export interface SessionDiff {
  readonly base: string
  /** Output of `git diff` (a patch, or `--stat` lines). */
  readonly text: string
  readonly files: readonly { readonly path: string; readonly added: number | null; readonly deleted: number | null }[]
  /** Directories holding a repository of their own, which omh neither reads nor carries. */
  readonly leftOut: readonly string[]
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
  const at = { ...options_(repo, paths, env), extraEnv: { GIT_INDEX_FILE: path.join(tmp, 'index') } }
  try {
    const doing = `reading the changes of ${sid}`
    const mergeBase = (await must(doing, repo, ['merge-base', baseCommit, 'HEAD'], at)).trim()
    await must(doing, repo, ['read-tree', 'HEAD'], at)
    const leftOut = await addAll(doing, repo, at, await omhPaths(paths), 'HEAD')
    // A file over the bound a commit may bring in shows as binary, as it would never land as text.
    const diff = ['-c', `core.bigFileThreshold=${MAX_BLOB_BYTES}`, 'diff', ...NO_DIFF_PROGRAMS, '--cached']
    const numstat = await must(doing, repo, [...diff, '--numstat', '-z', mergeBase], at)
    const text = await must(doing, repo, [...diff, format === 'stat' ? '--stat' : '--patch', '--no-color', mergeBase], at)
    return { base: mergeBase, text, files: parseNumstat(numstat), leftOut }
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

/** One of the agent's commits, as it landed on `omh/<sid>` or was left out. */
export interface KeptCommit {
  /** The commit in the sandbox repository. */
  readonly from: string
  /** The commit on `omh/<sid>`; undefined when it was left out. */
  readonly commit: string | undefined
  readonly subject: string
}

/** What `commitSession` put on the branch. */
export interface SessionCommit {
  /** The branch's new tip. */
  readonly commit: string
  /** The agent's commits that landed, oldest first. */
  readonly kept: readonly KeptCommit[]
  /** The agent's commits left out because they change nothing on the branch (empty, or already there). */
  readonly skipped: readonly KeptCommit[]
  /** The commit of the files the agent left uncommitted, with the user's message; undefined when there were none. */
  readonly rest: string | undefined
  /** Directories holding a repository of their own (in the worktree or in the agent's commits), which omh does not carry. */
  readonly leftOut: readonly string[]
}

/**
 * Commits a session's work to `omh/<sid>`: first each commit the agent made
 * in the sandbox repository since the last time (its message, the sandbox
 * as author, the user as committer), then the files left uncommitted, as
 * one commit with the user's message and identity. With `squash`, the files
 * only, as one commit.
 *
 * Every commit is built beside the branch, in a throwaway index, and the
 * branch moves once, from the tip it had when omh started, to the last of
 * them: all land or none do. omh's files are never staged; nothing to commit
 * is an error, not a success.
 */
export async function commitSession(
  omhState: string,
  repo: Repository,
  sid: string,
  message: string,
  env: Env,
  options: { squash?: boolean; selection?: CommitSelection } = {},
): Promise<SessionCommit> {
  const paths = sessionPaths(omhState, repo, sid)
  await requireOnBranch(repo, paths, sid, env)
  const doing = `committing the work of ${sid}`
  const ref = `refs/heads/${branchOf(sid)}`
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'omh-commit-'))
  try {
    const base: GitOptions = { ...options_(repo, paths, env), extraEnv: { GIT_INDEX_FILE: path.join(tmp, 'index') } }
    const tip = (await must(doing, repo, ['rev-parse', '--verify', `${ref}^{commit}`], base)).trim()
    const omh = await omhPaths(paths)
    const isOmh = (p: string) => omh.some((o) => p === o || p.startsWith(`${o}/`))
    const only = options.selection?.paths ?? []
    const left = options.selection?.exclude ?? []
    const selected = (p: string) => (!only.length || only.some((o) => under(p, o))) && !left.some((o) => under(p, o))
    const history = options.squash
      ? { head: await sandboxHead(paths.shadow, sid).catch(() => undefined), extraEnv: {}, commits: [], leftOut: [] }
      : await readSandboxHistory(paths.shadow, sid, await readCarried(paths.run), isOmh, base)
    const borrowed: Readonly<Record<string, string>> = history.extraEnv
    const at: GitOptions = { ...base, extraEnv: { ...base.extraEnv, ...borrowed } }
    const treeOf = async (commit: string) => (await must(doing, repo, ['rev-parse', `${commit}^{tree}`], at)).trim()

    await must(doing, repo, ['read-tree', tip], at)
    let last = tip
    let lastTree = await treeOf(tip)
    const kept: KeptCommit[] = []
    const skipped: KeptCommit[] = []
    for (const c of options.squash ? [] : history.commits) {
      const subject = c.message.split('\n')[0] ?? ''
      // Removals first: a path that turns from a file into a directory is free by the time it is added.
      const changes = c.changes.filter((x) => selected(x.path))
      const ordered = [...changes.filter((x) => x.mode === '0'), ...changes.filter((x) => x.mode !== '0')]
      const info = ordered.map((x) => (x.mode === '0' ? `0 ${'0'.repeat(x.object.length)}\t${x.path}` : `${x.mode} ${x.object}\t${x.path}`)).join('\0')
      if (info) await must(doing, repo, ['update-index', '-z', '--index-info'], { ...at, input: `${info}\0` })
      const tree = (await must(doing, repo, ['write-tree'], at)).trim()
      if (tree === lastTree) {
        skipped.push({ from: c.sha, commit: undefined, subject })
        continue
      }
      const made = (
        await must(doing, repo, ['commit-tree', tree, '-p', last, '-F', '-'], { ...at, input: c.message, extraEnv: { ...at.extraEnv, ...agentIdentity(c.date) } })
      ).trim()
      kept.push({ from: c.sha, commit: made, subject })
      last = made
      lastTree = tree
    }

    const nested = await addAll(doing, repo, at, [...omh, ...left], last, only)
    await refuseLargeFiles(doing, repo, at, last, sid)
    const leftOut = [...new Set([...history.leftOut, ...nested])].sort()
    const tree = (await must(doing, repo, ['write-tree'], at)).trim()
    let rest: string | undefined
    if (tree !== lastTree) {
      rest = (await must(doing, repo, ['commit-tree', tree, '-p', last, '-F', '-'], { ...at, input: message })).trim()
      last = rest
    }
    if (last === tip) throw OmhError.of(NOTHING_TO_COMMIT, { args: [branchOf(sid)], hintArgs: [sid] })

    if (at.extraEnv?.['GIT_ALTERNATE_OBJECT_DIRECTORIES']) await copyObjects(repo, paths, env, at, tip, last, doing)
    await must(doing, repo, ['update-ref', '-m', `omh: sessions commit ${sid}`, ref, last, tip], base)
    // The branch moved under the worktree; its index follows, its files already match.
    await tryGit(['reset', '--quiet'], options_(repo, paths, env))
    if (history.head) await writeCarried(paths.run, history.head).catch(() => undefined)
    return { commit: last, kept, skipped, rest, leftOut }
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

/**
 * Part of a session's work to commit: only what lies at or under `paths`
 * (all of it when empty), less what lies at or under `exclude`; paths as the
 * repository names them. The rest stays in the worktree for a later commit.
 */
export interface CommitSelection {
  readonly paths: readonly string[]
  readonly exclude: readonly string[]
}

const under = (file: string, at: string): boolean => file === at || file.startsWith(`${at.replace(/\/$/, '')}/`)

/**
 * Copies the objects the new commits reach from the sandbox's store into the
 * user's repository, and checks that every one of them is there before the
 * branch may move: once the sandbox repository is gone, nothing on the
 * branch may be missing.
 */
async function copyObjects(repo: Repository, paths: SessionPaths, env: Env, at: GitOptions, from: string, to: string, doing: string): Promise<void> {
  const common = (await must(doing, repo, ['rev-parse', '--path-format=absolute', '--git-common-dir'], options_(repo, paths, env))).trim()
  await must(doing, repo, ['pack-objects', '--revs', '--quiet', path.join(common, 'objects', 'pack', 'pack')], { ...at, input: `${to}\n^${from}\n` })
  const reached = await must(doing, repo, ['rev-list', '--objects', to, `^${from}`], at)
  const ids = reached.split('\n').map((l) => l.split(' ')[0]).filter(Boolean)
  const own = options_(repo, paths, env)
  const check = await must(doing, repo, ['cat-file', '--batch-check=%(objectname)'], { ...own, input: ids.map((id) => `${id}\n`).join('') })
  if (check.includes(' missing')) throw failed(doing, own, new GitError(['cat-file'], { ok: false, code: 1, stdout: '', stderr: 'an object of the new commits did not reach the repository' }))
}

/**
 * What a session holds that exists nowhere else: commits on its branch that
 * no other ref reaches, and uncommitted files. `unknown` where git cannot
 * tell, which callers treat as "there may be".
 */
export async function unsavedWork(omhState: string, repo: Repository, sid: string, env: Env): Promise<{ commits: Count; uncommitted: Count }> {
  const paths = sessionPaths(omhState, repo, sid)
  const branch = `refs/heads/${branchOf(sid)}`
  const atRepo = options_(repo, paths, env, repo.root)
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
