/**
 * The launch's side of the prepared spare (../spare.ts): `--new` claims one that still holds, and a
 * spare is made by a launch that stops once its container is up, in a process of its own.
 */
import { mkdir } from 'node:fs/promises'
import type { KernelView } from '../../kernel-view.js'
import { resolveBase } from '../../host/repo.js'
import { planCarryIn, type CarryFile } from '../../work/carry-in.js'
import { removeSession } from '../create.js'
import { takeDown } from '../teardown.js'
import { containerName } from '../../host/layout.js'
import { claimSession, readClaim, withRepoLock } from '../store.js'
import { carriedDigest, isSpare, listSpares, readSpare, spareHolds, unmarkSpare, writeSpare } from '../spare.js'
import { sessionEngine } from '../engine.js'
import { readEngine, readUp } from '../idle.js'
import type { Sessions } from '../sessions.js'
import { answer, early } from './shared.js'
import type { Claimed, EngineView, Launch, LaunchHost, LaunchRequest } from './types.js'

/** `[session] spare`: how many spares a repository keeps per harness, 0 or 1; 1 unless set. */
export const sparesWanted = (kernel: Pick<KernelView, 'settings'>): number => kernel.settings.last((s) => s.session?.spare)?.value ?? 1

/** What a spare of `harness` must have been made from to serve a new session now. */
function wantedNow(kernel: KernelView, sessions: Sessions, harness: string): Promise<{ harness: string; base: string; carried: string }> {
  const env = kernel.options.env
  return Promise.all([resolveBase(sessions.repo, env), planCarryIn(kernel, sessions.repo.root, env)]).then(([base, carry]) => ({ harness, base: base.commit, carried: carriedDigest(carry) }))
}

/** Whether this launch asks for a session a spare can be: a new one, numbered, not itself a spare. */
const spareServes = (request: LaunchRequest): boolean => request.fresh === true && request.name === undefined && !request.spare

/**
 * `--new`: the repository's ready spare of this harness, claimed, when it still is what a session
 * made now would be; else undefined and the launch makes one. A spare that no longer holds is left
 * for the next spare's maker to take away, so this launch does not wait on it.
 */
export async function claimSpare(at: Launch, view: (sid: string) => Promise<EngineView>): Promise<Claimed | undefined> {
  const { kernel, sessions, adapter, request } = at
  if (!spareServes(request) || sparesWanted(kernel) === 0) return undefined
  const spares = (await listSpares(kernel.omhState, sessions.repo)).filter((s) => s.mark?.ready && s.mark.harness === adapter.name)
  // One on another engine than `--runtime` names is not this launch's: a session stays on its engine.
  const onEngine = await Promise.all(spares.map(async ({ sid }) => request.engine === undefined || request.engine === 'auto' || (await readEngine(sessions.paths(sid).run)) === request.engine))
  const ready = spares.filter((_, n) => onEngine[n])
  if (!ready.length) return undefined
  const env = kernel.options.env
  const carriedIn = (checkout: string): Promise<CarryFile[]> => planCarryIn(kernel, checkout, env)
  const want = wantedNow(kernel, sessions, adapter.name)
  // Each spare's own questions go beside the repository's, and are judged once both are in; the
  // engine is asked about the first one's container meanwhile, as a launch into it would ask.
  const holding = ready.map(({ sid }) => ({ sid, holds: spareHolds(kernel.omhState, sessions.repo, sid, want, carriedIn, env) }))
  const upBefore = JSON.stringify(await readUp(sessions.paths(ready[0]!.sid).run))
  const seen = early(view(ready[0]!.sid))
  await Promise.allSettled([want, ...holding.map((h) => h.holds)])
  for (const { sid, holds } of holding) {
    if (!(await holds)) continue
    const held = await withRepoLock(kernel.omhState, sessions.repo, async () => {
      // Another `--new` may have claimed it, or its maker still holds it, since it was looked at.
      const run = sessions.paths(sid).run
      if (!(await readSpare(run))?.ready || (await readClaim(kernel.omhState, sessions.repo, sid))) return undefined
      await unmarkSpare(run)
      // The engine's early answer stands unless the idle check stopped the container since it was asked.
      const stands = sid === ready[0]!.sid && JSON.stringify(await readUp(run)) === upBefore
      return { sid, created: true, lastUsed: 0, stands, release: await claimSession(kernel.omhState, sessions.repo, sid, adapter.name) }
    })
    if (held) {
      const { stands, ...claimed } = held
      return stands ? { ...claimed, engine: await answer(seen) } : claimed
    }
  }
  return undefined
}

