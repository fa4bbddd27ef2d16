/**
 * What extension plugins tap. `failed` is the kernel's own hook; a launch's hooks belong to the
 * launch, so the kernel keeps an extension's launch taps, guarded, for whoever runs a launch to
 * tap into hooks it declares itself.
 */
import type { SyncHook } from 'tapable'
import type { ExtensionHooks, ExtensionPlugin, LaunchPlan, OmhError } from '@omh/plugin-api'
import { guard, guardSync, wrap } from './guard.js'

/** One extension's tap of a launch hook: the tap's name, and its function behind the plugin's guard. */
export interface LaunchTap<F> {
  readonly name: string
  readonly fn: F
}

/** Every extension's launch taps, in the order the extensions tapped them. */
export interface LaunchTaps {
  readonly beforeLaunch: readonly LaunchTap<(plan: LaunchPlan) => Promise<LaunchPlan>>[]
  readonly launched: readonly LaunchTap<(plan: LaunchPlan, status: number) => Promise<void>>[]
}

/** Where an extension's taps go: the `failed` hook, where its faults are kept, and the launch taps. */
export interface ExtensionSinks {
  readonly failed: SyncHook<[OmhError]>
  readonly failedFaults: OmhError[]
  readonly launch: { beforeLaunch: LaunchTaps['beforeLaunch'][number][]; launched: LaunchTaps['launched'][number][] }
}

/**
 * Hands an extension its hooks, each tap wrapped so its faults name the plugin and the hook. With
 * `declared`, a tap of any other hook is not made; the hooks so passed over are returned.
 */
export function applyExtension(plugin: ExtensionPlugin, sinks: ExtensionSinks, declared?: readonly (keyof ExtensionHooks)[]): (keyof ExtensionHooks)[] {
  const name = plugin.meta.name
  const undeclared: (keyof ExtensionHooks)[] = []
  /** Whether a tap of `hook` is made: a hook the package did not declare is noted instead. */
  const allowed = (hook: keyof ExtensionHooks) => {
    if (!declared || declared.includes(hook)) return true
    undeclared.push(hook)
    return false
  }
  const hooks: ExtensionHooks = {
    beforeLaunch: {
      tap: (tap, fn) => allowed('beforeLaunch') && sinks.launch.beforeLaunch.push({ name: tap || name, fn: (plan) => guard(name, 'Kernel.hooks.beforeLaunch', () => fn(plan)) }),
    },
    launched: {
      tap: (tap, fn) =>
        allowed('launched') &&
        sinks.launch.launched.push({ name: tap || name, fn: (plan, status) => guard(name, 'Kernel.hooks.launched', () => fn(plan, status)) }),
    },
    failed: {
      tap: (tap, fn) =>
        allowed('failed') &&
        sinks.failed.tap(tap || name, (error) => {
          try {
            fn(error)
          } catch (fault) {
            sinks.failedFaults.push(wrap(name, 'Kernel.hooks.failed', fault))
          }
        }),
    },
  }
  guardSync(name, 'ExtensionPlugin.apply', () => plugin.apply(hooks))
  return undeclared
}
