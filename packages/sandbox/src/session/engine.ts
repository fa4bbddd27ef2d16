/**
 * The engine a session lives on. A launch records it once the container is
 * up (`idle.ts`), and every later command on the session follows that record
 * rather than the `runtime` setting: a session launched with `--runtime`
 * naming another engine than the setting's stays on that engine, and is
 * never started a second time on another one over the same worktree.
 */
import { OmhError, SESSION_ELSEWHERE, type RuntimeContext } from '@omh/plugin-api'
import type { KernelView } from '../kernel-view.js'
import { forgetUp, readEngine, readUp } from './idle.js'

/**
 * The engine for a command on session `sid`: the one it is up on, else the
 * one asked for (undefined: the setting's). Asking for another engine while
 * its container is there is SESSION_ELSEWHERE; a record the engine no longer
 * bears out (the container went with the engine's restart) is dropped.
 */
export async function sessionEngine(kernel: KernelView, run: string, sid: string, wanted: string | undefined, context: RuntimeContext): Promise<string | undefined> {
  const engine = await readEngine(run)
  if (!engine) return wanted
  if (wanted === undefined || wanted === 'auto' || wanted === engine) return engine
  const up = await readUp(run)
  const there = !up ? undefined : await kernel.resolveRuntime(up.engine, context).then(
    async ({ runtime }) => (runtime.inspect ? await runtime.inspect(up.container, context) : (await runtime.list({}, context)).find((c) => c.name === up.container)),
    () => undefined,
  )
  if (there) throw OmhError.of(SESSION_ELSEWHERE, { args: [sid, engine, wanted], hintArgs: [sid, engine] })
  await forgetUp(run)
  return wanted
}