/** Thrown under the lock when the harness has a spare already: its maker stops there, quietly. */
export class SpareExists extends Error {}

/**
 * Marks the session a spare's making is about to create, before anything of it exists, so no
 * listing ever shows it; refuses when the harness has a spare already (ready, or being made).
 */
export async function markNewSpare(at: Launch, sid: string, base: string, carry: readonly CarryFile[]): Promise<void> {
  const { kernel, sessions, adapter } = at
  const others = (await listSpares(kernel.omhState, sessions.repo)).filter((s) => s.sid !== sid && s.mark?.harness === adapter.name)
  if (others.length) throw new SpareExists(`${adapter.name} has a spare: ${others.map((s) => s.sid).join(', ')}`)
  const run = sessions.paths(sid).run
  await mkdir(run, { recursive: true })
  await writeSpare(run, { harness: adapter.name, base, carried: carriedDigest(carry), ready: false })
}

/** Its container is up: from now on a `--new` may claim it. */
export async function spareReady(at: Launch, sid: string): Promise<void> {
  const run = at.sessions.paths(sid).run
  const mark = await readSpare(run)
  if (mark) await writeSpare(run, { ...mark, ready: true })
}

/**
 * Before a spare is made: the harness's spares that no longer hold, or whose maker died before
 * they were ready, are taken away (container, worktree, branch). Resolves whether one still holds
 * or is being made, when there is nothing to make.
 */
export async function clearStaleSpares(kernel: KernelView, sessions: Sessions, harness: string, host: Pick<LaunchHost, 'context'>): Promise<boolean> {
  const env = kernel.options.env
  const spares = (await listSpares(kernel.omhState, sessions.repo)).filter((s) => !s.mark || s.mark.harness === harness)
  if (!spares.length) return false
  const want = wantedNow(kernel, sessions, harness)
  await want
  let standing = false
  for (const { sid, mark } of spares) {
    const making = mark && !mark.ready && (await readClaim(kernel.omhState, sessions.repo, sid)) !== undefined
    if (making || (await spareHolds(kernel.omhState, sessions.repo, sid, want, (checkout) => planCarryIn(kernel, checkout, env), env))) {
      standing = true
      continue
    }
    await discardSpare(kernel, sessions, sid, host)
  }
  return standing
}

/** Takes a spare away whole, under the repository's lock so no `--new` claims it meanwhile. */
export async function discardSpare(kernel: KernelView, sessions: Sessions, sid: string, host: Pick<LaunchHost, 'context'>): Promise<void> {
  await withRepoLock(kernel.omhState, sessions.repo, async () => {
    // Claimed since it was found stale: a session now, which is not this one's to take away.
    const run = sessions.paths(sid).run
    if (!(await isSpare(run))) return
    const runtime = await sessionEngine(kernel, run, sid, undefined, host.context)
      .then((engine) => kernel.resolveRuntime(engine, host.context))
      .then(
        ({ runtime }) => runtime,
        () => undefined,
      )
    if (runtime) {
      await takeDown(kernel.omhState, sessions.repo, sid, { runtime, context: host.context, containers: [containerName(sessions.repo, sid)], bringHome: false, bestEffort: true })
    }
    await removeSession(kernel.omhState, sessions.repo, sid, kernel.options.env, { deleteBranch: true })
  })
}

/**
 * Makes the repository's spare of `harness` unless one still holds or is being made: the stale
 * ones go first, then a launch of a new session that stops once its container is up. Run apart from
 * the launch that asked (`omh sessions spare`), so no one waits on it.
 */
export async function makeSpare(kernel: KernelView, sessions: Sessions, harness: string, host: LaunchHost, start: (request: LaunchRequest) => Promise<number>): Promise<'made' | 'standing' | 'off'> {
  if (sparesWanted(kernel) === 0) {
    // Turned off with a spare standing: it goes, as one gone stale would.
    for (const { sid } of (await listSpares(kernel.omhState, sessions.repo)).filter((s) => s.mark?.harness === harness)) await discardSpare(kernel, sessions, sid, host)
    return 'off'
  }
  if (await clearStaleSpares(kernel, sessions, harness, host)) return 'standing'
  try {
    await start({ harness, args: [], tty: false, fresh: true, spare: true })
    return 'made'
  } catch (error) {
    if (error instanceof SpareExists) return 'standing'
    throw error
  }
}
