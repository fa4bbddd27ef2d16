import { readFileSync } from 'node:fs'
import { CLASS_NOUN, PLUGIN_API_VERSION, defineRenderer } from '@omh/plugin-api'
import { renderAgents } from './agents.js'
import { renderCommands } from './commands.js'
import { renderHooks } from './hooks.js'
import { parseServers, renderSettings } from './mcp-servers.js'
import { geminiOptions, type GeminiOptions } from './options.js'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

/**
 * Gemini CLI's own formats: `~/.gemini/settings.json` (MCP servers under
 * `mcpServers`, hooks under `hooks`), commands as `<name>.toml` and
 * subagents as `<name>.md`. Rules (GEMINI.md) and skills use omh's `concat`
 * and `dir`.
 */
export default defineRenderer<GeminiOptions | undefined>({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: ['gemini-settings', 'gemini-commands', 'gemini-agents'],
  classes: ['mcp', 'hooks', 'commands', 'subagents'],
  options: geminiOptions,
  render(input) {
    const { binding, adapter } = input
    if (binding.render === 'gemini-settings' && input.capability === 'mcp') return renderSettings(input.items, binding.path, adapter.name, input.options)
    if (binding.render === 'gemini-settings' && input.capability === 'hooks') return renderHooks(input.items, binding, adapter.tools)
    if (binding.render === 'gemini-commands' && input.capability === 'commands') return renderCommands(input.items, binding.path, adapter.name)
    if (binding.render === 'gemini-agents' && input.capability === 'subagents') return renderAgents(input.items, binding.path, adapter.name, adapter.tools)
    // Declined rather than rendered empty: a format bound to a class it does not
    // write would otherwise lose that class's items without a word.
    return undefined
  },
  parse(documents, context) {
    if (context.binding.render !== 'gemini-settings' || context.capability !== 'mcp') {
      const file = documents[0]?.file
      return { ok: false, problems: [{ ...(file ? { file } : {}), message: `omh reads only MCP servers back from gemini-settings, not ${CLASS_NOUN[context.capability][1]} from ${context.binding.render}` }] }
    }
    return parseServers(documents, context.env, context.options)
  },
})
