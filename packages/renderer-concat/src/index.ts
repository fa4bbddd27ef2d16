import { readFileSync } from 'node:fs'
import { PLUGIN_API_VERSION, defineRenderer, type RenderOutput, type RuleSection } from '@omh/plugin-api'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

const MARKER = '<!-- omh:'

/** The marker line heading each section, naming where its text came from. */
export const marker = (origin: string): string => `${MARKER} ${origin} -->`

// A marker typed inside a section would make the document lie about where its
// text came from; a zero-width space after `<!--` keeps it visible but inert.
const neutralise = (text: string) => text.replaceAll(MARKER, '<!--\u200B omh:')

export function compose(sections: readonly RuleSection[]): string {
  return sections
    .filter((s) => s.text.trim())
    .map((s) => `${marker(s.origin)}\n${neutralise(s.text).trim()}\n`).join('\n')
}

export default defineRenderer({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: ['concat'],
  classes: ['rules'],
  render(input): RenderOutput {
    if (input.capability !== 'rules') return { files: [], dropped: [] }
    const content = compose(input.items)
    if (!content) return { files: [], dropped: [] }
    return {
      files: [input.binding.path, ...input.binding.also].map((guest) => ({
        kind: 'file' as const,
        guest,
        content,
        syntax: 'markdown',
      })),
      dropped: [],
    }
  },
})
