/**
 * The launch: four phases (claim, prepare, bring up, run), each a function
 * with a typed result, and the one `try/finally` that releases the claim.
 *
 * Longer than 400 lines: the phases share the launch's types and its order of
 * events; a file per phase waits for the split of the sandbox by capability.
 */
import path from 'node:path'
import {
  GUEST_WORK,
  OmhError,
  SESSION_BUSY,
  SESSION_UP_FAILED,
  isOmhError,
  type ContainerInfo,
  type ContainerSpec,
  type FileWay,
  type LaunchPlan,
  type RuntimeContext,
  type RuntimePlugin,
} from '@omh/plugin-api'
import type { Adapter, HarnessRender, Kernel, RenderReport } from '@omh/kernel'
import { stage } from '../stage.js'
import { chooseAccount } from '../accounts.js'
import { agentUser, userSpec, type AgentUser } from '../agent-user.js'
import { ensureImage } from '../image/ensure.js'
import { imageOptions, planImages } from '../image/recipes.js'
import { CACHE_LABELS, cacheVolumes } from '../environment/caches.js'
import { projectEnvironment, type EnvironmentInput, type ProjectEnvironment, type SetupStep } from '../environment/project.js'
import { setUpSession, setupDone } from '../environment/setup.js'
import { BESIDE_LABEL, ensureForwarder, ensureServices, publishedPorts, serviceRecipe, type Service, type SessionPort } from './beside.js'
import { GUEST_SSH_PORT } from '../ssh.js'
import { createSession, removeSession } from './create.js'
import { gitFailure } from './git.js'
import { LABEL, branchOf, containerName, credentialsDir, stagingDir, type SessionPaths } from './layout.js'
import { clearMountpoints, prepareMountpoints } from './mountpoints.js'
import { findSecret, resolveSecrets, secretsFile } from '../secrets.js'
import { makeAuthority, sessionAuthority } from '../network/authority.js'
import { boundSecrets, bundleKeeper, declaredSecrets, GUEST_AUTHORITY, secretHosts, withBound, withPlaceholders } from '../network/bound-secrets.js'
import { keptKeys, sessionToken, type KeptKeys } from '../network/credentials.js'
import { startProxies } from '../network/proxies.js'
import { EGRESS_LABEL, egressDir, egressOf, sessionAllowFile, sessionEgress, watchAllowlist, networkName, proxyEnv, proxyName, recordedNetwork, removeEgress, type Egress } from '../network/egress.js'
import { offerKeptLaunch, type KeptLaunchOffer } from './kept.js'
import { sessionLimits } from '../network/limits.js'
import { contentDigests, credentialMounts, harnessArgv, KEEPER, planDigest, planSession, type CredentialMount, type SessionPlan } from './plan.js'
import { prepareCredentials, stageForAgent, stagedMounts, withGitfile } from './prepare.js'
import { resolveBase, type Base } from './repo.js'
import { decideReuse, liveProcesses, type ReuseDecision } from './reuse.js'
import { Sessions, type PickedSession, type SessionChoice } from './sessions.js'
import { GUEST_SHADOW, hideMounts } from './shadow.js'
import { claim as claimOf, withRepoLock } from './store.js'
import { carriedPaths, planCarryIn, type CarryFile } from '../work/carry-in.js'
import { keptSetupsDir } from '../environment/reuse-setup.js'
import { sessionEngine } from './engine.js'
import { networkOn, outsideOn } from '../network/engine-network.js'
import { DEFAULT_IDLE_STOP, durationMs, recordUp, touchUp } from './idle.js'
import { takeDown } from './teardown.js'
import { chooseWay, copyBack, copyPlan, fillVolumes, forgetCopied, linkCommand, writeCopied, type FilesSetting } from '../engine-files/copied.js'

