import { createRequire } from 'node:module'
import { PLUGIN_API_VERSION, TOOL_WORDS, defineRenderer, modelFor, type AdapterFacts, type DroppedItem, type RenderOutput, type StagedFile, type Subagent, type ToolWord } from '@omh/plugin-api'

const { name, version } = createRequire(import.meta.url)('../package.json') as { name: string; version: string }

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

export default defineRenderer({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: ['claude-agents', 'opencode-agents'],
  classes: ['subagents'],
  render(input): RenderOutput {
    if (input.capability !== 'subagents') return { files: [], dropped: [] }
    const shape = input.binding.render === 'opencode-agents' ? opencodeAgent : claudeAgent
    const files: StagedFile[] = []
    const dropped: DroppedItem[] = []
    for (const agent of input.items) {
      const out = shape(agent, input.adapter)
      if ('reason' in out) dropped.push({ capability: 'subagents', name: agent.name, reason: out.reason })
      else files.push({ kind: 'file', guest: `${input.binding.path}/${agent.name}.md`, content: out.content, syntax: 'markdown' })
    }
    return { files, dropped }
  },
})
