/**
 * Phase 1 of a launch: the session it holds. A new session's preconditions are checked, and its
 * image built, before the repository's lock is taken, so a failing or slow launch neither leaves a
 * half-made session nor keeps other launches waiting; the engine's answers asked on the way come
 * back with the claim so later phases need not ask again.
 */
import path from 'node:path'
import type { RuntimeContext } from '@omh/plugin-api'
import type { KernelView } from '../../kernel-view.js'
import { chooseWay } from '../../engine-files/copied.js'
import { planCarryIn, type CarryFile } from '../../work/carry-in.js'
import { createSession } from '../create.js'
import { sessionEngine } from '../engine.js'
import { gitFailure } from '../../host/git.js'
import { LABEL, containerName } from '../../host/layout.js'
import { proxyName } from '../../network/egress.js'
import { resolveBase, type Base } from '../../host/repo.js'
import type { PickedSession, Sessions } from '../sessions.js'
import { claimSession, withRepoLock } from '../store.js'
import { filesSetting } from './bring-up.js'
import { early, inOrder } from './shared.js'
import { claimSpare, markNewSpare } from './spare.js'
import type { Claimed, EarlyWay, EngineView, Launch, LaunchHost, LaunchRequest } from './types.js'

/**
 * Phase 1: holds a session. What a new session needs (an engine, a base to
 * branch from, the image) is checked before anything is made, and a build
 * happens here, outside the lock, so other launches do not wait on it; the
 * engine's answer about it comes back with the claim.
 */
export async function claim(at: Launch, first: PickedSession, host: LaunchHost): Promise<Claimed> {
  const { kernel, sessions } = at
  // A prepared spare that still holds is this `--new`'s session, with nothing to make or check on the engine.
  const spare = first.exists ? undefined : await claimSpare(at, (sid) => view(kernel, sessions, at.request, sid, host.context))
  if (spare) return spare
  const ready = first.exists ? undefined : await readyToCreate(at, first.sid, host.context)
  let late: Awaited<ReturnType<typeof readyToCreate>> | undefined
  try {
    const held = await withRepoLock(kernel.omhState, sessions.repo, async () => {
      const { sid, exists, lastUsed } = await sessions.pickForLaunch(at.request)
      if (!exists) {
        const { base, carry } = ready ?? (late = await readyToCreate(at, sid, host.context))
        if (at.request.spare) await markNewSpare(at, sid, base.commit, carry)
        await createSession(kernel.omhState, sessions.repo, sid, base, kernel.options.env, carry).catch(gitFailure(`creating session ${sid}`, sessions.repo.root))
      }
      return { sid, created: !exists, lastUsed, release: await claimSession(kernel.omhState, sessions.repo, sid, at.adapter.name) }
    })
    // A later question about another engine's view is not this launch's: only the first stands.
    late?.engine.way?.stop()
    if (ready && held.sid === first.sid && held.created) return { ...held, engine: ready.engine }
    ready?.engine.way?.stop()
    if (ready && held.sid === first.sid) {
      // Made meanwhile by another launch: the engine's answer stands, the early question is not this launch's.
      const { way: _way, ...view } = ready.engine
      return { ...held, engine: view }
    }
    return held
  } catch (error) {
    ready?.engine.way?.stop()
    late?.engine.way?.stop()
    throw error
  }
}

