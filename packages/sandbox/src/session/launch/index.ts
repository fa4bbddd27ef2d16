/**
 * The launch: four phases (claim, prepare, bring up, run), each a function
 * with a typed result, and the one `try/finally` that releases the claim.
 *
 * This is the entry the rest of omh imports: the phases live beside it
 * (claim.ts, prepare.ts, bring-up.ts, run.ts) so each can be read alone,
 * while the order of events, and what is undone when one fails, stays here.
 */
import { SESSION_BUSY, isOmhError, type ContainerSpec, type RuntimePlugin } from '@omh/plugin-api'
import type { Adapter, RenderReport } from '@omh/kernel'
import type { KernelView } from '../../kernel-view.js'
import { chooseAccount } from '../../accounts.js'
import { agentUser, userSpec } from '../../agent-user.js'
import type { ProjectEnvironment } from '../../environment/project.js'
import { keptSetupsDir } from '../../environment/reuse-setup.js'
import { setUpSession, setupDone } from '../../environment/setup.js'
import { GUEST_SSH_PORT } from '../../ssh.js'
import { carriedPaths, planCarryIn } from '../../work/carry-in.js'
import { publishedPorts } from '../../network/beside.js'
import { touchUp } from '../idle.js'
import { branchOf } from '../../host/layout.js'
import { resolveBase, type Base } from '../../host/repo.js'
import { Sessions } from '../sessions.js'
import { bringUp, keepable } from './bring-up.js'
import { claim, view } from './claim.js'
import { launchHooks } from './hooks.js'
import { recipes } from './image.js'
import { prepare } from './prepare.js'
import { discard, run } from './run.js'
import { spareReady } from './spare.js'
import { answer, early, inOrder } from './shared.js'
import type { EnvironmentView, Launch, LaunchHost, LaunchRequest } from './types.js'

export { environmentInput, recipes, type ImageSource } from './image.js'
export type { EnvironmentView, LaunchAnnouncement, LaunchHost, LaunchRequest } from './types.js'

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
export async function previewLaunch(kernel: KernelView, request: LaunchRequest, host: Pick<LaunchHost, 'images'> = {}): Promise<LaunchPreview> {
  const sessions = Sessions.of(kernel)
  const [adapter, picked] = await inOrder(kernel.adapter(request.harness), sessions.pickForLaunch(request))
  const account = await accountFor(kernel, adapter, request)
  const base = picked.exists ? undefined : await resolveBase(sessions.repo, kernel.options.env)
  // Read, checked and refused as a launch would; only the names are shown.
  const carry = picked.exists ? [] : await planCarryIn(kernel, sessions.repo.root, kernel.options.env)
  const images = host.images ?? recipes(kernel)
  const prepared = await prepare({ kernel, hooks: launchHooks(await kernel.launchTaps()), sessions, adapter, account, request, images, agent: agentUser() }, picked.sid, { dryRun: true })
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
export async function launch(kernel: KernelView, request: LaunchRequest, host: LaunchHost): Promise<number> {
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

async function launchOnce(kernel: KernelView, request: LaunchRequest, host: LaunchHost): Promise<number> {
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
  const at: Launch = { kernel, hooks: launchHooks(await kernel.launchTaps()), sessions, adapter, account, request, images: host.images ?? recipes(kernel), agent: agentUser() }

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
    if (request.spare) {
      // A spare stops here: its container is up, and a `--new` may claim it from now on.
      started = true
      await spareReady(at, claimed.sid)
      return 0
    }
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
    // A launch that made its session or claimed the spare leaves the next `--new` without one. The
    // maker, in a process of its own, decides the rest: a spare that still holds stays, a stale one
    // goes before another is made, and with `[session] spare = 0` any there is goes. Unset, only a
    // launch at a terminal asks: one from a script is often the only one, and a spare would stand idle.
    // It is asked for once the harness starts, so making it takes nothing from this launch.
    const spare = kernel.settings.last((s) => s.session?.spare)?.value
    const harnessStarted = claimed.created && host.prepareSpare && (spare === undefined ? request.tty : true) ? () => host.prepareSpare!(adapter.name) : undefined
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
    return await run(at, prepared, seen.runtime, host, way, kept, harnessStarted)
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
 * The account whose login a launch mounts: `-a`, the `account` setting, or
 * the only one captured (two captured and none named is an error, never a
 * guess). With none captured, `default`: a login made inside the session is
 * kept there.
 */
async function accountFor(kernel: KernelView, adapter: Adapter, request: Pick<LaunchRequest, 'account'>): Promise<string> {
  const choice = await chooseAccount(kernel.omhState, adapter, { flag: request.account, setting: kernel.settings.account?.value })
  return choice.account ?? 'default'
}
