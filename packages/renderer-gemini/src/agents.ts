import { modelFor, type DroppedItem, type RenderOutput, type StagedFile, type Subagent } from '@omh/plugin-api'
import { toolNames, type Tools } from './tool-names.js'

/** Gemini's agent names: its loader refuses any other (`Name must be a valid slug`). */
const AGENT_NAME = /^[a-z0-9_-]+$/

/**
 * Subagents as `<path>/<name>.md`: YAML frontmatter (`name`, `description`, `tools` as Gemini's
 * tool names, `model`) and the system prompt as the body. Gemini validates the frontmatter
 * strictly and skips a file that fails, so what it would skip is dropped here, saying why.
 * Values are written as JSON strings, which YAML reads as the same strings. A subagent allowed a
 * tool word Gemini cannot spell is dropped rather than staged with fewer tools than it asked
 * for; absent `tools` inherits every tool.
 */
export function renderAgents(agents: readonly Subagent[], path: string, harness: string, tools: Tools): RenderOutput {
  const files: StagedFile[] = []
  const dropped: DroppedItem[] = []
  for (const agent of agents) {
    const drop = (reason: string) => dropped.push({ capability: 'subagents', name: agent.name, reason })
    if (!AGENT_NAME.test(agent.name)) {
      drop(`${harness} names an agent with lowercase letters, digits, \`-\` and \`_\` only`)
      continue
    }
    if (!agent.description.trim()) {
      drop(`${harness} skips an agent without a description`)
      continue
    }
    const lines = [`name: ${JSON.stringify(agent.name)}`, `description: ${JSON.stringify(agent.description)}`]
    if (agent.tools) {
      const missing = agent.tools.find((word) => !toolNames(tools, word).length)
      if (missing) {
        drop(`no \`${missing}\` tool`)
        continue
      }
      const names = agent.tools.flatMap((word) => toolNames(tools, word))
      lines.push(agent.tools.length ? 'tools:' : 'tools: []', ...names.map((n) => `  - ${JSON.stringify(n)}`))
    }
    const model = modelFor(agent, harness)
    if (model) lines.push(`model: ${JSON.stringify(model)}`)
    files.push({ kind: 'file', guest: `${path}/${agent.name}.md`, content: `---\n${lines.join('\n')}\n---\n\n${agent.body}`, syntax: 'markdown' })
  }
  return { files, dropped }
}
