import type { AdapterFacts, Binding } from '@omh/plugin-api'
import { bundledAdapter, factsOf } from '@omh/test-utils'

// Gemini CLI's bundled adapter as a renderer receives it: its tool names, its paths with $HOME
// expanded, and its hooks binding (which shares its format with the MCP binding).
const adapter = await bundledAdapter('gemini')

export const gemini: AdapterFacts = factsOf(adapter)

const { capability: _c, options: _o, expect: _e, ...hooks } = adapter.bindings.find((b) => b.capability === 'hooks')!
export const hooksBinding: Partial<Binding> = hooks
