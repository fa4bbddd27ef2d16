import fc from 'fast-check'
import { load } from 'js-yaml'
import { describe, expect, it } from 'vitest'
import type { AdapterFacts, Subagent } from '@omh/plugin-api'
import { testRenderer } from '@omh/plugin-kit/testing'
import { bundledFormats } from '@omh/test-utils'
import * as z from 'zod/mini'
import plugin, { claudeAgent, commandSkill, opencodeAgent, refusedBy, yamlString } from '../src/index.js'

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

  describe('the checks a harness makes as it loads an agent file', () => {
    // Qwen Code 0.24.4's: a name of 2 to 50 letters, digits, `-` and `_`, neither of the last two at
    // either end; names it keeps; a prompt of 10 characters or more.
    const options = {
      name: '(?=.{2,50}$)[\\p{L}\\p{N}](?:[\\p{L}\\p{N}_-]*[\\p{L}\\p{N}])?',
      reserved: ['main', 'system'],
      min_prompt: 10,
    }

    it('passes an agent that meets them, and names the first it fails', () => {
      expect(refusedBy(agent({ name: 'código-2', body: 'You review code.\n' }), options)).toBeUndefined()
      expect(refusedBy(agent({ name: 'x', body: 'You review code.\n' }), options)).toBe(`the harness loads an agent only when its name matches ${options.name}`)
      for (const name of ['-x', 'x_', 'a b', 'a.b', 'a'.repeat(51)]) expect(refusedBy(agent({ name, body: 'You review code.' }), options), name).toMatch(/^the harness loads an agent only when its name matches/)
      expect(refusedBy(agent({ name: 'Main', body: 'You review code.' }), options)).toBe('the harness keeps the name "Main" for itself')
      expect(refusedBy(agent({ name: 'ok', body: '\n  You plan.\n' }), options)).toBe('the harness loads an agent only with a prompt of 10 characters or more')
      expect(refusedBy(agent({ name: 'ok', body: 'You plan!!\n' }), options)).toBeUndefined()
      expect(refusedBy(agent({ name: 'x', body: '.' }))).toBeUndefined()
    })

    it('drops what the harness would skip, by name and with the reason, and stages the rest', async () => {
      const items = [agent({ name: 'planner', body: 'You plan.\n' }), agent({ name: 'reviewer', body: 'You review code.\n' })]
      const profile = { rules: [], skills: [], mcp: [], commands: [], subagents: items, hooks: [] }
      const binding = { path: '/home/agent/.qwen/agents', also: [], render: 'claude-agents' }
      const out = await plugin.render({ capability: 'subagents', items, binding, adapter: claude, options, profile }, { guestHome: '/home/agent', guestWork: '/work' })
      expect(out!.files.map((f) => f.guest)).toEqual(['/home/agent/.qwen/agents/reviewer.md'])
      expect(out!.dropped).toEqual([{ capability: 'subagents', name: 'planner', reason: 'the harness loads an agent only with a prompt of 10 characters or more' }])
    })

    it('refuses a name that is no regular expression, and a prompt length that is no count', () => {
      expect(z.safeParse(plugin.options!, options).success).toBe(true)
      expect(z.safeParse(plugin.options!, { name: '(' }).success).toBe(false)
      expect(z.safeParse(plugin.options!, { min_prompt: 0 }).success).toBe(false)
      expect(z.safeParse(plugin.options!, { min: 1 }).success).toBe(false)
    })
  })
})
