import type { ContainerInfo, RuntimeContext, RuntimePlugin } from '@omh/plugin-api'
import { LABEL } from '../host/layout.js'
import { KEEPER } from './plan.js'

/** What to do with a session's container for a new plan. */
export type ReuseDecision =
  | { readonly action: 'up' }
  | { readonly action: 'attach'; readonly container: ContainerInfo }
  | { readonly action: 'restart'; readonly container: ContainerInfo; readonly why: string }
  | { readonly action: 'busy'; readonly container: ContainerInfo; readonly why: string; readonly processes: readonly string[] }

/**
 * The plan is the question: a running container stamped with the same plan
 * is reused as it is; one with another plan (or none, or stopped) is
 * replaced, unless something is still running in it (or it cannot tell), which
 * is never cut off.
 * `processes` is asked only when the answer depends on it.
 */
export async function decideReuse(
  existing: readonly ContainerInfo[],
  digest: string,
  harness: string,
  processes: (container: ContainerInfo) => Promise<readonly string[] | undefined>,
): Promise<ReuseDecision> {
  const container = existing[0]
  if (!container) return { action: 'up' }
  if (!container.running) return { action: 'restart', container, why: 'it was stopped' }
  const stamped = container.labels[LABEL.plan]
  if (stamped === digest) return { action: 'attach', container }
  const live = await processes(container)
  const why = changed(container, harness, stamped)
  // A running container that cannot say what runs in it is more often a loaded engine than a
  // broken one, and replacing it could cut a harness off; `sessions down` is the user's call.
  if (live === undefined) return { action: 'busy', container, why, processes: [] }
  if (live.length) return { action: 'busy', container, why, processes: live }
  return { action: 'restart', container, why }
}

function changed(container: ContainerInfo, harness: string, stamped: string | undefined): string {
  if (!stamped) return 'it carries no plan, so nothing about it can be verified'
  const before = container.labels[LABEL.harness]
  if (before && before !== harness) return `it was set up for ${before}`
  return 'its image, mounts or environment changed'
}

/**
 * Lists what runs in a session container besides its init and keeper, one
 * `pid command` per line; this script and its own children are left out.
 * Any line means someone is working in the container. Asks /proc rather
 * than a supervisor, so a harness started without one counts too.
 */
export const LIVENESS_SCRIPT = `self=$$
for d in /proc/[0-9]*; do
  p=\${d#/proc/}
  [ "$p" = 1 ] && continue
  [ "$p" = "$self" ] && continue
  ppid=
  while read -r k v; do if [ "$k" = PPid: ]; then ppid=$v; break; fi; done < "$d/status" 2>/dev/null
  [ -z "$ppid" ] && continue
  [ "$ppid" = "$self" ] && continue
  cmd=$(tr '\\0' ' ' < "$d/cmdline" 2>/dev/null)
  [ -z "$cmd" ] && continue
  [ "$ppid" = 1 ] && [ "$cmd" = "${KEEPER.join(' ')} " ] && continue
  echo "$p $cmd"
done`

/** Parses the script's output into command lines. */
export const parseLiveness = (stdout: string): string[] =>
  stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => l.replace(/^\d+\s+/, ''))

/** The processes running in a container besides its keeper, as `user` sees them; undefined when the container cannot say. */
export async function liveProcesses(runtime: RuntimePlugin, container: string, user: string, context: RuntimeContext): Promise<string[] | undefined> {
  try {
    const r = await runtime.exec(container, ['sh', '-c', LIVENESS_SCRIPT], { tty: false, capture: true, user }, context)
    return r.exitCode === 0 ? parseLiveness(r.stdout) : undefined
  } catch {
    return undefined
  }
}
