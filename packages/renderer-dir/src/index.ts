import { readFileSync } from 'node:fs'
import path from 'node:path'
import { PLUGIN_API_VERSION, defineRenderer, type RenderOutput } from '@omh/plugin-api'
import * as z from 'zod/mini'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

/** `[capabilities.<class>.options]`: how each entry reaches the harness. */
export const dirOptions = z.strictObject({
  /**
   * Mount each entry at its name instead of linking it to the catalogue, for a harness that skips a
   * symbolic link where it looks for a folder or a file. It still reads the catalogue itself, but an
   * entry added on the host shows only when the session's container is made again.
   */
  mount: z.optional(z.boolean()),
})

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
  options: dirOptions,
  render(input): RenderOutput {
    if (input.capability !== 'skills' && input.capability !== 'commands' && input.capability !== 'subagents') {
      return { files: [], dropped: [] }
    }
    if (!input.items.length) return { files: [], dropped: [] }
    const entries = input.items.map((item) => ({ name: path.basename(item.source), source: item.source }))
    const mounted = (input.options as z.infer<typeof dirOptions> | undefined)?.mount === true
    return { files: [{ kind: 'tree', guest: input.binding.path, entries, ...(mounted ? { mounted } : {}) }], dropped: [] }
  },
})
