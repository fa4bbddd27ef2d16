import { chooseAccount } from '../accounts.js'
import type { Adapter } from '@omh/kernel'
import { GUEST_SSH_PORT } from '../ssh.js'
import { OmhError, SESSION_BUSY, SESSION_UP_FAILED, isOmhError } from '@omh/plugin-api'
import { ensureImage, imageOptions, planImages } from '../image.js'
import type { Kernel, RenderReport } from '@omh/kernel'
import { GUEST_GID, GUEST_UID, GUEST_WORK } from '@omh/plugin-api'
import type { ContainerInfo, ContainerSpec, RuntimeContext, RuntimePlugin, StagedEntry } from '@omh/plugin-api'
import { projectRulesOf, resolveProfile } from '@omh/kernel'
import { stage, type StageResult } from '@omh/kernel'
import { createSession, removeSession } from './create.js'
import { gitFailure } from './git.js'
import { LABEL, branchOf, containerName, credentialsDir, sessionPaths, stagingDir, type SessionPaths } from './layout.js'
import { clearMountpoints, prepareMountpoints } from './mountpoints.js'
import { contentDigests, credentialMounts, harnessArgv, planDigest, planSession, type CredentialMount, type SessionPlan } from './plan.js'
import { prepareCredentials, stageForAgent, stagedMounts, withGitfile } from './prepare.js'
import { requireRepo, resolveBase, type Base, type Repository } from './repo.js'
import { LIVENESS_SCRIPT, decideReuse, parseLiveness, type ReuseDecision } from './reuse.js'
import { pickSession, type SessionChoice } from './select.js'
import { writeExclude } from './shadow.js'
import { claim, withRepoLock } from './store.js'

/** omh's own image recipes: a base and a layer per harness, tagged by digest. */
export function recipes(kernel: Kernel): ImageSource {
  const plan = (adapter: Adapter) => planImages(adapter, imageOptions(kernel.settings))
  return {
    tag: (adapter) => plan(adapter).harness.tag,
    ensure: async (adapter, runtime, context) => (await ensureImage(runtime, plan(adapter), context, adapter.file)).tag,
  }
}

/** Where a harness's image comes from. The session layer only asks for a tag. */
export interface ImageSource {
  /** The tag the adapter's image has or will have, without touching an engine. */
  tag(adapter: Adapter): string | Promise<string>
  /** Makes sure the image exists (building what is missing) and resolves its tag. */
  ensure(adapter: Adapter, runtime: RuntimePlugin, context: RuntimeContext): Promise<string>
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
  /** What the profile's resolution has to say (selection, composition). */
  readonly notices: readonly string[]
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
}

/** Everything a launch would do, computed without creating or starting anything. */
export async function previewLaunch(kernel: Kernel, request: LaunchRequest, host: Pick<LaunchHost, 'images'> = {}): Promise<LaunchPreview> {
  const env = kernel.options.env
  const repo = requireRepo(kernel)
  const adapter = await kernel.adapter(request.harness)
  const { sid, exists } = await pickSession(kernel.omhHome, repo, request, env)
  const base = exists ? undefined : await resolveBase(repo, env)
  const paths = sessionPaths(kernel.omhHome, repo, sid)
  const render = await renderFor(kernel, adapter, exists ? paths.worktree : repo.root)
  const image = await (host.images ?? recipes(kernel)).tag(adapter)
  const files = withGitfile(render.files)
  const staged = await stage({ files }, stagingDir(paths, adapter.name), { dryRun: true })
  const plan = planFor({ kernel, account: await accountFor(kernel, adapter, request), repo, sid, adapter, image, paths, render, files, staged })
  return {
    harness: adapter.name,
    session: sid,
    branch: branchOf(sid),
    create: !exists,
    ...(base ? { base } : {}),
    worktree: paths.worktree,
    spec: plan.spec,
    exec: harnessArgv(adapter.name, adapter.bin, request.args, request.tty),
    render,
    notices: render.notices,
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
    if (typeof busy !== 'string' || request.session || request.fresh) throw error
    host.notice(`${busy} is in use and its container would have to change (${String(details?.['why'])}); using another session`)
    return launch(kernel, { ...request, skip: [...(request.skip ?? []), busy] }, host)
  }
}

