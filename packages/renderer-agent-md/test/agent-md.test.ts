import fc from 'fast-check'
import { load } from 'js-yaml'
import { describe, expect, it } from 'vitest'
import type { AdapterFacts, Subagent } from '@omh/plugin-api'
import { testRenderer } from '@omh/plugin-kit/testing'
import { bundledFormats } from '../../../test/helpers/bundled.js'
import plugin, { claudeAgent, opencodeAgent, yamlString } from '../src/index.js'

const claude: AdapterFacts = { name: 'claude', tools: { edit: 'Edit|Write', read: 'Read', shell: 'Bash', search: 'Grep|Glob' }, paths: {} }
const agent = (over: Partial<Subagent> = {}): Subagent => ({ name: 'a', description: 'd', source: '/a.md', body: 'Prompt.\n', ...over })
const frontmatter = (content: string) => load(content.split('---\n')[1]!) as Record<string, unknown>

testRenderer(plugin, { ...(await bundledFormats()), golden: new URL('./golden', import.meta.url) })

describe('agent-md', () => {
  it('writes every string so that YAML reads it back unchanged', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), (text) => {
        expect(load(`k: ${yamlString(text)}`)).toEqual({ k: text })
      }),
      { numRuns: 1000 },
    )
    for (const awkward of ['yes', 'null', '12', '- x', 'a: b', 'a #b', '"q"', ' lead', 'trail ', '', '~', '@x', 'x:']) {
      expect(load(`k: ${yamlString(awkward)}`)).toEqual({ k: awkward })
    }
  })

  it("spells tool words in Claude's names, and drops a subagent allowed a tool the harness cannot name", () => {
    const out = claudeAgent(agent({ tools: ['read', 'search'], model: { claude: 'sonnet', opencode: 'x/y' } }), claude)
    expect('content' in out && frontmatter(out.content)).toEqual({ name: 'a', description: 'd', tools: 'Read, Grep, Glob', model: 'sonnet' })
    expect(claudeAgent(agent({ tools: ['search'] }), { ...claude, tools: { read: 'Read' } })).toEqual({ reason: 'no `search` tool' })
  })

  it('withholds every tool word not allowed for OpenCode, and drops a subagent when one cannot be withheld', () => {
    const opencode: AdapterFacts = { name: 'opencode', tools: { edit: 'edit|write', read: 'read', shell: 'bash' }, paths: {} }
    const out = opencodeAgent(agent({ tools: ['read', 'search'] }), opencode)
    expect('content' in out && frontmatter(out.content)).toEqual({ description: 'd', mode: 'subagent', tools: { edit: false, write: false, bash: false } })
    expect(opencodeAgent(agent({ tools: ['read'] }), opencode)).toEqual({ reason: 'no way to withhold the `search` tool' })
    expect('content' in opencodeAgent(agent(), opencode)).toBe(true)
  })
})
