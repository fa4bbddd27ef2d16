/**
 * Phase 3 of a launch: the session's container running this plan, with what stands beside it
 * (egress proxies, services, the port forwarder). A container already running the plan is reused,
 * one whose plan changed is replaced only while nothing runs in it, and the way the session's
 * files reach it (mounted or copied) is settled here, since only the engine can say.
 */
import path from 'node:path'
import {
  GUEST_WORK,
  OmhError,
  SESSION_BUSY,
  SESSION_UP_FAILED,
  isOmhError,
  type ContainerSpec,
  type FileWay,
  type RuntimeContext,
  type RuntimePlugin,
} from '@omh/plugin-api'
import type { KernelView } from '../../kernel-view.js'
import { userSpec, type AgentUser } from '../../agent-user.js'
import { imageOptions } from '@omh/image'
import { CACHE_LABELS, cacheVolumes } from '../../environment/caches.js'
import { startProxies } from '../../network/proxies.js'
import { EGRESS_LABEL, egressDir, sessionEgress, recordedNetwork, removeEgress, type Egress } from '../../network/egress.js'
import { networkOn, outsideOn } from '../../network/engine-network.js'
import { chooseWay, copyPlan, fillVolumes, forgetCopied, linkCommand, writeCopied, type FilesSetting } from '../../engine-files/copied.js'
import { BESIDE_LABEL, ensureForwarder, ensureServices, serviceRecipe, type Service } from '../../network/beside.js'
import { DEFAULT_IDLE_STOP, durationMs, recordUp } from '../idle.js'
import { LABEL, branchOf, type SessionPaths } from '../../host/layout.js'
import { clearMountpoints, prepareMountpoints } from '../mountpoints.js'
import type { SessionPlan } from '../plan.js'
import { decideReuse, liveProcesses, type ReuseDecision } from '../reuse.js'
import { GUEST_SHADOW } from '../shadow.js'
import { answer, ignore, inOrder } from './shared.js'
import type { EarlyWay, EngineView, Launch, LaunchHost, Prepared } from './types.js'

/** Phase 3: the session's container, running this plan: reused, started, or restarted when idle. */
export async function bringUp(at: Launch, sid: string, prepared: Prepared, engine: EngineView, host: LaunchHost): Promise<{ decision: ReuseDecision; way: FileWay }> {
  const { runtime } = engine
  const digest = prepared.spec.labels[LABEL.plan]!
  const decision = await decideReuse(engine.containers, digest, at.adapter.name, (c) => liveProcesses(runtime, c.id, userSpec(at.agent), host.context))
  // A container running this very plan runs from this image, so only a new container asks for it.
  if (decision.action !== 'attach' && decision.action !== 'busy' && !engine.image) await at.images.ensure(at.adapter, runtime, host.context)
  const files = filesSetting(at.kernel)
  const early = engine.way
  const fresh = decision.action === 'up' || decision.action === 'restart'
  const asking = fresh ? fileWay(decision, runtime, prepared, files, host, early) : Promise.resolve<FileWay>('mounted')
  // A container for a session this launch made starts as mounted while the engine's answer about
  // this disk is still on its way, and goes again if the answer is otherwise: the harness runs
  // only once the answer is in. Local engines, which do see it, then wait for one container start, not two.
  const guess = early !== undefined && decision.action === 'up' && files !== 'copied' && !early.settled
  const start: Start = { at, sid, prepared, decision, fresh, runtime, host, ...(engine.proxy ? { proxy: engine.proxy } : {}) }
  // The way the files reach the container that runs, once it is up.
  let started: FileWay
  if (!guess) started = await startOn(start, await asking)
  else {
    const [tried, found] = await Promise.allSettled([startOn(start, 'mounted'), asking])
    if (found.status === 'fulfilled' && found.value === 'mounted') {
      if (tried.status === 'rejected') throw tried.reason
      started = tried.value
    } else {
      if (tried.status === 'fulfilled') {
        await runtime.down(prepared.spec.name!, host.context).catch(ignore)
        await clearMountpoints(prepared.paths.run)
      }
      if (found.status === 'rejected') throw found.reason
      // The proxy's state was asked before the first start, which changed it: the engine is asked again.
      const { proxy: _asked, ...again } = start
      started = await startOn(again, found.value)
    }
  }
  early?.stop()
  const idleStop = at.kernel.settings.last((s) => s.session?.idle_stop)?.value ?? DEFAULT_IDLE_STOP
  await recordUp(prepared.paths.run, { engine: runtime.engine, container: prepared.spec.name!, idleStopMs: durationMs(idleStop) })
  return { decision, way: started }
}