/** omh's own image recipes: the project's environment, the harness tools and the session image, tagged by digest. */
export function recipes(kernel: Kernel): ImageSource {
  let planned: Promise<ProjectEnvironment> | undefined
  const environment = () => (planned ??= projectEnvironment(environmentInput(kernel), imageOptions(kernel.settings)))
  const plan = async (adapter: Adapter) => planImages(adapter, { ...imageOptions(kernel.settings), agent: agentUser() }, (await environment()).image)
  return {
    tag: async (adapter) => (await plan(adapter)).harness.tag,
    ensure: async (adapter, runtime, context) => (await ensureImage(runtime, await plan(adapter), context, adapter.file)).tag,
    environment,
  }
}

/** What the project's environment is planned from, as the kernel holds it. */
export const environmentInput = (kernel: Kernel): EnvironmentInput => ({
  settings: kernel.settings,
  ...(kernel.repoRoot ? { repoRoot: kernel.repoRoot } : {}),
  env: kernel.options.env,
  locations: { defaults: kernel.options.defaultsFile, omhHome: kernel.omhHome, omhState: kernel.omhState, cwd: kernel.options.cwd },
})

/** Where a harness's image comes from. The session layer only asks for a tag. */
export interface ImageSource {
  /** The tag the adapter's image has or will have, without touching an engine. */
  tag(adapter: Adapter): string | Promise<string>
  /** Makes sure the image exists (building what is missing) and resolves its tag. */
  ensure(adapter: Adapter, runtime: RuntimePlugin, context: RuntimeContext): Promise<string>
  /** The project's environment the image is made of: its setup, ports and caches. Absent: none of those. */
  environment?(): Promise<ProjectEnvironment>
}

export interface LaunchRequest extends SessionChoice {
  readonly harness: string
  /** Arguments for the harness, passed on untouched. */
  readonly args: readonly string[]
  /** `auto` or an engine name; absent: the `runtime` setting. */
  readonly engine?: string
  /** `-a`: the captured account whose login to mount; absent: the `account` setting, or the only one captured. */
  readonly account?: string
  /** Give the harness the user's terminal. */
  readonly tty: boolean
}

/** What the launch tells the user once the container is ready, just before the harness starts. */
export interface LaunchAnnouncement {
  readonly harness: string
  readonly session: string
  readonly branch: string
  /** The session was created by this launch. */
  readonly created: boolean
  readonly dropped: RenderReport['dropped']
  /** Items the harness sees as something else, and what. */
  readonly translated: RenderReport['translated']
  /** What the profile's resolution has to say (selection, composition). */
  readonly notices: readonly string[]
  /** The project's environment, when it is more than omh's base, and what of it omh does not honour. */
  readonly environment?: EnvironmentView
}

/** The project's environment as a launch and its preview tell it. */
export interface EnvironmentView {
  /** What it is: `omh's base`, `.devcontainer/devcontainer.json`, `.omh/Containerfile on omh's base`. */
  readonly describe: string
  readonly setup: readonly SetupStep[]
  /** Whether this session's setup has run to the end once. */
  readonly setupDone: boolean
  readonly ports: readonly number[]
  /** Where this machine reaches each port, once the container is up. */
  readonly published?: readonly SessionPort[]
  readonly unsupported: ProjectEnvironment['unsupported']
  readonly notes: readonly string[]
  readonly test?: string
}

export interface LaunchHost {
  /** Where images come from; absent: omh's recipes (`planImages`, `ensureImage`). */
  readonly images?: ImageSource
  readonly context: RuntimeContext
  /** A progress line for the user (stderr), e.g. a restart and why. */
  notice(line: string): void
  /** The one status line of a launch. */
  announce(announcement: LaunchAnnouncement): void
}

/** What a launch would do, or did: the answer of `--dry-run`. */
export interface LaunchPreview {
  readonly harness: string
  readonly session: string
  readonly branch: string
  /** The session does not exist yet and would be created from `base`. */
  readonly create: boolean
  /** Where a new session would start; absent for an existing one, which has its branch. */
  readonly base?: Base
  readonly worktree: string
  readonly spec: ContainerSpec
  readonly exec: readonly string[]
  readonly render: RenderReport
  readonly notices: readonly string[]
  readonly environment?: EnvironmentView
  /** The untracked files `carry_in` would copy into a new session; none for one that exists. */
  readonly carryIn: readonly string[]
}

