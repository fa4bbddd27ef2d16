import fc from 'fast-check'
import { parse } from 'smol-toml'
import { describe, expect, it } from 'vitest'
import { TOOL_WORDS, type Subagent } from '@omh/plugin-api'
import { testRenderer, text } from '@omh/plugin-kit/testing'
import plugin, { codexAgent } from '../src/index.js'
import { bundledFormats } from '@omh/test-utils'

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
        expect(out.readOnly).toBe(false)
        expect({ ...parse(out.content) }).toEqual({ name, description, developer_instructions: body, ...(model ? { model } : {}) })
      }),
      { numRuns: 500 },
    )
  })

  it('makes a subagent limited to reading and searching a read-only agent, drops one with any other limit, and keeps one allowed every tool', () => {
    const agent: Subagent = { name: 'r', description: 'd', body: 'p', source: '/r.md', tools: ['read', 'search'] }
    const ro = codexAgent(agent, 'codex')
    if (!('content' in ro)) throw new Error(ro.reason)
    expect(ro.readOnly).toBe(true)
    expect(parse(ro.content)).toEqual({ name: 'r', description: 'd', sandbox_mode: 'read-only', developer_instructions: 'p' })
    expect(codexAgent({ ...agent, tools: ['read', 'edit'] }, 'codex')).toEqual({ reason: 'no way to limit a subagent’s tools to read, edit (only to reading, as a read-only sandbox)' })
    expect(codexAgent({ ...agent, tools: [] }, 'codex')).toMatchObject({ reason: expect.stringContaining('to none') })
    const all = codexAgent({ ...agent, tools: [...TOOL_WORDS] }, 'codex')
    expect(all).toMatchObject({ readOnly: false })
  })
})
