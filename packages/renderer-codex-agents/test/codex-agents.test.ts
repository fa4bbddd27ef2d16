import fc from 'fast-check'
import { parse } from 'smol-toml'
import { describe, expect, it } from 'vitest'
import { TOOL_WORDS, type Subagent } from '@omh/plugin-api'
import { testRenderer, text } from '@omh/plugin-kit/testing'
import plugin, { codexAgent } from '../src/index.js'
import { bundledFormats } from '../../../test/helpers/bundled.js'

testRenderer(plugin, { ...(await bundledFormats()), golden: new URL('./golden', import.meta.url) })

describe('codex-agents', () => {
  it('writes only the keys Codex knows, holding exactly the subagent, for any text', () => {
    const subagent = fc.record({
      name: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
      description: text,
      body: text,
      model: fc.option(text.filter((m) => m.length > 0), { nil: undefined }),
    })
    fc.assert(
      fc.property(subagent, ({ name, description, body, model }) => {
        const agent: Subagent = { name, description, body, source: '/x.md', ...(model ? { model } : {}) }
        const out = codexAgent(agent, 'codex')
        if (!('content' in out)) throw new Error(out.reason)
        expect({ ...parse(out.content) }).toEqual({ name, description, developer_instructions: body, ...(model ? { model } : {}) })
      }),
      { numRuns: 500 },
    )
  })

  it('drops a subagent limited to some tools, and keeps one allowed every tool', () => {
    const agent: Subagent = { name: 'r', description: 'd', body: 'p', source: '/r.md', tools: ['read'] }
    expect(codexAgent(agent, 'codex')).toEqual({ reason: 'no way to limit a subagent’s tools' })
    expect('content' in codexAgent({ ...agent, tools: [...TOOL_WORDS] }, 'codex')).toBe(true)
  })
})
