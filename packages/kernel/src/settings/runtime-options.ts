import * as z from 'zod/mini'
import type { Problem, RuntimePlugin } from '@omh/plugin-api'
import { closest, dotted, problemsFromIssues, type KeyPath } from '@omh/plugin-kit'
import type { SettingsLayer } from './load.js'
import { ENGINE_KEYS } from './schema.js'

/**
 * A problem for each `[runtimes.<engine>]` table no runtime drives (of `engines`, imported or
 * declared): a typo would otherwise be ignored.
 */
export function unknownEngines(layers: readonly SettingsLayer[], engines: readonly string[]): Problem[] {
  const problems: Problem[] = []
  for (const engine of new Set(layers.flatMap((l) => Object.keys(l.settings.runtimes ?? {})).filter((e) => !engines.includes(e)))) {
    const near = closest(engine, engines)
    const layer = layers.findLast((l) => l.settings.runtimes?.[engine])
    problems.push({ ...at(layer, ['runtimes', engine]), message: `no runtime plugin drives "${engine}" (installed: ${engines.join(', ') || 'none'})`, ...(near ? { suggestion: near } : {}) })
  }
  return problems
}

const at = (layer: SettingsLayer | undefined, path: KeyPath) => ({ ...(layer && { file: layer.file, ...layer.locate?.(path) }), path: dotted(path) })

/**
 * Each runtime's own table, `[runtimes.<engine>]`, merged key by key (the most specific layer's
 * value wins) and parsed by the runtime's own schema; or every problem, each at the file and line
 * of its key's layer.
 */
export function runtimeOptions(layers: readonly SettingsLayer[], runtimes: readonly RuntimePlugin[]): { options: Map<RuntimePlugin, unknown>; problems: Problem[] } {
  const problems: Problem[] = []
  const options = new Map<RuntimePlugin, unknown>()
  for (const runtime of runtimes) {
    const from = new Map<string, SettingsLayer>()
    // Keys every engine takes were checked with the rest of the file; the plugin sees only its own.
    const own = (layer: SettingsLayer) => Object.keys(layer.settings.runtimes?.[runtime.engine] ?? {}).filter((key) => !ENGINE_KEYS.includes(key))
    for (const layer of layers) for (const key of own(layer)) from.set(key, layer)
    const data = Object.fromEntries([...from].map(([key, layer]) => [key, layer.settings.runtimes![runtime.engine]![key]]))
    const last = layers.findLast((l) => own(l).length)
    const locate = (p: KeyPath) => at(from.get(String(p[0])) ?? last, ['runtimes', runtime.engine, ...p])
    if (!runtime.options) {
      if (last) problems.push({ ...locate([]), message: `the ${runtime.engine} runtime (${runtime.meta.name}) takes no settings` })
      continue
    }
    const parsed = z.safeParse(runtime.options, data)
    if (parsed.success) options.set(runtime, parsed.data)
    else problems.push(...problemsFromIssues(parsed.error.issues, { data, schema: runtime.options, locate }).map((pr) => ({ ...pr, path: dotted(['runtimes', runtime.engine]) + (pr.path ? `.${pr.path}` : '') })))
  }
  return { options, problems }
}
