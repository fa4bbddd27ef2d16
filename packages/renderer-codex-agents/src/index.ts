import { readFileSync } from 'node:fs'
import { PLUGIN_API_VERSION, TOOL_WORDS, defineRenderer, modelFor, type DroppedItem, type RenderOutput, type StagedFile, type Subagent, type TranslatedItem } from '@omh/plugin-api'
import { stringifyToml } from '@omh/plugin-kit'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

/** Tool words that only look: an agent limited to these changes nothing. */
const LOOKING = ['read', 'search']

/**
 * One Codex agent file. Codex skips a file silently when one of `name`,
 * `description` or `developer_instructions` is missing or when it holds a
 * key it does not know (such as `tools`), so only valid keys are written.
 * Codex cannot limit an agent's tools, only its sandbox: a subagent allowed
 * only to read and search becomes an agent in a read-only sandbox (it may
 * still run commands, but change nothing); one with any other limit is
 * dropped.
 */
export function codexAgent(agent: Subagent, harness: string): { content: string; readOnly: boolean } | { reason: string } {
  const limited = agent.tools && !TOOL_WORDS.every((w) => agent.tools!.includes(w))
  const readOnly = Boolean(limited && agent.tools!.length && agent.tools!.every((w) => LOOKING.includes(w)))
  if (limited && !readOnly) {
    return { reason: `no way to limit a subagent’s tools to ${agent.tools!.join(', ') || 'none'} (only to reading, as a read-only sandbox)` }
  }
  const model = modelFor(agent, harness)
  return {
    readOnly,
    content: stringifyToml({
      name: agent.name,
      description: agent.description,
      ...(model ? { model } : {}),
      ...(readOnly ? { sandbox_mode: 'read-only' } : {}),
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
    const translated: TranslatedItem[] = []
    for (const agent of input.items) {
      const out = codexAgent(agent, input.adapter.name)
      if ('reason' in out) dropped.push({ capability: 'subagents', name: agent.name, reason: out.reason })
      else {
        files.push({ kind: 'file', guest: `${input.binding.path}/${agent.name}.toml`, content: out.content, syntax: 'toml' })
        if (out.readOnly) translated.push({ capability: 'subagents', name: agent.name, to: 'an agent with sandbox_mode = "read-only"' })
      }
    }
    return { files, dropped, translated }
  },
})
