/**
 * The engine network a session stands on: the one the settings name, checked to exist, or, behind
 * the allowlist, a network of omh's own for the proxies to reach out on.
 */
import { NETWORK_MISSING, OmhError, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import { fileToChange, type EffectiveSettings } from '@omh/kernel'

/** An engine's own modes, which name no network to look for. */
const MODE = /^(?:host|none|container:.*)$/

/**
 * The network a session on `runtime` joins, or reaches out through behind its proxy: the engine's
 * `[runtimes.<engine>] network`, else `[session] network`; absent, the engine's default. A named
 * network the engine does not have is refused with the setting that named it, before anything
 * starts, rather than passed on to fail as the engine's words from deep inside a start.
 */
export async function networkOn(settings: EffectiveSettings, runtime: RuntimePlugin, context: RuntimeContext): Promise<string | undefined> {
  const decided = settings.networkOn(runtime.engine)
  if (!decided || MODE.test(decided.value) || !runtime.networks?.exists) return decided?.value
  if (await runtime.networks.exists(decided.value, context)) return decided.value
  const perEngine = settings.last((s) => s.runtimes?.[runtime.engine]?.network)
  const key = perEngine ? `[runtimes.${runtime.engine}] network` : '[session] network'
  throw OmhError.of(NETWORK_MISSING, { args: [decided.value, key, decided.file, runtime.engine], hintArgs: [runtime.engine, decided.value, fileToChange(settings, decided)] })
}

/** The network omh makes for its proxies to reach out on when no setting names one. */
export const OUTSIDE_NETWORK = 'omh-outside'

/**
 * Where a session's proxies reach out: the network a setting names, else one of omh's own. The
 * engine's default is not taken on trust: a daemon started with `--bridge=none` has none, and an
 * engine configured with `netns = "none"` starts containers on none, so a proxy there would start and
 * answer every request with "No route to host". A network omh makes is one the engine joins.
 */
export async function outsideOn(settings: EffectiveSettings, runtime: RuntimePlugin, context: RuntimeContext, { make = true } = {}): Promise<string | undefined> {
  const named = await networkOn(settings, runtime, context)
  if (named || !runtime.networks) return named
  // A session whose container runs as it is has its proxy on this network, which the engine keeps while it does.
  if (!make) return OUTSIDE_NETWORK
  await runtime.networks.create(OUTSIDE_NETWORK, { internal: false, labels: { 'omh.outside': 'true' } }, context)
  return OUTSIDE_NETWORK
}
