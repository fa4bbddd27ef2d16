import { OmhError, SESSION_NAME_REFUSED, SESSION_NOT_FOUND } from '@omh/plugin-api'
import type { KernelView } from '../kernel-view.js'
import { SESSION_NAME, sessionPaths, type SessionPaths } from '../host/layout.js'
import { requireRepo, type Repository } from '../host/repo.js'
import { tryGit } from '../host/git.js'
import { hasSession, lastUsed, listSessions, nextSessionId, readClaim } from './store.js'

type Env = Readonly<Record<string, string | undefined>>

/** Which session a launch asks for. */
export interface SessionChoice {
  /** `--session <sid>`: that one, which must exist. */
  readonly session?: string
  /** `--new`: a new one. */
  readonly fresh?: boolean
  /** `--name <name>`: a new one by that name, which no session of the repository may have. */
  readonly name?: string
  /** Sessions this launch already found busy with another plan; the default pick passes them by. */
  readonly skip?: readonly string[]
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

/**
 * The sessions of one repository, and the one rule for which of them is
 * current: the session launched into last, the newer one when stamps tie or
 * are missing. Launch, attach, diff and commit all ask here, so a command
 * without a session id always means the same session.
 */
export class Sessions {
  constructor(
    readonly omhState: string,
    readonly repo: Repository,
    readonly env: Env,
  ) {}

  /** The sessions of the repository the kernel runs in; NOT_A_REPOSITORY outside one. */
  static of(kernel: Pick<KernelView, 'repoRoot' | 'options' | 'omhState'>): Sessions {
    return new Sessions(kernel.omhState, requireRepo(kernel), kernel.options.env)
  }

  /** Session ids in id order. */
  list(): Promise<string[]> {
    return listSessions(this.omhState, this.repo)
  }

  paths(sid: string): SessionPaths {
    return sessionPaths(this.omhState, this.repo, sid)
  }

  /**
   * The session named, which must exist, or else the current one.
   * SESSION_NOT_FOUND for an unknown id, or when the repository has none.
   */
  async current(sid?: string): Promise<string> {
    const known = await this.list()
    const chosen = sid ?? (await this.#recentFirst(known))[0]?.sid
    if (chosen === undefined || !known.includes(chosen)) throw OmhError.of(SESSION_NOT_FOUND, { args: [sid, this.repo.root], hintArgs: [known] })
    return chosen
  }

  /**
   * The session for a launch: the one named; a new one when asked; else the
   * current one unless a running omh holds it or it was passed over as busy,
   * and so on down the order; else a new one. Two launches at once therefore
   * get two sessions, and a launch after a closed terminal finds the session
   * it left.
   */
  async pickForLaunch(choice: SessionChoice): Promise<PickedSession> {
    if (choice.session) {
      // A named session is found by its own directory, not by listing them all: what a launch
      // reads decides whether its next run may be kept (bin/launches.js), and another session
      // made or removed says nothing about this one.
      if (!(await hasSession(this.omhState, this.repo, choice.session))) {
        throw OmhError.of(SESSION_NOT_FOUND, { args: [choice.session, this.repo.root], hintArgs: [await this.list()] })
      }
      return { sid: choice.session, exists: true, lastUsed: await lastUsed(this.omhState, this.repo, choice.session) }
    }
    const known = await this.list()
    if (choice.name !== undefined) {
      const refuse = (why: string, kind: 'taken' | 'branch' | 'invalid') => OmhError.of(SESSION_NAME_REFUSED, { args: [choice.name!, why], hintArgs: [kind, choice.name!] })
      if (!SESSION_NAME.test(choice.name)) throw refuse('it is not a session name', 'invalid')
      if (known.includes(choice.name)) throw refuse('this repository has a session by that name', 'taken')
      // A branch of that name (a removed session's, kept) is never adopted by a new session.
      if (!(await this.#nameFree(choice.name))) throw refuse(`the branch omh/${choice.name} exists`, 'branch')
      return { sid: choice.name, exists: false }
    }
    if (!choice.fresh) {
      for (const { sid, lastUsed } of await this.#recentFirst(known)) {
        if (!choice.skip?.includes(sid) && !(await readClaim(this.omhState, this.repo, sid))) return { sid, exists: true, lastUsed }
      }
    }
    return { sid: await nextSessionId(this.omhState, this.repo, this.env), exists: false }
  }

  async #nameFree(name: string): Promise<boolean> {
    const branch = await tryGit(['rev-parse', '--verify', '--quiet', `refs/heads/omh/${name}`], { cwd: this.repo.root, env: this.env })
    return !branch.ok
  }

  /** Sessions (in id order) with the one launched into last first. */
  async #recentFirst(sessions: readonly string[]): Promise<{ sid: string; lastUsed: number }[]> {
    const stamped = await Promise.all(sessions.map(async (sid) => ({ sid, lastUsed: await lastUsed(this.omhState, this.repo, sid) })))
    // The sort is stable, so reversing first settles ties for the newer id.
    return stamped.reverse().sort((a, b) => b.lastUsed - a.lastUsed)
  }
}