/** What starting the session's container needs: the launch and its plan, and what was decided about the container there. */
interface Start {
  readonly at: Launch
  readonly sid: string
  readonly prepared: Prepared
  readonly decision: ReuseDecision
  /** A new container is made: `up` or `restart`. */
  readonly fresh: boolean
  readonly runtime: RuntimePlugin
  readonly host: LaunchHost
  /** The engine's answer about the egress proxy, asked beside the container's. */
  readonly proxy?: EngineView['proxy']
}

/**
 * Starts what the session needs on the engine, its files reaching the container `way`; resolves
 * the way they reach the container that runs.
 */
async function startOn(start: Start, way: FileWay): Promise<FileWay> {
  const { at, sid, prepared, decision, fresh, runtime, host, proxy: seenProxy } = start
  const egress = await sessionEgress(at.kernel.settings, at.adapter, egressDir(prepared.paths.run))
  // A reused container keeps the way it was started with; the proxies beside it take the same one.
  const copied = (decision.action === 'attach' ? decision.container.labels[LABEL.files] : way) === 'copied'
  const volumesOf = copied ? { copied: { labels: { [LABEL.repo]: at.sessions.repo.id, [LABEL.session]: sid } } } : {}
  // The engine's own network setting: the session's with egress open, its proxies' way out behind the allowlist.
  const engineNetwork =
    egress.mode === 'allowlist'
      ? await outsideOn(at.kernel.settings, runtime, host.context, { make: decision.action !== 'attach' })
      : egress.mode === 'open'
        ? await networkOn(at.kernel.settings, runtime, host.context)
        : undefined
  const outside = engineNetwork ? { outside: engineNetwork } : {}
  let network = egress.mode === 'open' ? (engineNetwork ?? prepared.spec.network) : prepared.spec.network
  // The proxies start beside a new container, which needs only their network; the harness waits for both.
  let proxies: Promise<void> | undefined
  if (egress.mode === 'allowlist' && decision.action !== 'busy') {
    const ca = at.kernel.options.env['OMH_CREDENTIAL_CA']
    const started = await startProxies({
      runtime,
      context: host.context,
      container: prepared.spec.name!,
      repo: at.sessions.repo.id,
      session: sid,
      run: prepared.paths.run,
      egress,
      fresh,
      ...outside,
      image: imageOptions(at.kernel.settings),
      sessionImage: prepared.spec.image,
      agent: at.agent,
      ...(prepared.proxied ? { proxied: prepared.proxied } : {}),
      ...(ca ? { ca } : {}),
      ...volumesOf,
      ...(seenProxy ? { seenEgress: Promise.resolve(seenProxy.found) } : {}),
    })
    network = started.network
    proxies = started.ready
  } else if ((decision.action === 'up' || decision.action === 'restart') && (await recordedNetwork(egressDir(prepared.paths.run)))) {
    // Egress changed from the allowlist: the old proxy serves no one, and its record would make
    // `omh attach` take the new container for one behind it.
    await removeEgress(runtime, prepared.spec.name!, egressDir(prepared.paths.run), host.context)
  }
  // Services and the port forwarder start beside the container, on its network; the harness waits for the services.
  const beside = decision.action === 'busy' ? undefined : startBeside(at, prepared, runtime, host, egress, network, copied, engineNetwork)
  // A container replaced is replaced only once its proxies are up, so a proxy that fails leaves the old one as it was.
  if (decision.action !== 'up') await proxies
  const acting = act(decision, {
    runtime,
    spec: withNetwork({ ...prepared.spec, env: prepared.secretEnv ?? prepared.spec.env }, network),
    planned: prepared.planned,
    paths: prepared.paths,
    sid,
    harness: at.adapter.name,
    host,
    way,
    repo: at.sessions.repo.id,
    agent: at.agent,
  })
  const [proxied, acted, besides] = await Promise.allSettled([proxies, acting, beside])
  if (besides.status === 'rejected' && acted.status === 'fulfilled' && proxied.status === 'fulfilled') throw besides.reason
  if (proxied.status === 'rejected') {
    // A new container that started while its proxy failed is not left running without it, as if
    // it had never started, which it had not when the proxies started first.
    if (acted.status === 'fulfilled' && decision.action === 'up') {
      await runtime.down(prepared.spec.name!, host.context).catch(ignore)
      await clearMountpoints(prepared.paths.run)
    }
    throw proxied.reason
  }
  if (acted.status === 'rejected') throw acted.reason
  return copied ? 'copied' : 'mounted'
}

