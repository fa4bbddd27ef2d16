/**
 * Phase 4 of a launch, and its undoing: the harness runs with the user's terminal while edits to
 * the allowlist reach its proxy, and a session this launch made but could not start goes again,
 * so a failed first launch leaves nothing behind.
 */
import path from 'node:path'
import { DETACH_UNSUPPORTED, GUEST_WORK, HARNESS_RUNNING, OmhError, type FileWay, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import { userSpec } from '../../agent-user.js'
import { copyBack } from '../../engine-files/copied.js'
import { egressDir, egressOf, proxyName, sessionAllowFile, sessionEgress, watchAllowlist } from '../../network/egress.js'
import { removeSession } from '../create.js'
import { offerKeptLaunch, type KeptLaunchOffer } from '../kept.js'
import { containerName } from '../../host/layout.js'
import { DETACHED_ALREADY, DETACHED_NO_DTACH } from '../plan.js'
import { clearMountpoints } from '../mountpoints.js'
import { recordLaunch, stateHooks } from '../state.js'
import { takeDown } from '../teardown.js'
import { ignore } from './shared.js'
import type { Launch, LaunchHost, Prepared } from './types.js'

/**
 * Phase 4: the harness, with the user's terminal; its exit status is the launch's. In the
 * background, the exec returns once dtach runs the harness, and the launch with it.
 */
export async function run(
  at: Launch,
  prepared: Prepared,
  runtime: RuntimePlugin,
  host: LaunchHost,
  way: FileWay,
  kept?: Pick<KeptLaunchOffer, 'containers' | 'run' | 'harness'>,
  harnessStarted?: () => void,
): Promise<number> {
  const { kernel, adapter } = at
  if (at.request.detach) return detached(at, prepared, runtime, host, way, harnessStarted)
  const allowlist = egressOf(kernel.settings, adapter).mode === 'allowlist'
  const dir = egressDir(prepared.paths.run)
  const files = [path.join(kernel.omhHome, 'settings.toml'), ...kernel.settings.layers.filter((l) => l.name !== 'defaults').map((l) => l.file), sessionAllowFile(dir)]
  // While the harness runs, an edit to the allowlist reaches its proxy at once.
  const stop = allowlist
    ? watchAllowlist({
        runtime,
        context: host.context,
        container: prepared.spec.name!,
        dir,
        files,
        allow: async () => (await sessionEgress(await kernel.rereadSettings(), adapter, dir)).allow,
      })
    : undefined
  const options = {
    tty: at.request.tty,
    interactive: true,
    user: userSpec(at.agent),
    workdir: GUEST_WORK,
    env: { OMH_HARNESS: at.adapter.name },
  }
  if (kept && runtime.client) {
    const container = prepared.spec.name!
    const containers = allowlist ? [...kept.containers, proxyName(container)] : kept.containers
    offerKeptLaunch({
      ...kept,
      containers,
      check: runtime.client.containerState(containers),
      exec: runtime.client.exec(container, prepared.plan.exec, options, host.context),
      ...(allowlist ? { allowlist: { files, dir, container, engine: runtime.engine } } : {}),
    })
  }
  await recordLaunch(prepared.paths.run, { harness: adapter.name, from: stateHooks(adapter).length ? 'hooks' : 'process', started: Math.floor(Date.now() / 1000) })
  const running = runtime.exec(prepared.spec.name!, prepared.plan.exec, options, host.context)
  harnessStarted?.()
  const result = await running.finally(() => stop?.())
  // What the agent did on an engine elsewhere is brought home as soon as the harness is done.
  await copyBack(runtime, prepared.paths.run, host.context)
  await at.hooks.launched.promise(prepared.plan, result.exitCode)
  return result.exitCode
}

/**
 * Starts the harness under dtach and returns. The session's network and the allowlist the
 * container was given stay; an edit to the settings' allowlist reaches the proxy at the next
 * launch or attach (`omh sessions allow` reaches it at once).
 */
async function detached(at: Launch, prepared: Prepared, runtime: RuntimePlugin, host: LaunchHost, way: FileWay, harnessStarted?: () => void): Promise<number> {
  const sid = prepared.plan.session
  // Work done on an engine that does not share this disk comes home when a launch that waits sees the harness exit.
  if (way === 'copied') {
    throw OmhError.of(DETACH_UNSUPPORTED, { args: [at.adapter.name, sid, 'its files are copied to an engine that does not share this disk'], hintArgs: [at.adapter.name] })
  }
  const options = { tty: false, interactive: false, user: userSpec(at.agent), workdir: GUEST_WORK, env: { OMH_HARNESS: at.adapter.name } }
  const result = await runtime.exec(prepared.spec.name!, prepared.plan.exec, options, host.context)
  if (result.exitCode === 0) harnessStarted?.()
  if (result.exitCode === DETACHED_ALREADY) throw OmhError.of(HARNESS_RUNNING, { args: [at.adapter.name, sid], hintArgs: [at.adapter.name, sid] })
  if (result.exitCode === DETACHED_NO_DTACH) throw OmhError.of(DETACH_UNSUPPORTED, { args: [at.adapter.name, sid, "the session's image has no dtach"], hintArgs: [at.adapter.name] })
  // Kept on the host, for `omh sessions show`: what the harness was started with, as the user typed it.
  const { args } = at.request
  if (result.exitCode === 0) {
    await recordLaunch(prepared.paths.run, { harness: at.adapter.name, from: stateHooks(at.adapter).length ? 'hooks' : 'process', started: Math.floor(Date.now() / 1000), ...(args.length ? { prompt: [...args] } : {}) })
  }
  return result.exitCode
}

/** Removes a session this launch created and could not start, with whatever of it exists. */
export async function discard(at: Launch, sid: string, runtime: RuntimePlugin | undefined, context: RuntimeContext): Promise<void> {
  const { kernel, sessions } = at
  // The launch's own error is the one to report; each step here is best effort for the same reason.
  // A copied session's volumes go too: the next new session takes this id and would find them filled.
  if (runtime) await takeDown(kernel.omhState, sessions.repo, sid, { runtime, context, containers: [containerName(sessions.repo, sid)], bringHome: false, bestEffort: true })
  else await clearMountpoints(sessions.paths(sid).run).catch(ignore)
  await removeSession(kernel.omhState, sessions.repo, sid, kernel.options.env, { deleteBranch: true })
}