/** The engine a launch uses, and the session's container as it stood when asked. */
interface EngineView {
  readonly runtime: RuntimePlugin
  /** Running or not, this session's container; empty when it has none. */
  readonly containers: readonly ContainerInfo[]
  /** Whether the harness image exists, when that was asked on the way. */
  readonly image?: boolean
}

async function launchOnce(kernel: Kernel, request: LaunchRequest, host: LaunchHost): Promise<number> {
  const env = kernel.options.env
  const context = host.context
  const repo = requireRepo(kernel)
  // Read while the session is picked and claimed; a launch into a running container waits on
  // it only after asking the engine for that container.
  const adapterLoading = kernel.adapter(request.harness)
  adapterLoading.catch(() => undefined)
  const accountLoading = adapterLoading.then((adapter) => accountFor(kernel, adapter, request))
  accountLoading.catch(() => undefined)
  const images = host.images ?? recipes(kernel)

  // The engine is found by asking it for the session's container: the answer proves it usable (so
  // it stands in for `detect`) and is what the launch decides on. `list` is asked only when the
  // container by that name is not clearly this session's, or the runtime cannot be asked by name.
  const labelsOf = (sid: string) => ({ [LABEL.repo]: repo.id, [LABEL.session]: sid })
  const containersOf = async (runtime: RuntimePlugin, sid: string, named: ContainerInfo | undefined) => {
    if (!named) return []
    const ours = Object.entries(labelsOf(sid)).every(([key, value]) => named.labels[key] === value)
    return ours ? [named] : runtime.list(labelsOf(sid), context)
  }
  const view = async (sid: string, imageTag?: string): Promise<EngineView> => {
    const name = containerName(repo, sid)
    const reached = await kernel.reachRuntime(request.engine, context, (runtime) =>
      runtime.inspect
        ? Promise.all([
            runtime.inspect(name, context),
            // Only what a new session needs: whether to build. Read-only, so asking an engine that
            // turns out not to be the one costs nothing.
            imageTag === undefined ? undefined : runtime.hasImage(imageTag, context).catch(() => undefined),
          ])
        : undefined,
    )
    const { runtime } = reached
    if (!reached.probed) return { runtime, containers: await runtime.list(labelsOf(sid), context) }
    const [named, image] = reached.answer
    return { runtime, containers: await containersOf(runtime, sid, named), ...(image === undefined ? {} : { image }) }
  }

  // The engine is asked as early as its answer can be trusted. A new session's check asks for the
  // id it expects. An existing session is asked before the lock, and the answer stands only if no
  // launch went into that session before this one claimed it: a launch that could have replaced
  // its container stamps `last-used` when it claims.
  let asked: { sid: string; view: Promise<EngineView>; used?: number } | undefined
  const ask = (sid: string, viewing: Promise<EngineView>, used?: number) => {
    viewing.catch(() => undefined)
    asked = { sid, view: viewing, ...(used === undefined ? {} : { used }) }
  }

  // What a new session needs is checked before anything is made: an engine, a base to branch
  // from, the image. A build happens here, outside the lock, so other launches do not wait on it.
  let ready: Promise<{ base: Base }> | undefined
  const readyToCreate = (sid: string) => (ready ??= checkReady(sid))
  const checkReady = async (sid: string) => {
    const adapter = await adapterLoading
    const tag = await images.tag(adapter)
    const engine = view(sid, tag)
    const base = resolveBase(repo, env)
    // A base that cannot be resolved stops a build before it starts, or while it runs.
    const stop = new AbortController()
    base.catch(() => stop.abort())
    const signal = context.signal ? AbortSignal.any([context.signal, stop.signal]) : stop.signal
    const image = engine.then((e) => (e.image ? tag : images.ensure(adapter, e.runtime, { ...context, signal })))
    const [e, b, i] = await Promise.allSettled([engine, base, image])
    if (e.status === 'rejected') throw e.reason
    if (b.status === 'rejected') throw b.reason
    if (i.status === 'rejected') throw i.reason
    ask(sid, Promise.resolve({ ...e.value, image: true }))
    return { base: b.value }
  }
  // A harness that does not exist is the first thing to hear about, whatever else is wrong, and
  // neither it nor an account that cannot be chosen claims a session: a claim stamps the session
  // as the one launched into last.
  const first = await pickSession(kernel.omhHome, repo, request, env).catch(async (error: unknown) => {
    await adapterLoading
    throw error
  })
  if (first.exists) ask(first.sid, view(first.sid), first.lastUsed)
  await accountLoading
  if (!first.exists) await readyToCreate(first.sid)

  const picked = await withRepoLock(kernel.omhHome, repo, async () => {
    const { sid, exists, lastUsed } = await pickSession(kernel.omhHome, repo, request, env)
    if (!exists) {
      const { base } = await readyToCreate(sid)
      await createSession(kernel.omhHome, repo, sid, base, env).catch(gitFailure(`creating session ${sid}`, repo.root))
    }
    const answered = asked?.sid === sid && asked.used === lastUsed ? asked.view : undefined
    return { sid, created: !exists, answered, release: await claim(kernel.omhHome, repo, sid, request.harness) }
  })
  const { sid, created, answered, release } = picked
  const paths = sessionPaths(kernel.omhHome, repo, sid)
  let started = false
  let runtime: RuntimePlugin | undefined
  try {
    // Answered while the profile is rendered and staged.
    const engineView = answered ?? view(sid)
    engineView.catch(() => undefined)
    const adapter = await adapterLoading
    const account = await accountLoading
    const image = await images.tag(adapter)
    const render = await renderFor(kernel, adapter, paths.worktree)
    const files = withGitfile(render.files)
    const staged = await stageForAgent(files, stagingDir(paths, adapter.name))
    await kernel.hooks.staged.promise(render, staged.dir)
    const planned = planFor({ kernel, account, repo, sid, adapter, image, paths, render, files, staged })
    await prepareCredentials(credentialsOf(kernel, adapter, account))
    const launchPlan = await kernel.hooks.beforeLaunch.promise({
      harness: adapter.name,
      session: sid,
      render,
      repository: repo,
      branch: branchOf(sid),
      worktree: paths.worktree,
      spec: planned.spec,
      exec: harnessArgv(adapter.name, adapter.bin, request.args, request.tty),
    })
    const spec = stamp(launchPlan.spec, contentDigests(files))
    const digest = spec.labels[LABEL.plan]!
    await writeExclude(paths.shadow, ['.git', ...planned.worktreeTargets])

    const seen = await engineView
    runtime = seen.runtime
    const engine = runtime
    const decision = await decideReuse(seen.containers, digest, adapter.name, (c) => liveProcesses(engine, c.id, context))
    // A container running this very plan runs from this image, so only a new container asks for it.
    if (decision.action !== 'attach' && decision.action !== 'busy' && !seen.image) await images.ensure(adapter, engine, context)
    await act(decision, { runtime: engine, spec, planned, paths, sid, harness: adapter.name, host })

    host.announce({ harness: adapter.name, session: sid, branch: branchOf(sid), created, dropped: render.dropped, notices: render.notices })
    started = true
    const result = await runtime.exec(
      spec.name!,
      launchPlan.exec,
      {
        tty: request.tty,
        interactive: true,
        user: `${GUEST_UID}:${GUEST_GID}`,
        workdir: GUEST_WORK,
        env: { OMH_HARNESS: adapter.name },
      },
      context,
    )
    await kernel.hooks.launched.promise(launchPlan, result.exitCode)
    return result.exitCode
  } catch (error) {
    if (created && !started) {
      await runtime?.down(containerName(repo, sid), context).catch(() => undefined)
      await clearMountpoints(paths.run).catch(() => undefined)
      await removeSession(kernel.omhHome, repo, sid, env, { deleteBranch: true })
    }
    throw error
  } finally {
    await release()
  }
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
  await prepareMountpoints(at.paths.run, at.planned.mountpoints)
  try {
    await runtime.up(at.spec, host.context)
  } catch (error) {
    await runtime.down(at.spec.name!, host.context).catch(() => undefined)
    await clearMountpoints(at.paths.run)
    if (isOmhError(error)) throw error
    throw OmhError.of(SESSION_UP_FAILED, { args: [at.sid, (error as Error).message?.split('\n')[0] ?? String(error)], cause: error })
  }
}

