/**
 * Stopping sessions, as `omh sessions down` does: each on the engine it runs on, its containers,
 * proxy and networks taken down, and on an engine elsewhere the agent's work brought home first.
 * Worktrees, branches and sandbox repositories stay; the next launch starts the container again.
 * The command parses, calls this and prints.
 */
import type { RuntimeContext, RuntimePlugin } from '@omh/plugin-api'
import { LABEL } from '../host/layout.js'
import type { Repository } from '../host/repo.js'
import { takeDown } from './teardown.js'

/** Sessions that run on one engine. */
export interface SessionsOnEngine {
  readonly runtime: RuntimePlugin
  readonly context: RuntimeContext
  readonly sessions: readonly string[]
}

export interface StoppedSession {
  readonly session: string
  /** False: it was not running (what it had beside it is taken down all the same). */
  readonly stopped: boolean
}

/** Stops every session named, engine by engine; the sessions in id order. */
export async function stopSessions(omhState: string, repo: Repository, groups: readonly SessionsOnEngine[]): Promise<StoppedSession[]> {
  const stopped: StoppedSession[] = []
  for (const { runtime, context, sessions } of groups) {
    const containers = await runtime.list({ [LABEL.repo]: repo.id }, context)
    for (const sid of sessions) {
      const mine = containers.filter((c) => c.labels[LABEL.session] === sid)
      // On an engine elsewhere the agent's work is in volumes: home first, then they go.
      await takeDown(omhState, repo, sid, { runtime, context, containers: mine.map((c) => c.id), bringHome: true })
      stopped.push({ session: sid, stopped: mine.some((c) => c.running) })
    }
  }
  return stopped.sort((a, b) => a.session.localeCompare(b.session))
}
