/**
 * A launch's hooks, declared by the launch that fires them: `beforeLaunch` once the plan is made
 * and nothing has started, `launched` once the harness exited. Extensions tapped them through the
 * kernel when they loaded (`Kernel.launchTaps()`, which imports an extension that declares them); each
 * launch taps those into hooks of its own.
 */
import { AsyncSeriesHook, AsyncSeriesWaterfallHook } from 'tapable'
import type { LaunchPlan } from '@omh/plugin-api'
import type { LaunchTaps } from '@omh/kernel'

export interface LaunchHooks {
  /** Waterfall: each tap returns the plan, changed or not; the container's plan digest is taken after the last. */
  readonly beforeLaunch: AsyncSeriesWaterfallHook<[LaunchPlan]>
  /** The harness exited with this status. */
  readonly launched: AsyncSeriesHook<[LaunchPlan, number]>
}

export function launchHooks(taps: LaunchTaps): LaunchHooks {
  const hooks = Object.freeze({
    beforeLaunch: new AsyncSeriesWaterfallHook<[LaunchPlan]>(['plan']),
    launched: new AsyncSeriesHook<[LaunchPlan, number]>(['plan', 'status']),
  })
  for (const { name, fn } of taps.beforeLaunch) hooks.beforeLaunch.tapPromise(name, fn)
  for (const { name, fn } of taps.launched) hooks.launched.tapPromise(name, fn)
  return hooks
}
