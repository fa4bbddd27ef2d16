import { readFileSync } from 'node:fs'
import path from 'node:path'
import { PLUGIN_API_VERSION, defineRenderer, type RenderContext, type RenderInput, type RenderOutput } from '@omh/plugin-api'
import { parseHooksDocuments, translateHooks } from '@omh/plugin-kit'
import * as z from 'zod/mini'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

/** Claude Code's user settings: hooks, plus what the rest of the profile needs from this file to load. */
export const CLAUDE_SETTINGS = 'claude-settings'

// Keys of Claude's settings that omh writes for other capabilities; reading
// them back is not importing anything.
const MANAGED_KEYS = new Set(['enabledMcpjsonServers'])

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

/**
 * `refusals_last`: the harness runs an event's hooks in the file's order and skips the rest once
 * one refuses the call, so each event's refusing hooks are written after the others, which then
 * run for every call as they would where all hooks run. A call is refused as before; the model
 * reads the first refusal that acts.
 */
/**
 * `events_at_root`: the file holds hooks alone, the events at its top level rather than under a
 * `hooks` key (Factory Droid's hooks.json). Read back the same way.
 */
const options = z.strictObject({ refusals_last: z._default(z.boolean(), false), events_at_root: z._default(z.boolean(), false) })
export type ClaudeSettingsOptions = z.infer<typeof options>

/**
 * The project MCP servers Claude must be told it may start. A project
 * `.mcp.json` is only listed, "pending approval", until the user settings
 * approve it; `enabledMcpjsonServers` approves exactly the servers omh put
 * there, where `enableAllProjectMcpServers` would also approve whatever a
 * repository's own `.mcp.json` declares whenever omh's is not mounted over it.
 */
function mcpApproval(input: RenderInput, context: RenderContext): string[] {
  const mcpPath = input.adapter.paths.mcp
  if (mcpPath !== path.posix.join(context.guestWork, '.mcp.json')) return []
  return input.profile.mcp.map((server) => server.name)
}

function renderClaude(input: RenderInput<ClaudeSettingsOptions | undefined>, context: RenderContext): RenderOutput {
  const selected = input.capability === 'hooks' ? input.items : []
  const hooks = input.options?.refusals_last
    ? [...selected.filter((h) => h.action.kind !== 'refuse'), ...selected.filter((h) => h.action.kind === 'refuse')]
    : selected
  const translated = translateHooks(hooks, input.binding, input.adapter.tools)
  const { document } = translated
  // Drops are reported in selection order, as the user listed the hooks.
  const dropped = [...translated.dropped].sort((a, b) => selected.findIndex((h) => h.name === a.name) - selected.findIndex((h) => h.name === b.name))
  const approve = mcpApproval(input, context)
  if (input.options?.events_at_root) {
    if (!Object.keys(document).length) return { files: [], dropped }
    return { files: [{ kind: 'file', guest: input.binding.path, content: json(document), syntax: 'json' }], dropped }
  }
  const settings = {
    ...(Object.keys(document).length ? { hooks: document } : {}),
    ...(approve.length ? { enabledMcpjsonServers: approve } : {}),
  }
  // Nothing to carry: mount nothing, so Claude keeps a settings file it can write.
  if (!Object.keys(settings).length) return { files: [], dropped }
  return { files: [{ kind: 'file', guest: input.binding.path, content: json(settings), syntax: 'json' }], dropped }
}

export default defineRenderer({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: [CLAUDE_SETTINGS],
  classes: ['hooks'],
  options,
  render: renderClaude,
  parse: (documents, context) => parseHooksDocuments(documents, context, MANAGED_KEYS, (context.options as ClaudeSettingsOptions | undefined)?.events_at_root),
})
