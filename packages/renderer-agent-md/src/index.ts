import { readFileSync } from 'node:fs'
import * as z from 'zod/mini'
import { PLUGIN_API_VERSION, TOOL_WORDS, defineRenderer, modelFor, type AdapterFacts, type Command, type DroppedItem, type RenderOutput, type Skill, type StagedFile, type Subagent, type ToolWord, type TranslatedItem } from '@omh/plugin-api'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

// YAML reads these plain words as something other than a string.
const YAML_WORDS = /^(?:true|false|yes|no|on|off|y|n|null|~)$/i
const NUMBER_LIKE = /^[-+.]?\d|^\.(?:inf|nan)$/i

/** A string as a YAML scalar: plain when YAML would read it back unchanged, double-quoted otherwise. */
export function yamlString(text: string): string {
  const plain =
    /^[^-?:,[\]{}#&*!|>'"%@`\s][^\n]*$/.test(text) &&
    !/:\s|:$|\s#|\s$|\t/.test(text) &&
    !YAML_WORDS.test(text) &&
    !NUMBER_LIKE.test(text)
  return plain ? text : JSON.stringify(text)
}

const validPattern = (pattern: string) => {
  try {
    new RegExp(pattern, 'u')
    return true
  } catch {
    return false
  }
}

/**
 * `[capabilities.subagents.options]`: the checks a harness makes as it loads an agent file and
 * skips the file when one fails, without a word. A subagent that would fail one is dropped here,
 * saying why, rather than staged to be lost.
 */
export const agentOptions = z.strictObject({
  /** A regular expression (Unicode) the whole name must match. */
  name: z.optional(z.string().check(z.refine(validPattern, { message: 'a regular expression' }))),
  /** Names the harness keeps for itself, compared without case. */
  reserved: z.optional(z.array(z.string())),
  /** The fewest characters the prompt may have without the blanks around it, as JavaScript counts them (UTF-16 units). */
  min_prompt: z.optional(z.int().check(z.positive())),
})

export type AgentOptions = z.infer<typeof agentOptions>

/** Why the harness would skip this subagent as it loads it, if it would. */
export function refusedBy(agent: Subagent, options: AgentOptions = {}): string | undefined {
  if (options.name !== undefined && !new RegExp(`^(?:${options.name})$`, 'u').test(agent.name)) {
    return `the harness loads an agent only when its name matches ${options.name}`
  }
  if (options.reserved?.some((r) => r.toLowerCase() === agent.name.toLowerCase())) return `the harness keeps the name "${agent.name}" for itself`
  if (options.min_prompt !== undefined && agent.body.trim().length < options.min_prompt) {
    return `the harness loads an agent only with a prompt of ${options.min_prompt} characters or more`
  }
  return undefined
}

/** The harness's names for an omh tool word: `Edit|Write` spells two. */
const spellings = (adapter: AdapterFacts, word: ToolWord): string[] =>
  (adapter.tools[word] ?? '').split('|').map((s) => s.trim()).filter(Boolean)

const document = (frontmatter: readonly string[], body: string) => `---\n${frontmatter.join('\n')}\n---\n\n${body}`

/**
 * Claude Code's shape: `name` (without it the file is silently skipped),
 * `description`, `tools` as a comma list of its own tool names, `model`.
 * A subagent allowed a tool word the harness cannot spell is dropped rather
 * than staged with fewer tools than it asked for.
 */
export function claudeAgent(agent: Subagent, adapter: AdapterFacts): { content: string } | { reason: string } {
  const lines = [`name: ${yamlString(agent.name)}`, `description: ${yamlString(agent.description)}`]
  if (agent.tools) {
    const missing = agent.tools.filter((w) => !spellings(adapter, w).length)
    if (missing.length) return { reason: `no \`${missing[0]}\` tool` }
    lines.push(agent.tools.length ? `tools: ${agent.tools.flatMap((w) => spellings(adapter, w)).join(', ')}` : 'tools: []')
  }
  const model = modelFor(agent, adapter.name)
  if (model) lines.push(`model: ${yamlString(model)}`)
  return { content: document(lines, agent.body) }
}

/**
 * OpenCode's shape: the file name is the agent's name, `mode: subagent`, and
 * tool limits as a map of its tool names to `false` for every tool word not
 * allowed (OpenCode turns that into permissions). A word it cannot spell
 * cannot be withheld, so such a subagent is dropped.
 */
export function opencodeAgent(agent: Subagent, adapter: AdapterFacts): { content: string } | { reason: string } {
  const lines = [`description: ${yamlString(agent.description)}`, 'mode: subagent']
  const model = modelFor(agent, adapter.name)
  if (model) lines.push(`model: ${yamlString(model)}`)
  if (agent.tools) {
    const withheld = TOOL_WORDS.filter((w) => !agent.tools!.includes(w))
    const unspelled = withheld.filter((w) => !spellings(adapter, w).length)
    if (unspelled.length) return { reason: `no way to withhold the \`${unspelled[0]}\` tool` }
    const denied = withheld.flatMap((w) => spellings(adapter, w))
    if (denied.length) lines.push('tools:', ...denied.map((t) => `  ${yamlString(t)}: false`))
  }
  return { content: document(lines, agent.body) }
}

/** Agent Skills names: lowercase words joined by single dashes, at most 64 characters. */
const SKILL_NAME = /^(?=.{1,64}$)[a-z0-9]+(?:-[a-z0-9]+)*$/

/**
 * A command as an Agent Skill, for a harness that has skills and no commands:
 * `<name>/SKILL.md` with the `name` and `description` a skill must have and
 * the command's text as its instructions. The harness offers it by name, as
 * it would a command. A command named like a skill of the profile, or not
 * nameable as a skill, is dropped: either would be a different skill.
 */
export function commandSkill(command: Command, skills: readonly Skill[]): { content: string } | { reason: string } {
  if (!SKILL_NAME.test(command.name)) return { reason: 'a skill name is lowercase letters and digits joined by dashes' }
  if (skills.some((s) => s.name === command.name)) return { reason: 'a skill has the same name' }
  const description = command.description?.trim() || `The /${command.name} command.`
  const lines = [`name: ${command.name}`, `description: ${yamlString(description)}`]
  return { content: document(lines, command.body.replace(/^\n+/, '')) }
}

export default defineRenderer<AgentOptions | undefined>({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: ['claude-agents', 'opencode-agents', 'skill-md'],
  classes: ['subagents', 'commands'],
  options: agentOptions,
  render(input): RenderOutput {
    // The class list is shared by the package's formats; each format renders only its own class.
    if ((input.binding.render === 'skill-md') !== (input.capability === 'commands')) {
      return { files: [], dropped: input.items.map((i) => ({ capability: input.capability, name: i.name, reason: `${input.binding.render} does not render ${input.capability}` })) }
    }
    if (input.capability === 'commands') {
      const files: StagedFile[] = []
      const dropped: DroppedItem[] = []
      const translated: TranslatedItem[] = []
      for (const command of input.items) {
        const out = commandSkill(command, input.profile.skills)
        if ('reason' in out) dropped.push({ capability: 'commands', name: command.name, reason: out.reason })
        else {
          files.push({ kind: 'file', guest: `${input.binding.path}/${command.name}/SKILL.md`, content: out.content, syntax: 'markdown' })
          translated.push({ capability: 'commands', name: command.name, to: 'a skill' })
        }
      }
      return { files, dropped, translated }
    }
    if (input.capability !== 'subagents') return { files: [], dropped: [] }
    const shape = input.binding.render === 'opencode-agents' ? opencodeAgent : claudeAgent
    const files: StagedFile[] = []
    const dropped: DroppedItem[] = []
    for (const agent of input.items) {
      const refused = refusedBy(agent, input.options)
      const out = refused ? { reason: refused } : shape(agent, input.adapter)
      if ('reason' in out) dropped.push({ capability: 'subagents', name: agent.name, reason: out.reason })
      else files.push({ kind: 'file', guest: `${input.binding.path}/${agent.name}.md`, content: out.content, syntax: 'markdown' })
    }
    return { files, dropped }
  },
})
