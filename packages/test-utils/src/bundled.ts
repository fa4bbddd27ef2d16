import path from 'node:path'
import { checkAdapterFile, toAdapter } from '@omh/kernel'
import type { AdapterFacts, Binding } from '@omh/plugin-api'
import { ROOT } from './root.js'

/**
 * The bundled adapters' bindings and facts by format, as the kernel hands
 * them to renderers: what the test kit renders the bundled renderers with.
 */
export async function bundledFormats(): Promise<{ bindings: Record<string, Binding>; adapters: Record<string, AdapterFacts> }> {
  const bindings: Record<string, Binding> = {}
  const adapters: Record<string, AdapterFacts> = {}
  for (const harness of ['claude', 'codex', 'opencode']) {
    const file = path.join(ROOT, 'adapters', `${harness}.toml`)
    const check = await checkAdapterFile(file, harness)
    if (!check.data) throw new Error(`${file}: ${JSON.stringify(check.problems)}`)
    const adapter = toAdapter(file, check.data)
    const facts: AdapterFacts = {
      name: adapter.name,
      tools: adapter.tools,
      paths: Object.fromEntries(adapter.bindings.map((b) => [b.capability, b.path])),
    }
    for (const { capability: _c, options: _o, expect: _e, ...binding } of adapter.bindings) {
      bindings[binding.render] ??= binding
      adapters[binding.render] ??= facts
    }
  }
  return { bindings, adapters }
}
