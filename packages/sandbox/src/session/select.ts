import { OmhError, SESSION_NOT_FOUND } from '@omh/plugin-api'
import type { Repository } from './repo.js'
import { lastUsed, listSessions, nextSessionId, readClaim } from './store.js'

type Env = Readonly<Record<string, string | undefined>>

/** Which session a launch asks for. */
export interface SessionChoice {
  /** `--session <sid>`: that one, which must exist. */
  readonly session?: string
  /** `--new`: a new one. */
  readonly fresh?: boolean
  /** Sessions this launch already found busy with another plan; the default pick passes them by. */
  readonly skip?: readonly string[]
}

/**
 * Picks the session for a launch: the one named; a new one when asked; else
 * the session launched into most recently that no running omh holds (and not one passed over as
 * busy); else a new one. Two launches at once therefore get two sessions, and
 * a launch after a closed terminal finds the session it left.
 */
export async function pickSession(
  omhHome: string,
  repo: Repository,
  choice: SessionChoice,
  env: Env,
): Promise<PickedSession> {
  const existing = await listSessions(omhHome, repo)
  if (choice.session) {
    if (!existing.includes(choice.session)) {
      throw OmhError.of(SESSION_NOT_FOUND, { args: [choice.session, repo.root], hintArgs: [existing] })
    }
    return { sid: choice.session, exists: true, lastUsed: await lastUsed(omhHome, repo, choice.session) }
  }
  if (!choice.fresh) {
    for (const { sid, lastUsed } of await recentFirst(omhHome, repo, existing)) {
      if (!choice.skip?.includes(sid) && !(await readClaim(omhHome, repo, sid))) return { sid, exists: true, lastUsed }
    }
  }
  return { sid: await nextSessionId(omhHome, repo, env), exists: false }
}

/**
 * Sessions (in id order, as `listSessions` gives them) with the one launched
 * into most recently first. Stamps that tie, or are missing (a session never
 * launched into), put the newer session first: it is the one made last.
 */
export async function recentFirst(omhHome: string, repo: Repository, sessions: readonly string[]): Promise<{ sid: string; lastUsed: number }[]> {
  const stamped = await Promise.all(sessions.map(async (sid) => ({ sid, lastUsed: await lastUsed(omhHome, repo, sid) })))
  // The sort is stable, so reversing first settles ties for the newer id.
  return stamped.reverse().sort((a, b) => b.lastUsed - a.lastUsed)
}

/** The session a launch goes into. */
export interface PickedSession {
  readonly sid: string
  readonly exists: boolean
  /**
   * For an existing session, its `last-used` stamp as read before its claim
   * was checked: a launch that went into it since has stamped it again.
   */
  readonly lastUsed?: number
}
