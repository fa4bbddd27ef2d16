import { readFileSync } from 'node:fs'
import path from 'node:path'
import { PLUGIN_API_VERSION, defineRenderer, type RenderOutput } from '@omh/plugin-api'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

/**
 * One entry per selected item, named as it is named in the catalogue (a skill
 * folder, `<name>.md`), pointing at the catalogue itself: nothing is copied,
 * so an edit on the host is what the harness reads next.
 */
export default defineRenderer({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: ['dir'],
  classes: ['skills', 'commands', 'subagents'],
  render(input): RenderOutput {
    if (input.capability !== 'skills' && input.capability !== 'commands' && input.capability !== 'subagents') {
      return { files: [], dropped: [] }
    }
    if (!input.items.length) return { files: [], dropped: [] }
    const entries = input.items.map((item) => ({ name: path.basename(item.source), source: item.source }))
    return { files: [{ kind: 'tree', guest: input.binding.path, entries }], dropped: [] }
  },
})