/**
 * The session's services and port forwarder, on its network: behind the egress proxy its internal
 * one, with the forwarder publishing on the outside one; with egress open, the network it runs on
 * (services need one where names resolve: `[session] network`). What cannot be had is said, not
 * failed: the harness starts without a port; a service that is asked for and cannot run fails.
 */
async function startBeside(at: Launch, prepared: Prepared, runtime: RuntimePlugin, host: LaunchHost, egress: Egress, network: string | undefined, copied: boolean, outside: string | undefined): Promise<void> {
  const services = at.kernel.settings.last((s) => s.services)?.value ?? {}
  const ports = egress.mode === 'allowlist' ? (prepared.environment?.ports ?? []) : []
  const names = Object.keys(services)
  // Nothing asked for, nothing started: what an earlier launch left beside goes at `down` and `rm`.
  if (!names.length && !ports.length) return
  const joined = egress.mode === 'none' ? undefined : network
  if (copied || !joined || !runtime.networks) {
    if (names.length || ports.length) host.notice(`services and ports need the session on a network of omh's or [session] network${copied ? ", on an engine that shares this disk" : ''}: ${[...names.map((n) => `service ${n}`), ...ports.map((p) => `port ${p}`)].join(', ')} left out`)
    return
  }
  const images: Record<string, { service: Service; image: string }> = {}
  for (const name of names) {
    const service = services[name]!
    const recipe = serviceRecipe(service, imageOptions(at.kernel.settings))
    if (!(await runtime.hasImage(recipe.tag, host.context))) {
      host.context.progress(`Getting the image of the service ${name}: ${service.image}`)
      await runtime.build(recipe, host.context)
    }
    images[name] = { service, image: recipe.tag }
  }
  const container = prepared.spec.name!
  const besideAt = {
    runtime,
    context: host.context,
    container,
    labels: { [EGRESS_LABEL]: `${at.sessions.repo.id}-${path.basename(prepared.paths.run)}`, [BESIDE_LABEL]: container },
    network: joined,
    ...(outside && egress.mode === 'allowlist' ? { outside } : {}),
    ...(prepared.spec.limits ? { limits: prepared.spec.limits } : {}),
  }
  const present = await runtime.list({ [BESIDE_LABEL]: container }, host.context)
  const [, unpublished] = await inOrder(ensureServices(besideAt, images, present), ensureForwarder(besideAt, prepared.spec.image, ports, present))
  if (unpublished) host.notice(unpublished)
}

/**
 * Whether a relaunch may go straight to the exec while nothing it read changes: a session, named
 * or the current one, whose running container this launch reused as it was, with nothing the exec
 * does not repeat (files to copy back, a credential proxy holding keys from the environment,
 * plugins' launch taps). Which session is current was read from the sessions' stamps, so a launch
 * into another one since is a change the relaunch sees; one that went elsewhere because the
 * current was busy is not kept.
 */
export function keepable(at: Launch, decision: ReuseDecision, prepared: Prepared, runtime: RuntimePlugin): boolean {
  return (
    runtime.client !== undefined &&
    !at.request.fresh &&
    at.request.name === undefined &&
    !at.request.skip?.length &&
    decision.action === 'attach' &&
    decision.container.labels[LABEL.files] === 'mounted' &&
    !prepared.proxied &&
    !at.hooks.beforeLaunch.taps.length &&
    !at.hooks.launched.taps.length
  )
}

/**
 * How a new container gets the session's files. A container replaced on the engine it ran on keeps
 * its way; any other is checked: the engine a session's last container ran on may not be this one.
 */
