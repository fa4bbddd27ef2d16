import type { ToolWord } from '@omh/plugin-api'

export type Tools = Readonly<Partial<Record<ToolWord, string>>>

/** The adapter's spelling of a tool word as Gemini's tool names: `write_file|replace` is two. */
export const toolNames = (tools: Tools, word: ToolWord): string[] =>
  (tools[word] ?? '')
    .split('|')
    .map((s) => s.trim())
    .filter(Boolean)
