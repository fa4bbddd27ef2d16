import { createRequire } from 'node:module'
import { PLUGIN_API_VERSION, TOOL_WORDS, defineRenderer, modelFor, type DroppedItem, type RenderOutput, type StagedFile, type Subagent } from '@omh/plugin-api'
import { stringifyToml } from '@omh/plugin-kit'

const { name, version } = createRequire(import.meta.url)('../package.json') as { name: string; version: string }

/**
 * One Codex agent file. Codex skips a file silently when one of `name`,
 * `description` or `developer_instructions` is missing or when it holds a
 * key it does not know (such as `tools`), so only valid keys are written,
 * and a subagent limited to some tools is dropped: Codex has no way to say
 * it.
 */
export function codexAgent(agent: Subagent, harness: string): { content: string } | { reason: string } {
  if (agent.tools && !TOOL_WORDS.every((w) => agent.tools!.includes(w))) return { reason: 'no way to limit a subagent’s tools' }
  const model = modelFor(agent, harness)
  return {
    content: stringifyToml({
      name: agent.name,
      description: agent.description,
      ...(model ? { model } : {}),
      developer_instructions: agent.body,
    }),
  }
}

export default defineRenderer({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: ['codex-agents'],
  classes: ['subagents'],
  render(input): RenderOutput {
    if (input.capability !== 'subagents') return { files: [], dropped: [] }
    const files: StagedFile[] = []
    const dropped: DroppedItem[] = []
    for (const agent of input.items) {
      const out = codexAgent(agent, input.adapter.name)
      if ('reason' in out) dropped.push({ capability: 'subagents', name: agent.name, reason: out.reason })
      else files.push({ kind: 'file', guest: `${input.binding.path}/${agent.name}.toml`, content: out.content, syntax: 'toml' })
    }
    return { files, dropped }
  },
})
