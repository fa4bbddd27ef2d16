/**
 * Where a session's files live on the host (worktree, sandbox repository, run directory), the
 * names and labels of its containers, and its branch: the one place every part looks them up.
 */
import path from 'node:path'
import { statePath } from '@omh/kernel/locations'
import type { Repository } from './repo.js'

/** Numbered session ids, as omh gives them: `s01`, `s02`, …, `s99`, `s100`. */
export const NUMBERED_SESSION = /^s\d{2,}$/

/**
 * A name the user gives a session (`--name feature-x`): lowercase letters,
 * digits and single hyphens, starting with a letter, at most 40 characters,
 * so it is at once a branch (`omh/feature-x`), a container name and an ssh
 * alias. The `s<digits>` names are omh's own numbering.
 */
export const SESSION_NAME = /^(?!s\d+$)[a-z](?:-?[a-z0-9]){0,39}$/

/** Any session id: numbered or named. */
export const SESSION_ID = new RegExp(`${NUMBERED_SESSION.source}|${SESSION_NAME.source}`)

export const sessionId = (n: number): string => `s${String(n).padStart(2, '0')}`
export const sessionNumber = (sid: string): number => (NUMBERED_SESSION.test(sid) ? Number(sid.slice(1)) : Number.NaN)

/** Session order: numbered ones by number, then named ones by name. */
export const bySession = (a: string, b: string): number => {
  const [na, nb] = [sessionNumber(a), sessionNumber(b)]
  if (!Number.isNaN(na) && !Number.isNaN(nb)) return na - nb
  if (Number.isNaN(na) !== Number.isNaN(nb)) return Number.isNaN(na) ? 1 : -1
  return a < b ? -1 : a > b ? 1 : 0
}
export const branchOf = (sid: string): string => `omh/${sid}`

/** Where everything of one session lives on the host, under `$OMH_STATE`. */
export interface SessionPaths {
  /** The git worktree on `omh/<sid>`, mounted at `/work`. */
  readonly worktree: string
  /** The sandbox's own git directory, mounted as the container's git. */
  readonly shadow: string
  /** Per-session bookkeeping: claim, placeholders, staging per harness. */
  readonly run: string
}

export function sessionPaths(omhState: string, repo: Repository, sid: string): SessionPaths {
  return {
    worktree: statePath(omhState, 'worktrees', repo.id, sid),
    shadow: statePath(omhState, 'shadow', repo.id, `${sid}.git`),
    run: statePath(omhState, 'run', repo.id, sid),
  }
}

/** Staging for one harness in one session: keyed by both, so two harnesses never overwrite each other's live mounts. */
export const stagingDir = (paths: SessionPaths, harness: string): string => path.join(paths.run, harness)

/** The credential store of one account of one harness. */
export const credentialsDir = (omhState: string, harness: string, account: string): string =>
  statePath(omhState, 'creds', harness, account)

export const repoRunDir = (omhState: string, repo: Repository): string => statePath(omhState, 'run', repo.id)

/** The container of a session; one per session, whichever harness is in it. */
export const containerName = (repo: Repository, sid: string): string => `omh-${repo.id}-${sid}`

/** Labels every session container carries; `list` finds a session's container by the first two. */
export const LABEL = {
  repo: 'omh.repo',
  session: 'omh.session',
  harness: 'omh.harness',
  plan: 'omh.plan',
  worktree: 'omh.worktree',
  /** How its files reach the container: `mounted` or `copied`. */
  files: 'omh.files',
} as const

/** The identity the sandbox's own commits carry; never the user's. */
export const SANDBOX_AUTHOR = { name: 'omh sandbox', email: 'sandbox@omh.invalid' } as const