function planFor(at: {
  kernel: Kernel
  account: string
  repo: Repository
  sid: string
  adapter: Adapter
  image: string
  paths: SessionPaths
  render: RenderReport
  files: readonly StagedEntry[]
  staged: StageResult
}): SessionPlan {
  return planSession({
    repo: at.repo,
    session: at.sid,
    harness: at.adapter.name,
    image: at.image,
    worktree: at.paths.worktree,
    shadow: at.paths.shadow,
    staged: stagedMounts(at.staged),
    credentials: credentialsOf(at.kernel, at.adapter, at.account),
    env: at.render.env,
    contents: contentDigests(at.files),
    // sshd for `omh attach` listens here once attached; publishing costs nothing until then. The
    // engine picks the host port: any fixed one may be taken, and a launch must not fail for it.
    ports: [{ guest: GUEST_SSH_PORT }],
    ...(at.kernel.settings.sessionNetwork ? { network: at.kernel.settings.sessionNetwork.value } : {}),
  })
}

/** Re-stamps the plan digest after `beforeLaunch` taps had their say. */
function stamp(spec: ContainerSpec, contents: Readonly<Record<string, string>>): ContainerSpec {
  return { ...spec, labels: { ...spec.labels, [LABEL.plan]: planDigest(spec, contents) } }
}