async function fileWay(decision: ReuseDecision, runtime: RuntimePlugin, prepared: Prepared, files: FilesSetting, host: LaunchHost, early?: EarlyWay): Promise<FileWay> {
  const before = decision.action === 'restart' ? decision.container.labels[LABEL.files] : undefined
  if ((before === 'mounted' || before === 'copied') && (files === 'auto' || files === before)) return before
  // The answer asked while the session was made stands for the image it was asked about; a
  // `beforeLaunch` tap that changed the image has it asked again.
  if (early) {
    const settled = await early.answer
    if (early.image === prepared.spec.image) return answer(Promise.resolve(settled))
  }
  return chooseWay(runtime, prepared.spec.image, files, path.dirname(prepared.paths.run), host.context)
}

/** `[session] files`: how a new container is to get the session's files. */
export const filesSetting = (kernel: KernelView): FilesSetting => kernel.settings.last((s) => s.session?.files)?.value ?? 'auto'

async function act(
  decision: ReuseDecision,
  at: {
    runtime: RuntimePlugin
    spec: ContainerSpec
    planned: SessionPlan
    paths: SessionPaths
    sid: string
    harness: string
    host: LaunchHost
    way: FileWay
    repo: string
    agent: AgentUser
  },
): Promise<void> {
  const { runtime, host } = at
  if (decision.action === 'attach') return
  if (decision.action === 'busy') {
    throw OmhError.of(SESSION_BUSY, {
      args: [at.sid, decision.why, decision.processes],
      hintArgs: [at.sid, at.harness],
      details: { session: at.sid, why: decision.why },
    })
  }
  if (decision.action === 'restart') {
    host.notice(`restarting the container of ${branchOf(at.sid)}: ${decision.why}`)
    await runtime.down(decision.container.id, host.context)
    await clearMountpoints(at.paths.run)
  }
  const way = at.way
  const spec = { ...at.spec, labels: { ...at.spec.labels, [LABEL.files]: way } }
  if (way === 'mounted') {
    await forgetCopied(at.paths.run)
    await prepareMountpoints(at.paths.run, at.planned.mountpoints)
  }
  try {
    await ensureCaches(runtime, spec.volumes ?? [], at.repo, host.context)
    if (way === 'mounted') await runtime.up(spec, host.context)
    else await upCopied(runtime, spec, at.paths, at.agent, { [LABEL.repo]: at.repo, [LABEL.session]: at.sid }, host.context)
  } catch (error) {
    await runtime.down(at.spec.name!, host.context).catch(ignore)
    await clearMountpoints(at.paths.run)
    if (isOmhError(error)) throw error
    throw OmhError.of(SESSION_UP_FAILED, { args: [at.sid, (error as Error).message?.split('\n')[0] ?? String(error)], cause: error })
  }
}

/**
 * Makes the repository's cache volumes the spec mounts that the engine does
 * not hold yet, with the labels `omh caches` finds them by: a volume an engine
 * makes on its own for a mount has none. One question when all are there.
 */
async function ensureCaches(runtime: RuntimePlugin, volumes: readonly { readonly volume: string }[], repo: string, context: RuntimeContext): Promise<void> {
  const caches = cacheVolumes(repo).filter((c) => volumes.some((v) => v.volume === c.volume))
  if (!caches.length || !runtime.volumes) return
  const there = new Set(await runtime.volumes.list({ [CACHE_LABELS.repo]: repo }, context))
  await Promise.all(caches.filter((c) => !there.has(c.volume)).map((c) => runtime.volumes!.create(c.volume, { [CACHE_LABELS.repo]: repo, [CACHE_LABELS.tool]: c.tool }, context)))
}

function withNetwork(spec: ContainerSpec, network: string | undefined): ContainerSpec {
  if (network) return { ...spec, network }
  const { network: _none, ...rest } = spec
  return rest
}

/** Starts a session's container on an engine that does not share this disk: its volumes filled, then its links made. */
async function upCopied(runtime: RuntimePlugin, spec: ContainerSpec, paths: SessionPaths, agent: AgentUser, labels: Record<string, string>, context: RuntimeContext): Promise<void> {
  const plan = await copyPlan(spec, spec.name!, { uid: agent.uid, gid: agent.gid }, [GUEST_WORK, GUEST_SHADOW])
  await fillVolumes(runtime, plan, labels, context)
  await runtime.up(plan.spec, context)
  await writeCopied(paths.run, plan)
  const linked = await runtime.exec(spec.name!, linkCommand(plan), { tty: false, capture: true, user: spec.user }, context)
  if (linked.exitCode !== 0) throw new Error(`could not link omh's files into place: ${linked.stderr.trim()}`)
}