/** Everything a launch would do, computed without creating or starting anything; `beforeLaunch` taps have their say. */
export async function previewLaunch(kernel: Kernel, request: LaunchRequest, host: Pick<LaunchHost, 'images'> = {}): Promise<LaunchPreview> {
  const sessions = Sessions.of(kernel)
  const [adapter, picked] = await inOrder(kernel.adapter(request.harness), sessions.pickForLaunch(request))
  const account = await accountFor(kernel, adapter, request)
  const base = picked.exists ? undefined : await resolveBase(sessions.repo, kernel.options.env)
  // Read, checked and refused as a launch would; only the names are shown.
  const carry = picked.exists ? [] : await planCarryIn(kernel, sessions.repo.root, kernel.options.env)
  const images = host.images ?? recipes(kernel)
  const prepared = await prepare({ kernel, sessions, adapter, account, request, images, agent: agentUser() }, picked.sid, { dryRun: true })
  return {
    harness: adapter.name,
    session: picked.sid,
    branch: branchOf(picked.sid),
    create: !picked.exists,
    ...(base ? { base } : {}),
    worktree: prepared.paths.worktree,
    spec: prepared.spec,
    exec: prepared.plan.exec,
    render: prepared.render,
    notices: prepared.render.profile.notices,
    ...(prepared.environment ? { environment: await environmentView(prepared.environment, prepared.paths.run) } : {}),
    carryIn: carry.map((file) => file.path),
  }
}

/** What a launch says of the project's environment. */
async function environmentView(environment: ProjectEnvironment, run: string): Promise<EnvironmentView> {
  return {
    describe: environment.image.describe,
    setup: environment.setup,
    setupDone: await setupDone(run),
    ports: environment.ports,
    unsupported: environment.unsupported,
    notes: environment.notes,
    ...(environment.test ? { test: environment.test } : {}),
  }
}

/**
 * Launches a harness in a session: picks or creates the session, stages the
 * profile, brings the container up (or reuses it, or restarts it when its
 * plan changed and nothing runs in it), runs the harness and resolves its
 * exit status. A session created by this launch is removed again if anything
 * fails before the harness starts.
 */
export async function launch(kernel: Kernel, request: LaunchRequest, host: LaunchHost): Promise<number> {
  try {
    return await launchOnce(kernel, request, host)
  } catch (error) {
    // A session picked by default that another plan keeps busy (a harness left running after its
    // terminal closed) is passed over for the next one, or a new one; a named session is not.
    const details = isOmhError(error) && error.code === SESSION_BUSY.code ? error.details : undefined
    const busy = details?.['session']
    if (typeof busy !== 'string' || request.session || request.fresh || request.name !== undefined) throw error
    host.notice(`${busy} is in use and its container would have to change (${String(details?.['why'])}); using another session`)
    return launch(kernel, { ...request, skip: [...(request.skip ?? []), busy] }, host)
  }
}

/** What every phase of one launch reads. */
interface Launch {
  readonly kernel: Kernel
  readonly sessions: Sessions
  readonly adapter: Adapter
  readonly account: string
  readonly request: LaunchRequest
  readonly images: ImageSource
  /** Who the agent is in the session's container. */
  readonly agent: AgentUser
}

/** The engine a launch uses, and the session's container as it stood when asked. */
interface EngineView {
  readonly runtime: RuntimePlugin
  /** Running or not, this session's container; empty when it has none. */
  readonly containers: readonly ContainerInfo[]
  /** Whether the harness image exists, when that was asked on the way. */
  readonly image?: boolean
  /** A new session's file way, asked of this engine about `image` while the session is made. */
  readonly way?: EarlyWay
}

/** Which way files reach a container, asked ahead of need; `stop` ends the question when nothing will need it. */
interface EarlyWay {
  readonly image: string
  readonly answer: Early<FileWay>
  /** Whether the answer is in. */
  readonly settled: boolean
  stop(): void
}