async function liveProcesses(runtime: RuntimePlugin, container: string, context: RuntimeContext): Promise<string[] | undefined> {
  try {
    const r = await runtime.exec(container, ['sh', '-c', LIVENESS_SCRIPT], { tty: false, capture: true, user: `${GUEST_UID}:${GUEST_GID}` }, context)
    return r.exitCode === 0 ? parseLiveness(r.stdout) : undefined
  } catch {
    return undefined
  }
}

async function renderFor(kernel: Kernel, adapter: Adapter, projectDir: string): Promise<RenderReport & { notices: readonly string[] }> {
  const profile = await resolveProfile({ omhHome: kernel.omhHome, projectDir, projectRules: projectRulesOf(adapter), use: kernel.settings.use })
  return { ...(await kernel.render(adapter, profile)), notices: profile.notices }
}

/**
 * The account whose login a launch mounts: `-a`, the `account` setting, or
 * the only one captured (two captured and none named is an error, never a
 * guess). With none captured, `default`: a login made inside the session is
 * kept there.
 */
async function accountFor(kernel: Kernel, adapter: Adapter, request: Pick<LaunchRequest, 'account'>): Promise<string> {
  const choice = await chooseAccount(kernel.omhHome, adapter, { flag: request.account, setting: kernel.settings.account?.value })
  return choice.account ?? 'default'
}

function credentialsOf(kernel: Kernel, adapter: Adapter, account: string): CredentialMount[] {
  return credentialMounts(adapter.creds, credentialsDir(kernel.omhHome, adapter.name, account))
}
