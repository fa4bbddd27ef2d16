import { readFileSync } from 'node:fs'
import { CLASS_NOUN, PLUGIN_API_VERSION, defineRenderer } from '@omh/plugin-api'
import { renderExtension } from './extension.js'
import { parseMcp, renderMcp } from './mcp.js'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

/**
 * pi's own formats: hooks as one generated extension module (pi has no command hooks, only
 * extensions that subscribe to its events), and the MCP servers of `~/.pi/agent/mcp.json`. Rules,
 * skills and commands (prompt templates) use omh's `concat` and `dir`.
 */
export default defineRenderer({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: ['pi-extension', 'pi-mcp'],
  classes: ['hooks', 'mcp'],
  render(input) {
    const { binding, adapter } = input
    if (binding.render === 'pi-extension' && input.capability === 'hooks') return renderExtension(input.items, binding, adapter.tools)
    if (binding.render === 'pi-mcp' && input.capability === 'mcp') return renderMcp(input.items, binding.path)
    // Declined rather than rendered empty: a format bound to a class it does not
    // write would otherwise lose that class's items without a word.
    return undefined
  },
  parse(documents, context) {
    if (context.binding.render !== 'pi-mcp' || context.capability !== 'mcp') {
      const file = documents[0]?.file
      return { ok: false, problems: [{ ...(file ? { file } : {}), message: `omh reads only MCP servers back from pi-mcp, not ${CLASS_NOUN[context.capability][1]} from ${context.binding.render}` }] }
    }
    return parseMcp(documents)
  },
})
