/**
 * The user's repository as omh sees it: its root, its id, and the base a session starts from.
 */
import { createHash } from 'node:crypto'
import { realpathSync } from 'node:fs'
import path from 'node:path'
import { BASE_UNKNOWN, NOT_A_REPOSITORY, OmhError, REPOSITORY_EMPTY } from '@omh/plugin-api'
import type { KernelView } from '../kernel-view.js'
import { tryGit } from './git.js'

/** A checkout, as sessions know it. */
export interface Repository {
  /** Absolute, symlink-free path of the checkout. */
  readonly root: string
  /**
   * The checkout's name plus a short digest of its absolute path: two clones
   * that share a name never share a session, a worktree or a container.
   * Safe as a path segment and inside a container name.
   */
  readonly id: string
}

type Env = Readonly<Record<string, string | undefined>>

/** The repository omh runs in; NOT_A_REPOSITORY outside one. */
export function requireRepo(kernel: Pick<KernelView, 'repoRoot' | 'options'>): Repository {
  if (!kernel.repoRoot) throw OmhError.of(NOT_A_REPOSITORY, { args: [kernel.options.cwd] })
  return repository(kernel.repoRoot)
}

export function repository(root: string): Repository {
  const real = realpathSync(root)
  const name =
    path
      .basename(real)
      .toLowerCase()
      .replace(/[^a-z0-9_.-]+/g, '-')
      .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '')
      .slice(0, 40) || 'repo'
  const digest = createHash('sha256').update(real).digest('hex').slice(0, 8)
  return { root: real, id: `${name}-${digest}` }
}

/** Where a session starts: a branch name for people, and the commit it named when asked. */
export interface Base {
  /** The ref as a person would write it (`main`, `origin/main`). */
  readonly name: string
  readonly commit: string
}

/**
 * The default branch, resolved to a commit before anything uses it (git's
 * remote-tracking guesses otherwise check out something else): origin/HEAD's
 * branch (local first, then the remote-tracking one), then `main`, then
 * `master`, then the branch HEAD is on.
 */
export async function resolveBase(repo: Repository, env: Env): Promise<Base> {
  const run = (args: string[]) => tryGit(args, { cwd: repo.root, env })
  const commitOf = async (ref: string) => {
    const r = await run(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])
    return r.ok ? r.stdout.trim() : undefined
  }
  const candidates: { name: string; ref: string }[] = []
  const originHead = await run(['symbolic-ref', '--quiet', 'refs/remotes/origin/HEAD'])
  if (originHead.ok) {
    const branch = originHead.stdout.trim().replace(/^refs\/remotes\/origin\//, '')
    candidates.push({ name: branch, ref: `refs/heads/${branch}` }, { name: `origin/${branch}`, ref: `refs/remotes/origin/${branch}` })
  }
  candidates.push({ name: 'main', ref: 'refs/heads/main' }, { name: 'master', ref: 'refs/heads/master' })
  const head = await run(['symbolic-ref', '--quiet', 'HEAD'])
  if (head.ok) {
    const ref = head.stdout.trim()
    candidates.push({ name: ref.replace(/^refs\/heads\//, ''), ref })
  }
  for (const c of candidates) {
    const commit = await commitOf(c.ref)
    if (commit) return { name: c.name, commit }
  }
  const anyCommit = await commitOf('HEAD')
  if (!anyCommit) {
    const branches = await run(['for-each-ref', '--count=1', '--format=%(refname)', 'refs/heads'])
    if (!branches.ok || !branches.stdout.trim()) throw OmhError.of(REPOSITORY_EMPTY, { args: [repo.root] })
  }
  throw OmhError.of(BASE_UNKNOWN, { args: [repo.root, anyCommit ? anyCommit.slice(0, 8) : undefined] })
}
