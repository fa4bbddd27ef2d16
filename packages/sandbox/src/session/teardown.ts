import type { RuntimeContext, RuntimePlugin } from '@omh/plugin-api'
import { copyBack, removeVolumes } from '../engine-files/copied.js'
import { egressDir, removeEgress } from '../network/egress.js'
import { forgetUp } from './idle.js'
import { LABEL, containerName, sessionPaths } from '../host/layout.js'
import { clearMountpoints } from './mountpoints.js'
import type { Repository } from '../host/repo.js'

/** How a session comes off its engine. */
export interface TakeDown {
  readonly runtime: RuntimePlugin
  readonly context: RuntimeContext
  /** The containers to stop, by id; absent, every one carrying the session's labels. */
  readonly containers?: readonly string[]
  /**
   * Bring the agent's work home from a copied session's volumes before they go (`down`). A session
   * removed whole (`rm`, or a launch's own new session that never started) takes its volumes with it.
   */
  readonly bringHome: boolean
  /**
   * Go on past a step that fails: a failed launch cleaning up after itself has its own error to
   * report. Bringing the work home is no such step: volumes whose work did not come home stay.
   */
  readonly bestEffort?: boolean
}

/**
 * Takes a session off its engine: its containers, its egress proxy and networks and, for a
 * session whose files were copied in, its volumes (found by the session's labels, so those of a
 * container that never started go too). What stays on the host (worktree, branch, sandbox
 * repository) is the caller's to keep or remove. Resolves how many volumes it removed.
 */
export async function takeDown(omhState: string, repo: Repository, sid: string, how: TakeDown): Promise<number> {
  const { runtime, context } = how
  const run = sessionPaths(omhState, repo, sid).run
  const labels = { [LABEL.repo]: repo.id, [LABEL.session]: sid }
  const step = async (work: () => Promise<unknown>) => {
    if (!how.bestEffort) return void (await work())
    await work().catch(() => undefined)
  }
  let containers = how.containers ?? []
  if (!how.containers) await step(async () => (containers = (await runtime.list(labels, context)).map((c) => c.id)))
  for (const id of containers) await step(() => runtime.down(id, context))
  await step(() => removeEgress(runtime, containerName(repo, sid), egressDir(run), context))
  if (how.bringHome) await copyBack(runtime, run, context)
  let volumes = 0
  await step(async () => (volumes = await removeVolumes(runtime, labels, run, context)))
  await step(() => clearMountpoints(run))
  await step(() => forgetUp(run))
  return volumes
}
