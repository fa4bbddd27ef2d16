import { readFileSync } from 'node:fs'
import path from 'node:path'
import { PLUGIN_API_VERSION, defineRenderer, type ParseResult, type RenderContext, type RenderInput, type RenderOutput, type StagedFile } from '@omh/plugin-api'
import { readJson } from '@omh/plugin-kit'
import { approvalDocument } from './codex-hook-approval.js'
import { isRecord, readHooks, translate } from './document.js'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

/** Claude Code's user settings: hooks, plus what the rest of the profile needs from this file to load. */
export const CLAUDE_SETTINGS = 'claude-settings'
/** Codex's hooks.json, plus the config.toml records that let Codex run them. */
export const CODEX_HOOKS = 'codex-hooks'

// Keys of Claude's settings that omh writes for other capabilities; reading
// them back is not importing anything.
const MANAGED_KEYS = new Set(['hooks', 'enabledMcpjsonServers'])

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

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

function renderClaude(input: RenderInput, context: RenderContext): RenderOutput {
  const hooks = input.capability === 'hooks' ? input.items : []
  const { document, dropped } = translate(hooks, input.binding, input.adapter.tools)
  const approve = mcpApproval(input, context)
  const settings = {
    ...(Object.keys(document).length ? { hooks: document } : {}),
    ...(approve.length ? { enabledMcpjsonServers: approve } : {}),
  }
  // Nothing to carry: mount nothing, so Claude keeps a settings file it can write.
  if (!Object.keys(settings).length) return { files: [], dropped }
  return { files: [{ kind: 'file', guest: input.binding.path, content: json(settings), syntax: 'json' }], dropped }
}

function renderCodex(input: RenderInput): RenderOutput {
  const hooks = input.capability === 'hooks' ? input.items : []
  const { document, placed, dropped } = translate(hooks, input.binding, input.adapter.tools)
  if (!placed.length) return { files: [], dropped }
  const file = input.binding.path
  const files: StagedFile[] = [
    { kind: 'file', guest: file, content: json({ hooks: document }), syntax: 'json' },
    // Codex reads its hooks.json beside config.toml, in CODEX_HOME, so the trust records go there too.
    { kind: 'file', guest: path.posix.join(path.posix.dirname(file), 'config.toml'), content: approvalDocument(file, placed), syntax: 'toml' },
  ]
  return { files, dropped }
}

export default defineRenderer({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: [CLAUDE_SETTINGS, CODEX_HOOKS],
  classes: ['hooks'],
  render(input, context): RenderOutput {
    return input.binding.render === CODEX_HOOKS ? renderCodex(input) : renderClaude(input, context)
  },
  parse(documents, context): ParseResult {
    const hooks = []
    const left = []
    for (const doc of documents) {
      const parsed = readJson(doc.content, doc.file)
      if (!parsed.ok) return { ok: false, problems: [parsed.problem] }
      const data = parsed.doc.data
      if (!isRecord(data)) return { ok: false, problems: [{ file: doc.file, message: 'a settings document is one JSON object' }] }
      const read = readHooks(data['hooks'], context.binding, context.adapter.tools, doc.file)
      hooks.push(...read.hooks)
      left.push(...read.left.map((l) => ({ name: `hooks.${l.name}`, reason: l.reason })))
      for (const key of Object.keys(data)) {
        if (!MANAGED_KEYS.has(key)) left.push({ name: key, reason: 'not a hook; omh leaves the rest of this file to the harness' })
      }
    }
    return { ok: true, items: { hooks }, left }
  },
})
