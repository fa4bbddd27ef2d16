/**
 * Removing a session whole, as `omh sessions rm` does, with the rule that guards it: work that
 * exists nowhere else (commits no other ref has, uncommitted files, or what git cannot tell) stops
 * the removal unless it is forced. The command parses, calls this and prints; the rule lives here.
 */
import { OmhError, SESSION_UNSAVED_WORK, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import { readCopied } from '../engine-files/copied.js'
import { unsavedWork, type Count } from '../work/work.js'
import { removeSession } from './create.js'
import { branchOf, sessionPaths } from '../host/layout.js'
import { clearMountpoints } from './mountpoints.js'
import type { Repository } from '../host/repo.js'
import { takeDown } from './teardown.js'

type Env = Readonly<Record<string, string | undefined>>

export interface SessionRemoval {
  /** What a forced removal gave up: commits and files that existed nowhere else. */
  readonly discarded: { readonly commits: Count; readonly uncommitted: Count }
  /** What the user must still do by hand: containers or volumes omh could not reach. */
  readonly warnings: readonly string[]
}

/**
 * Removes a session's container, worktree, branch and sandbox repository. `engine` finds the engine
 * the session runs on, asked only once the rule lets the removal go on; undefined: none was reached.
 */
export async function removeWholeSession(
  omhState: string,
  repo: Repository,
  sid: string,
  options: { readonly force: boolean; readonly env: Env; readonly engine: () => Promise<{ readonly runtime: RuntimePlugin; readonly context: RuntimeContext } | undefined> },
): Promise<SessionRemoval> {
  const work = await unsavedWork(omhState, repo, sid, options.env)
  const held = [
    work.commits === 'unknown' ? 'commits omh could not count' : work.commits ? `${work.commits} commit${work.commits === 1 ? '' : 's'} on ${branchOf(sid)} no other branch has` : '',
    work.uncommitted === 'unknown' ? 'files git could not check' : work.uncommitted ? `${work.uncommitted} uncommitted file${work.uncommitted === 1 ? '' : 's'}` : '',
  ].filter(Boolean)
  if (held.length && !options.force) throw OmhError.of(SESSION_UNSAVED_WORK, { args: [sid, held.join(' and ')], hintArgs: [sid] })

  const warnings: string[] = []
  const run = sessionPaths(omhState, repo, sid).run
  // The record of a copied session's volumes goes with the session: the last time omh can name them.
  const volumes = (await readCopied(run))?.volumes.map((v) => v.volume) ?? []
  const engine = await options.engine()
  if (engine) {
    const { runtime, context } = engine
    const removed = await takeDown(omhState, repo, sid, { runtime, context, bringHome: false })
    if (volumes.length && !removed) {
      warnings.push(`${sid}'s files were copied into volumes on an engine that does not share this disk, and ${runtime.engine} here has none of them: remove them on the engine the session ran on (${volumes.join(', ')}).`)
    }
  } else {
    const also = volumes.length ? `, its volumes ${volumes.join(', ')}` : ''
    warnings.push(`If a container of ${sid} remains, remove it with your engine (its name is omh-${repo.id}-${sid}${also}).`)
    await clearMountpoints(run)
  }
  await removeSession(omhState, repo, sid, options.env, { deleteBranch: true })
  return { discarded: work, warnings }
}