/** Phase 1's result: the session this launch holds, created or not. */
interface Claimed {
  readonly sid: string
  readonly created: boolean
  /** The session's `last-used` stamp as read under the lock, before this launch stamped it. */
  readonly lastUsed?: number
  /** The engine's answer about this session, when one asked before the claim still stands. */
  readonly engine?: EngineView
  release(): Promise<void>
}

/** Phase 2's result: the profile rendered and staged, and the container the launch wants. */
interface Prepared {
  readonly paths: SessionPaths
  readonly render: HarnessRender
  readonly planned: SessionPlan
  /** The plan after `beforeLaunch` taps. */
  readonly plan: LaunchPlan
  /** The container spec, stamped with its plan digest. */
  readonly spec: ContainerSpec
  /** The spec's variables with every `<secret NAME>` resolved: for the engine only, never shown or staged. */
  readonly secretEnv?: Readonly<Record<string, string>>
  /** API keys the host holds, for the credential proxy alone. */
  readonly kept?: KeptKeys
  /** The project's environment, when the image source plans one. */
  readonly environment?: ProjectEnvironment
}

async function launchOnce(kernel: Kernel, request: LaunchRequest, host: LaunchHost): Promise<number> {
  const sessions = Sessions.of(kernel)
  const picking = sessions.pickForLaunch(request)
  // The engine is asked about an existing session's container as soon as the session is picked,
  // and answers while the harness's adapter loads, the session is claimed and the profile renders.
  const asked = early(picking.then((first) => (first.exists ? view(kernel, sessions, request, first.sid, host.context) : undefined)))
  // A harness that does not exist is the first thing to hear about, whatever else is wrong, and
  // neither it nor an account that cannot be chosen claims a session: a claim stamps the session
  // as the one launched into last.
  const [adapter, first] = await inOrder(kernel.adapter(request.harness), picking)
  const account = await accountFor(kernel, adapter, request)
  const at: Launch = { kernel, sessions, adapter, account, request, images: host.images ?? recipes(kernel), agent: agentUser() }

  const claimed = await claim(at, first, host)
  let started = false
  let runtime: RuntimePlugin | undefined
  try {
    // The early answer stands only if no launch went into that session before this one claimed
    // it: a launch that could have replaced its container stamps `last-used` when it claims.
    const stands = first.exists && claimed.sid === first.sid && claimed.lastUsed === first.lastUsed
    const engine = claimed.engine
      ? Promise.resolve(claimed.engine)
      : stands
        ? answer(asked).then((seen) => seen!)
        : view(kernel, sessions, request, claimed.sid, host.context)
    const [prepared, seen] = await inOrder(prepare(at, claimed.sid), engine)
    runtime = seen.runtime
    const { decision, way } = await bringUp(at, claimed.sid, prepared, seen, host)
    const viewed = prepared.environment ? await environmentView(prepared.environment, prepared.paths.run) : undefined
    const environment = viewed?.ports.length ? { ...viewed, published: await publishedPorts(seen.runtime, prepared.spec.name!, host.context, [GUEST_SSH_PORT]) } : viewed
    host.announce({
      harness: adapter.name,
      session: claimed.sid,
      branch: branchOf(claimed.sid),
      created: claimed.created,
      dropped: prepared.render.dropped,
      translated: prepared.render.translated,
      notices: prepared.render.profile.notices,
      ...(environment ? { environment } : {}),
    })
    // From here the session stays whatever happens: a setup that fails is fixed and launched into again.
    started = true
    if (environment?.setup.length && !environment.setupDone) {
      await setUpSession({
        runtime: seen.runtime,
        container: prepared.spec.name!,
        user: userSpec(at.agent),
        steps: environment.setup,
        run: prepared.paths.run,
        session: claimed.sid,
        context: host.context,
        // Only a container that sees the host's worktree leaves its setup's files where they can be kept.
        ...(way === 'mounted' && kernel.settings.last((s) => s.session?.reuse_setup)?.value !== false
          ? {
              reuse: {
                store: keptSetupsDir(kernel.omhState, sessions.repo.id),
                inputs: { image: prepared.spec.image, worktree: prepared.paths.worktree, carried: await carriedPaths(prepared.paths.run), env: kernel.options.env },
              },
            }
          : {}),
      })
    }
    const kept = keepable(at, decision, prepared, seen.runtime) ? { containers: [prepared.spec.name!], run: prepared.paths.run, harness: adapter.name } : undefined
    return await run(at, prepared, seen.runtime, host, kept)
  } catch (error) {
    claimed.engine?.way?.stop()
    if (claimed.created && !started) await discard(at, claimed.sid, runtime, host.context)
    throw error
  } finally {
    await claimed.release()
    if (started) await touchUp(sessions.paths(claimed.sid).run)
  }
}

