/**
 * The runtime's choice: each runtime plugin taps `resolveRuntime`, and the first whose engine
 * matches the request and answers (its `detect`, or the caller's probe) is the one a command uses.
 */
import { AsyncSeriesBailHook } from 'tapable'
import {
  OmhError,
  RUNTIME_NOT_FOUND,
  RUNTIME_UNKNOWN,
  type RuntimeContext,
  type RuntimeInfo,
  type RuntimePlugin,
  type RuntimeUnavailable,
} from '@omh/plugin-api'
import { closest } from '@omh/plugin-kit'
import { guard } from '../plugins/guard.js'

/** Asked of `resolveRuntime`; taps add to `tried` when their engine cannot serve. */
export interface RuntimeRequest {
  /** `auto`, or an engine name. */
  readonly engine: string
  readonly context: RuntimeContext
  readonly tried: RuntimeUnavailable[]
  /**
   * A question the caller needs answered anyway ("the session's container?"), asked of each
   * runtime instead of `detect`: an answer proves the engine usable. A runtime whose probe fails,
   * or that cannot be probed (undefined instead of a promise), is detected, so the pick and every
   * reason given for passing a runtime over are the same either way.
   */
  readonly probe?: (runtime: RuntimePlugin) => Promise<unknown> | undefined
}

export interface ResolvedRuntime {
  readonly runtime: RuntimePlugin
  readonly info: RuntimeInfo
}

/**
 * What `resolveRuntime` found when asked with a probe: the runtime, with the
 * probe's answer when the probe stood in for `detect`, or with what `detect`
 * said when it did not.
 */
export type ReachedRuntime<T> =
  | { readonly runtime: RuntimePlugin; readonly probed: true; readonly answer: T }
  | { readonly runtime: RuntimePlugin; readonly probed: false; readonly info?: RuntimeInfo }


/**
 * Asked for a container engine. Each runtime plugin taps it; the first
 * whose engine matches the request and whose `detect()` answers wins.
 * Taps run most specific settings layer first, then in the order a
 * layer's `plugins` names them, so `auto` is deterministic.
 */
export type RuntimeHook = AsyncSeriesBailHook<[RuntimeRequest], ReachedRuntime<unknown> | undefined>

export const runtimeHook = (): RuntimeHook => new AsyncSeriesBailHook<[RuntimeRequest], ReachedRuntime<unknown> | undefined>(['request'])

/** How a caller asks: where an explicit engine came from, and the question that stands in for `detect`. */
export interface RuntimeAsk<T> {
  readonly origin?: string
  readonly probe: (runtime: RuntimePlugin) => Promise<T> | undefined
}

/** Taps a runtime at its settings layer's stage: it answers a request for its engine, or for `auto`. */
export function tapRuntime(hook: RuntimeHook, plugin: RuntimePlugin, stage: number): void {
  hook.tapPromise({ name: plugin.meta.name, stage }, async (request) => {
    if (request.engine !== 'auto' && request.engine !== plugin.engine) return undefined
    const asking = request.probe?.(plugin)
    if (asking) {
      try {
        return { runtime: plugin, probed: true, answer: await asking }
      } catch {
        // Not an answer; detect says whether the engine is usable all the same, and why not.
      }
    }
    const found = await detectWith(plugin, request.context)
    if ('version' in found) return { runtime: plugin, probed: false, info: found }
    request.tried.push(found)
    return undefined
  })
}

/** The runtimes a kernel loaded, and the `runtime` setting that picks among them. */
export interface Runtimes {
  readonly hook: RuntimeHook
  readonly engines: readonly string[]
  readonly setting?: { readonly value: string; readonly file: string }
}

/** The runtime to use, as `Kernel.resolveRuntime` describes. */
export async function resolveWith<T>(
  runtimes: Runtimes,
  wanted: string | undefined,
  context: RuntimeContext,
  how: string | RuntimeAsk<T>,
): Promise<ResolvedRuntime | ReachedRuntime<T>> {
  const { origin = '--runtime', probe } = typeof how === 'string' ? { origin: how, probe: undefined } : how
  const engine = wantedEngine(runtimes, wanted, origin)
  const request: RuntimeRequest = { engine, context, tried: [], ...(probe ? { probe } : {}) }
  const found = await runtimes.hook.promise(request)
  if (!found) throw notFound(engine, runtimes.engines, request.tried)
  if (probe) return found as ReachedRuntime<T>
  return { runtime: found.runtime, info: (found as { info: RuntimeInfo }).info }
}

/** `auto` or an engine some runtime drives, from `wanted` or the `runtime` setting. */
function wantedEngine({ setting, engines }: Runtimes, wanted: string | undefined, origin: string): string {
  const engine = wanted ?? setting?.value ?? 'auto'
  if (engine !== 'auto' && !engines.includes(engine)) {
    throw OmhError.of(RUNTIME_UNKNOWN, {
      args: [engine, wanted === undefined && setting ? `${setting.file} (runtime)` : origin],
      hintArgs: [engines, closest(engine, engines)],
    })
  }
  return engine
}

function notFound(engine: string, engines: readonly string[], tried: readonly RuntimeUnavailable[]): OmhError {
  return OmhError.of(RUNTIME_NOT_FOUND, {
    args: [engine, tried.map((t) => t.engine)],
    hintArgs: [engine, engines],
    problems: tried.map((t) => ({ path: t.engine, message: `${t.reason}.${t.hint ? ` ${t.hint.replace(/\.?$/, '.')}` : ''}` })),
    details: { tried },
  })
}

const detectWith = (runtime: RuntimePlugin, context: RuntimeContext) =>
  guard(runtime.meta.name, 'Kernel.hooks.resolveRuntime', () => runtime.detect(context))
