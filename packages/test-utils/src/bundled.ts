import { readdirSync } from 'node:fs'
import path from 'node:path'
import { checkAdapterFile, toAdapter, type Adapter } from '@omh/kernel'
import type { AdapterFacts, Binding } from '@omh/plugin-api'
import { ROOT } from './root.js'

/** A bundled adapter as the kernel reads it: its `$HOME` paths expanded to the guest's. */
export async function bundledAdapter(harness: string): Promise<Adapter> {
  const file = path.join(ROOT, 'adapters', `${harness}.toml`)
  const check = await checkAdapterFile(file, harness)
  if (!check.data) throw new Error(`${file}: ${JSON.stringify(check.problems)}`)
  return toAdapter(file, check.data)
}

/** What a renderer is told of the harness it renders for. */
export const factsOf = (adapter: Adapter): AdapterFacts => ({
  name: adapter.name,
  tools: adapter.tools,
  paths: Object.fromEntries(adapter.bindings.map((b) => [b.capability, b.path])),
})

/**
 * The bundled adapters' bindings and facts by format, as the kernel hands
 * them to renderers: what the test kit renders the bundled renderers with.
 */
export async function bundledFormats(): Promise<{ bindings: Record<string, Binding>; adapters: Record<string, AdapterFacts> }> {
  const bindings: Record<string, Binding> = {}
  const adapters: Record<string, AdapterFacts> = {}
  const harnesses = readdirSync(path.join(ROOT, 'adapters')).filter((f) => f.endsWith('.toml')).map((f) => f.slice(0, -'.toml'.length)).sort()
  for (const harness of harnesses) {
    const adapter = await bundledAdapter(harness)
    for (const { capability: _c, options: _o, expect: _e, ...binding } of adapter.bindings) {
      bindings[binding.render] ??= binding
      adapters[binding.render] ??= factsOf(adapter)
    }
  }
  return { bindings, adapters }
}