/**
 * Phase 1: holds a session. What a new session needs (an engine, a base to
 * branch from, the image) is checked before anything is made, and a build
 * happens here, outside the lock, so other launches do not wait on it; the
 * engine's answer about it comes back with the claim.
 */
async function claim(at: Launch, first: PickedSession, host: LaunchHost): Promise<Claimed> {
  const { kernel, sessions } = at
  const ready = first.exists ? undefined : await readyToCreate(at, first.sid, host.context)
  let late: Awaited<ReturnType<typeof readyToCreate>> | undefined
  try {
    const held = await withRepoLock(kernel.omhState, sessions.repo, async () => {
      const { sid, exists, lastUsed } = await sessions.pickForLaunch(at.request)
      if (!exists) {
        const { base, carry } = ready ?? (late = await readyToCreate(at, sid, host.context))
        await createSession(kernel.omhState, sessions.repo, sid, base, kernel.options.env, carry).catch(gitFailure(`creating session ${sid}`, sessions.repo.root))
      }
      return { sid, created: !exists, lastUsed, release: await claimOf(kernel.omhState, sessions.repo, sid, at.adapter.name) }
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
function earlyWay(kernel: Kernel, engine: Promise<EngineView>, image: Promise<string>, near: string, context: RuntimeContext, signal: AbortSignal): EarlyWay {
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
async function view(
  kernel: Kernel,
  sessions: Sessions,
  request: Pick<LaunchRequest, 'engine'>,
  sid: string,
  context: RuntimeContext,
  imageTag?: string,
): Promise<EngineView> {
  const labels = { [LABEL.repo]: sessions.repo.id, [LABEL.session]: sid }
  const engine = await sessionEngine(kernel, sessions.paths(sid).run, sid, request.engine, context)
  const reached = await kernel.reachRuntime(engine, context, (runtime) =>
    runtime.inspect
      ? Promise.all([
          runtime.inspect(containerName(sessions.repo, sid), context),
          // Only what a new session needs: whether to build. Read-only, so asking an engine that
          // turns out not to be the one costs nothing; an engine that cannot say means "build".
          imageTag === undefined ? undefined : runtime.hasImage(imageTag, context).then(
            (has) => has,
            () => false,
          ),
        ])
      : undefined,
  )
  const { runtime } = reached
  if (!reached.probed) return { runtime, containers: await runtime.list(labels, context) }
  const [named, image] = reached.answer
  const ours = named && Object.entries(labels).every(([key, value]) => named.labels[key] === value)
  const containers = !named ? [] : ours ? [named] : await runtime.list(labels, context)
  return { runtime, containers, ...(image === undefined ? {} : { image }) }
}

/** Phase 2: renders and stages the profile, plans the container, and lets `beforeLaunch` taps change the plan. */
async function prepare(at: Launch, sid: string, options: { dryRun?: boolean } = {}): Promise<Prepared> {
  const { kernel, sessions, adapter } = at
  const paths = sessions.paths(sid)
  const exists = !options.dryRun || (await sessions.list()).includes(sid)
  const [image, render, environment] = await inOrder(
    Promise.resolve(at.images.tag(adapter)),
    kernel.renderHarness(adapter, exists ? paths.worktree : sessions.repo.root),
    Promise.resolve(at.images.environment?.()),
  )
  const caches = environment && kernel.settings.last((s) => s.session?.caches)?.value !== false ? cacheVolumes(sessions.repo.id) : []
  const credentials = credentialsOf(kernel, adapter, at.account)
  const egress = egressOf(kernel.settings, adapter)
  // Keys stay outside only where the session's network is omh's: with egress open or none there is
  // no place beside the session for the proxy, and the harness keeps its mounted login. The keyring
  // is not asked: a locked one would prompt at every launch for a key the user may not have.
  const sources = { env: kernel.options.env, omhHome: kernel.omhHome, keyring: () => undefined }
  const find = (name: string) => findSecret(name, sources)
  const holds = egress.mode === 'allowlist' && adapter.keys.some((k) => find(k.variable) !== undefined)
  const hosts = egress.mode === 'allowlist' ? secretHosts(kernel.settings, render.profile.mcp) : new Map()
  const token = holds || hosts.size ? await sessionToken(paths.run, { make: !options.dryRun }) : undefined
  const bound = token
    ? boundSecrets(hosts, (name) => findSecret(name, { env: kernel.options.env, omhHome: kernel.omhHome }), token, (name) => `[secrets.${name}] or an MCP server's header`, secretsFile(kernel.omhHome))
    : undefined
  // A dry run makes nothing on disk: a throwaway authority shows where the session's goes.
  const authority = bound ? (options.dryRun ? makeAuthority() : await sessionAuthority(paths.run)) : undefined
  const keys = holds && token ? keptKeys(adapter, find, token) : undefined
  const kept = withBound(keys, bound, authority, token)
  const files = withGitfile([...render.files, ...(authority ? [{ kind: 'file' as const, guest: GUEST_AUTHORITY, content: authority.cert, mode: 0o644 }] : [])])
  const dir = stagingDir(paths, adapter.name)
  const staged = options.dryRun ? await stage({ files }, dir, { dryRun: true }) : await stageForAgent(files, dir)
  const planned = planSession({
    repo: sessions.repo,
    session: sid,
    harness: adapter.name,
    image,
    worktree: paths.worktree,
    shadow: paths.shadow,
    staged: stagedMounts(staged),
    credentials,
    env: egress.mode === 'allowlist' ? { ...proxyEnv(), ...withPlaceholders(render.env, bound?.placeholders ?? new Map()), ...kept?.env } : { ...declaredSecrets(kernel.settings), ...render.env },
    contents: contentDigests(files),
    // sshd for `omh attach` listens here once attached; publishing costs nothing until then. The
    // engine picks the host port: any fixed one may be taken, and a launch must not fail for it.
    // Behind the egress proxy the project's ports are published by a forwarder beside the session (beside.ts).
    ports: [{ guest: GUEST_SSH_PORT }, ...(egress.mode === 'open' ? (environment?.ports ?? []).map((guest) => ({ guest })) : [])],
    ...sessionNetwork(egress, containerName(sessions.repo, sid)),
    limits: sessionLimits(kernel.settings),
    agent: at.agent,
    volumes: caches.map(({ volume, guest, readOnly }) => ({ volume, guest, readOnly })),
    ...(bound ? { keeper: bundleKeeper(KEEPER) } : {}),
  })
  if (!options.dryRun) await prepareCredentials(credentials)
  const plan = await kernel.hooks.beforeLaunch.promise({
    harness: adapter.name,
    session: sid,
    render,
    repository: sessions.repo,
    branch: branchOf(sid),
    worktree: paths.worktree,
    spec: planned.spec,
    exec: harnessArgv(adapter, [...(kept?.args ?? []), ...at.request.args], at.request.tty),
  })
  const spec = stamp(plan.spec, { ...contentDigests(files), ...networkSettings(kernel.settings) })
  const withEnvironment = environment ? { environment } : {}
  // Resolved at a dry run too, and thrown away: a secret the launch would miss is refused now.
  const secretEnv = resolveSecrets(spec.env, { env: kernel.options.env, omhHome: kernel.omhHome }, (variable) => `${variable} of ${adapter.name}'s MCP servers, or [secrets.${variable}]`)
  if (options.dryRun) return { paths, render, planned, plan, spec, ...withEnvironment }
  await hideMounts(paths.shadow, paths.worktree, ['.git', ...planned.worktreeTargets, ...(await carriedPaths(paths.run))], kernel.options.env, path.join(paths.run, 'hidden.json'))
  return { paths, render, planned, plan, spec, secretEnv, ...(kept ? { kept } : {}), ...withEnvironment }
}

/** Phase 3: the session's container, running this plan: reused, started, or restarted when idle. */
async function bringUp(at: Launch, sid: string, prepared: Prepared, engine: EngineView, host: LaunchHost): Promise<{ decision: ReuseDecision; way: FileWay }> {
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
  // The way the files reach the container that runs, once it is up.
  let started: FileWay = 'mounted'
  if (!guess) await startOn(await asking)
  else {
    const [tried, found] = await Promise.allSettled([startOn('mounted'), asking])
    if (found.status === 'fulfilled' && found.value === 'mounted') {
      if (tried.status === 'rejected') throw tried.reason
    } else {
      if (tried.status === 'fulfilled') {
        await runtime.down(prepared.spec.name!, host.context).catch(ignore)
        await clearMountpoints(prepared.paths.run)
      }
      if (found.status === 'rejected') throw found.reason
      await startOn(found.value)
    }
  }
  early?.stop()
  const idleStop = at.kernel.settings.last((s) => s.session?.idle_stop)?.value ?? DEFAULT_IDLE_STOP
  await recordUp(prepared.paths.run, { engine: runtime.engine, container: prepared.spec.name!, idleStopMs: durationMs(idleStop) })
  return { decision, way: started }

  /** Starts what the session needs on the engine, its files reaching the container `way`. */
  async function startOn(way: FileWay): Promise<void> {
    const egress = await sessionEgress(at.kernel.settings, at.adapter, egressDir(prepared.paths.run))
    // A reused container keeps the way it was started with; the proxies beside it take the same one.
    const copied = (decision.action === 'attach' ? decision.container.labels[LABEL.files] : way) === 'copied'
    started = copied ? 'copied' : 'mounted'
    const volumesOf = copied ? { copied: { labels: { [LABEL.repo]: at.sessions.repo.id, [LABEL.session]: sid } } } : {}
    // The engine's own network setting: the session's with egress open, its proxies' way out behind the allowlist.
    const engineNetwork =
      egress.mode === 'allowlist' ? await outsideOn(at.kernel.settings, runtime, host.context) : egress.mode === 'open' ? await networkOn(at.kernel.settings, runtime, host.context) : undefined
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
        ...(prepared.kept ? { kept: prepared.kept } : {}),
        ...(ca ? { ca } : {}),
        ...volumesOf,
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
  }
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
function keepable(at: Launch, decision: ReuseDecision, prepared: Prepared, runtime: RuntimePlugin): boolean {
  return (
    runtime.keptCheck !== undefined &&
    !at.request.fresh &&
    at.request.name === undefined &&
    !at.request.skip?.length &&
    decision.action === 'attach' &&
    decision.container.labels[LABEL.files] === 'mounted' &&
    !prepared.kept &&
    !at.kernel.hooks.beforeLaunch.taps.length &&
    !at.kernel.hooks.launched.taps.length
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
const filesSetting = (kernel: Kernel): FilesSetting => kernel.settings.last((s) => s.session?.files)?.value ?? 'auto'

/** Phase 4: the harness, with the user's terminal; its exit status is the launch's. */
async function run(
  at: Launch,
  prepared: Prepared,
  runtime: RuntimePlugin,
  host: LaunchHost,
  kept?: Pick<KeptLaunchOffer, 'containers' | 'run' | 'harness'>,
): Promise<number> {
  const { kernel, adapter } = at
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
  if (kept && runtime.keptCheck) {
    const container = prepared.spec.name!
    const containers = allowlist ? [...kept.containers, proxyName(container)] : kept.containers
    offerKeptLaunch({
      ...kept,
      containers,
      check: runtime.keptCheck(containers),
      ...(allowlist ? { allowlist: { files, dir, container, engine: runtime.engine } } : {}),
    })
  }
  const result = await runtime
    .exec(
      prepared.spec.name!,
      prepared.plan.exec,
      {
        tty: at.request.tty,
        interactive: true,
        user: userSpec(at.agent),
        workdir: GUEST_WORK,
        env: { OMH_HARNESS: at.adapter.name },
      },
      host.context,
    )
    .finally(() => stop?.())
  // What the agent did on an engine elsewhere is brought home as soon as the harness is done.
  await copyBack(runtime, prepared.paths.run, host.context)
  await at.kernel.hooks.launched.promise(prepared.plan, result.exitCode)
  return result.exitCode
}

/** Removes a session this launch created and could not start, with whatever of it exists. */
async function discard(at: Launch, sid: string, runtime: RuntimePlugin | undefined, context: RuntimeContext): Promise<void> {
  const { kernel, sessions } = at
  // The launch's own error is the one to report; each step here is best effort for the same reason.
  // A copied session's volumes go too: the next new session takes this id and would find them filled.
  if (runtime) await takeDown(kernel.omhState, sessions.repo, sid, { runtime, context, containers: [containerName(sessions.repo, sid)], bringHome: false, bestEffort: true })
  else await clearMountpoints(sessions.paths(sid).run).catch(ignore)
  await removeSession(kernel.omhState, sessions.repo, sid, kernel.options.env, { deleteBranch: true })
}

const ignore = (): void => undefined

/** A question asked ahead of need: its answer or its failure, held as a value until someone needs it. */
type Early<T> = Promise<PromiseSettledResult<T>>

const early = <T>(question: Promise<T>): Early<T> => Promise.allSettled([question]).then(([result]) => result!)

async function answer<T>(asked: Early<T>): Promise<T> {
  const result = await asked
  if (result.status === 'rejected') throw result.reason
  return result.value
}

/**
 * Awaits every promise and throws the first rejection in argument order, not
 * in time: which error a user hears does not depend on which call happened
 * to answer first.
 */
async function inOrder<T extends readonly unknown[]>(...promises: { readonly [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const results = await Promise.allSettled(promises)
  for (const result of results) if (result.status === 'rejected') throw result.reason
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T
}

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

/**
 * The network a session joins: its own internal one behind the proxy, none, or with egress open
 * the engine's, named once the engine is known (`networkOn`).
 */
function sessionNetwork(egress: Egress, container: string): { network?: string } {
  if (egress.mode === 'allowlist') return { network: networkName(container) }
  if (egress.mode === 'none') return { network: 'none' }
  return {}
}

/**
 * The network settings of every engine, for the plan digest: which applies is known only once the
 * engine is, and a changed one must restart an idle container all the same.
 */
function networkSettings(settings: Kernel['settings']): Record<string, string> {
  const engines = Object.fromEntries(settings.layers.flatMap((l) => Object.keys(l.settings.runtimes ?? {})).map((engine) => [engine, settings.networkOn(engine)?.value]))
  const named = settings.sessionNetwork || Object.values(engines).some(Boolean)
  return named ? { '\0network': JSON.stringify({ session: settings.sessionNetwork?.value, engines }) } : {}
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

/** Re-stamps the plan digest after `beforeLaunch` taps had their say. */
function stamp(spec: ContainerSpec, contents: Readonly<Record<string, string>>): ContainerSpec {
  return { ...spec, labels: { ...spec.labels, [LABEL.plan]: planDigest(spec, contents) } }
}

/**
 * The account whose login a launch mounts: `-a`, the `account` setting, or
 * the only one captured (two captured and none named is an error, never a
 * guess). With none captured, `default`: a login made inside the session is
 * kept there.
 */
async function accountFor(kernel: Kernel, adapter: Adapter, request: Pick<LaunchRequest, 'account'>): Promise<string> {
  const choice = await chooseAccount(kernel.omhState, adapter, { flag: request.account, setting: kernel.settings.account?.value })
  return choice.account ?? 'default'
}

function credentialsOf(kernel: Kernel, adapter: Adapter, account: string): CredentialMount[] {
  return credentialMounts(adapter.creds, credentialsDir(kernel.omhState, adapter.name, account))
}
