import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { removeHostEntry, sshAlias, sshPaths } from '../ssh.js'
import { OmhError, SESSION_OFF_BRANCH } from '@omh/plugin-api'
import { git, tryGit } from '../host/git.js'
import { branchOf, sessionPaths, type SessionPaths } from '../host/layout.js'
import { handToAgent } from '../host/ownership.js'
import type { Base, Repository } from '../host/repo.js'
import { carryIn, type CarryFile } from '../work/carry-in.js'
import { createShadow } from './shadow.js'
import { registerRepository } from './board.js'

type Env = Readonly<Record<string, string | undefined>>

/**
 * Makes a session's host side: a worktree outside the repository on a new
 * branch `omh/<sid>` started at `base.commit`, and the sandbox's own git
 * directory, with the untracked files `carry` holds. All or nothing: on any failure every part made so far is
 * removed, so a retry starts clean.
 */
export async function createSession(omhState: string, repo: Repository, sid: string, base: Base, env: Env, carry: readonly CarryFile[] = []): Promise<SessionPaths> {
  const paths = sessionPaths(omhState, repo, sid)
  const branch = branchOf(sid)
  const at = { cwd: repo.root, env, trust: [paths.worktree] }
  // Only what this call made is undone: an existing branch of that name is never deleted.
  const [existed] = await Promise.all([tryGit(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], at), mkdir(path.dirname(paths.worktree), { recursive: true })])
  if (existed.ok) throw new Error(`the branch ${branch} already exists; omh will not adopt it as a new session`)
  try {
    // --force: a worktree once registered at this path and since deleted by hand does not block it.
    // `-b` still refuses a branch that exists.
    const added = git(['worktree', 'add', '--quiet', '--force', '-b', branch, paths.worktree, base.commit], at)
    const onBranch = added.then(async () => {
      const head = await tryGit(['symbolic-ref', '--quiet', 'HEAD'], { ...at, cwd: paths.worktree })
      if (head.stdout.trim() !== `refs/heads/${branch}`) {
        throw OmhError.of(SESSION_OFF_BRANCH, { args: [sid, head.ok ? head.stdout.trim().replace(/^refs\/heads\//, '') : 'a detached HEAD', branch] })
      }
    })
    // The sandbox repository is made while the worktree is checked out, and both checks only read
    // it; the first failure, in this order, is reported once all have finished.
    await settledInOrder(added, onBranch, createShadow(paths.shadow, paths.worktree, [], env, added), mkdir(paths.run, { recursive: true }).then(() => registerRepository(omhState, repo)))
    // After the sandbox repository's first commit, which must not hold them.
    await carryIn(paths.worktree, paths.run, carry)
    await settledInOrder(handToAgent(paths.worktree), handToAgent(paths.shadow))
    return paths
  } catch (error) {
    await removeSession(omhState, repo, sid, env, { deleteBranch: true })
    throw error
  }
}

/** Waits for every promise, then throws the first rejection in argument order. */
async function settledInOrder(...promises: Promise<unknown>[]): Promise<void> {
  for (const result of await Promise.allSettled(promises)) if (result.status === 'rejected') throw result.reason
}

/**
 * Removes a session's host side: worktree, shadow, staging and bookkeeping,
 * its ssh config entry, and the branch when asked. Tolerates parts that are
 * already gone.
 */
export async function removeSession(
  omhState: string,
  repo: Repository,
  sid: string,
  env: Env,
  options: { deleteBranch: boolean },
): Promise<void> {
  const paths = sessionPaths(omhState, repo, sid)
  const at = { cwd: repo.root, env, trust: [paths.worktree] }
  const removed = await tryGit(['worktree', 'remove', '--force', '--force', paths.worktree], at)
  if (!removed.ok) {
    await rm(paths.worktree, { recursive: true, force: true })
    await tryGit(['worktree', 'prune'], at)
  }
  if (options.deleteBranch) await tryGit(['branch', '--quiet', '-D', branchOf(sid)], at)
  await rm(paths.shadow, { recursive: true, force: true })
  await rm(paths.run, { recursive: true, force: true })
  // An entry left behind would send `ssh <alias>` to whatever holds that port later.
  await removeHostEntry(sshPaths(omhState, repo.id), sshAlias(repo.id, sid))
}