/** A new session's preconditions: the files it carries in, an engine, a base, the harness image (built when missing). */
async function readyToCreate(at: Launch, sid: string, context: RuntimeContext): Promise<{ base: Base; engine: EngineView; carry: CarryFile[] }> {
  const carry = await planCarryIn(at.kernel, at.sessions.repo.root, at.kernel.options.env)
  const tag = await at.images.tag(at.adapter)
  // A base that cannot be resolved stops a build before it starts, or while it runs.
  const stop = new AbortController()
  const signal = context.signal ? AbortSignal.any([context.signal, stop.signal]) : stop.signal
  const engine = view(at.kernel, at.sessions, at.request, sid, context, tag)
  const base = resolveBase(at.sessions.repo, at.kernel.options.env).catch((error: unknown) => {
    stop.abort()
    throw error
  })
  const image = engine.then((e) => (e.image ? tag : at.images.ensure(at.adapter, e.runtime, { ...context, signal })))
  // The engine's container start that checks whether it sees this disk takes about as long as
  // making the session (git) and staging its files, so it runs beside them once the image is there.
  const way = earlyWay(at.kernel, engine, image, path.dirname(at.sessions.paths(sid).run), context, signal)
  const [found, resolved] = await inOrder(engine, base, image).catch((error: unknown) => {
    way.stop()
    throw error
  })
  return { base: resolved, engine: { ...found, image: true, way }, carry }
}

/** Starts the file-way question about `image` as soon as it exists; stopped, it kills the engine's client. */
function earlyWay(kernel: KernelView, engine: Promise<EngineView>, image: Promise<string>, near: string, context: RuntimeContext, signal: AbortSignal): EarlyWay {
  const stop = new AbortController()
  const both = AbortSignal.any([signal, stop.signal])
  let tag = ''
  const asked = Promise.all([engine, image]).then(([{ runtime }, built]) => {
    tag = built
    if (both.aborted) throw both.reason
    return chooseWay(runtime, built, filesSetting(kernel), near, { ...context, signal: both })
  })
  let settled = false
  const answer = early(asked).finally(() => (settled = true))
  return {
    get image() {
      return tag
    },
    get settled() {
      return settled
    },
    answer,
    stop: () => stop.abort(),
  }
}

/**
 * Finds the engine by asking it for the session's container: the answer
 * proves it usable (so it stands in for `detect`) and is what the launch
 * decides on. `list` is asked only when the container by that name is not
 * clearly this session's, or the runtime cannot be asked by name.
 */
export async function view(
  kernel: KernelView,
  sessions: Sessions,
  request: Pick<LaunchRequest, 'engine'>,
  sid: string,
  context: RuntimeContext,
  imageTag?: string,
): Promise<EngineView> {
  const labels = { [LABEL.repo]: sessions.repo.id, [LABEL.session]: sid }
  const engine = await sessionEngine(kernel, sessions.paths(sid).run, sid, request.engine, context)
  const behindProxy = (kernel.settings.egress?.value ?? 'allowlist') === 'allowlist'
  const reached = await kernel.resolveRuntime(engine, context, {
    probe: (runtime) =>
      runtime.inspect
        ? Promise.all([
            runtime.inspect(containerName(sessions.repo, sid), context),
            // Its egress proxy, beside it: a launch into a running session behind the allowlist asks
            // about both, and asking here saves asking in turn. An engine that cannot say is asked again later.
            behindProxy
              ? runtime.inspect(proxyName(containerName(sessions.repo, sid)), context).then(
                  (found) => ({ found }),
                  () => undefined,
                )
              : undefined,
            // Only what a new session needs: whether to build. Read-only, so asking an engine that
            // turns out not to be the one costs nothing; an engine that cannot say means "build".
            imageTag === undefined ? undefined : runtime.hasImage(imageTag, context).then(
              (has) => has,
              () => false,
            ),
          ])
        : undefined,
  })
  const { runtime } = reached
  if (!reached.probed) return { runtime, containers: await runtime.list(labels, context) }
  const [named, proxy, image] = reached.answer
  const ours = named && Object.entries(labels).every(([key, value]) => named.labels[key] === value)
  const containers = !named ? [] : ours ? [named] : await runtime.list(labels, context)
  const egress = proxy && (!proxy.found || ours) ? { proxy: proxy.found ? { found: proxy.found } : {} } : {}
  return { runtime, containers, ...egress, ...(image === undefined ? {} : { image }) }
}
