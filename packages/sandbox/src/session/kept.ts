/**
 * A kept launch: what a warm relaunch of a session needs to go straight to the engine's `exec`. A
 * launch that reused a running container as it was offers this to whoever listens (the fast
 * path's recorder, which also notes every file the launch read); the fast path replays it while
 * every one of those files is unchanged and the engine still runs the same containers. Nothing
 * listens in a process that records nothing.
 */
import type { ClientProcess } from '@omh/plugin-api'

/** What a relaunch does: the exec, and the bookkeeping a launch keeps. */
export interface KeptLaunchOffer {
  /** Containers the engine must still be running, by name: the session's, then its egress proxy's. */
  readonly containers: readonly string[]
  /** The runtime's question about them (`client.containerState`), for its client: a relaunch needs the same answer. */
  readonly check: readonly string[]
  /** The process the runtime's `exec` starts for the harness, as its client describes it. */
  readonly exec: ClientProcess
  /** The session's bookkeeping directory: claimed, stamped and touched as a launch does. */
  readonly run: string
  readonly harness: string
  /** With the egress allowlist: the settings files whose edit during the run reloads the proxy's rules. */
  readonly allowlist?: {
    readonly files: readonly string[]
    /** The session's egress directory, the proxy's session container, and the engine both run on. */
    readonly dir: string
    readonly container: string
    readonly engine: string
  }
}

/** The listener, on `globalThis` so a bundled and an unbundled copy of this module meet. */
export const KEPT_LAUNCH = Symbol.for('omh.kept-launch')

export interface KeptLaunchListener {
  /** Called just before the runtime's `exec` of the harness starts `offer.exec`. */
  offer(offer: KeptLaunchOffer): void
}

/** Offers a relaunch to the listener, when there is one. */
export function offerKeptLaunch(offer: KeptLaunchOffer): void {
  ;(globalThis as { [KEPT_LAUNCH]?: KeptLaunchListener })[KEPT_LAUNCH]?.offer(offer)
}
