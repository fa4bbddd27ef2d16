import fc from 'fast-check'
import { load } from 'js-yaml'
import { describe, expect, it } from 'vitest'
import type { AdapterFacts, Subagent } from '@omh/plugin-api'
import { testRenderer } from '@omh/plugin-kit/testing'
import { bundledFormats } from '@omh/test-utils'
import plugin, { claudeAgent, commandSkill, opencodeAgent, yamlString } from '../src/index.js'

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

  it('writes a command as an Agent Skill named like it, and drops one no skill could be', () => {
    const command = { name: 'review', source: '/c/review.md', frontmatter: { 'argument-hint': 'x' }, body: '\nReview $ARGUMENTS.\n', description: 'Reviews: closely' }
    const out = commandSkill(command, [])
    expect('content' in out && frontmatter(out.content)).toEqual({ name: 'review', description: 'Reviews: closely' })
    expect('content' in out && out.content.endsWith('---\n\nReview $ARGUMENTS.\n')).toBe(true)
    const bare = commandSkill({ ...command, description: undefined as unknown as string }, [])
    expect('content' in bare && frontmatter(bare.content)['description']).toBe('The /review command.')
    expect(commandSkill({ ...command, name: 'Review_it' }, [])).toEqual({ reason: 'a skill name is lowercase letters and digits joined by dashes' })
    expect(commandSkill(command, [{ name: 'review', description: 'd', source: '/s/review' }])).toEqual({ reason: 'a skill has the same name' })
  })

  it('reports each command staged as a skill as translated, under the binding path', async () => {
    const command = { name: 'review', source: '/c/review.md', frontmatter: {}, body: 'Go.\n' }
    const profile = { rules: [], skills: [], mcp: [], commands: [command], subagents: [], hooks: [] }
    const binding = { path: '/home/agent/.agents/skills', also: [], render: 'skill-md' }
    const out = await plugin.render({ capability: 'commands', items: [command], binding, adapter: claude, options: undefined, profile }, { guestHome: '/home/agent', guestWork: '/work' })
    expect(out!.files.map((f) => f.guest)).toEqual(['/home/agent/.agents/skills/review/SKILL.md'])
    expect(out!.translated).toEqual([{ capability: 'commands', name: 'review', to: 'a skill' }])
  })
})
