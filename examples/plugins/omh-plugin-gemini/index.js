// Gemini CLI's two formats omh has no renderer for: `~/.gemini/settings.json`
// (MCP servers under `mcpServers`) and custom commands as `.gemini/commands/<name>.toml`.
// Rules (GEMINI.md) and skills (~/.gemini/skills) use omh's own `concat` and `dir`.
import { PLUGIN_API_VERSION, defineRenderer, serverValues } from '@omh/plugin-api'
import { tomlString } from '@omh/plugin-kit'

const MARKER = '<!-- omh:'

/** Gemini expands `$VAR` and `${VAR}` in every string of settings.json. */
const EXPANDED = /\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)/

/** Syntax Gemini acts on in a command's prompt: shell runs (`!{…}`) and file reads (`@{…}`). */
const ACTIVE = /[!@]\{/

function settings(input) {
  const dropped = []
  const refused = []
  const mcpServers = {}
  for (const server of input.items) {
    for (const [field, value] of serverValues(server)) {
      if (EXPANDED.test(value)) refused.push({ capability: 'mcp', name: server.name, field, value, reason: 'Gemini CLI expands `$VAR` in settings.json' })
    }
    if (server.transport === 'stdio') {
      mcpServers[server.name] = {
        command: server.command,
        args: [...server.args],
        ...(Object.keys(server.env).length ? { env: { ...server.env } } : {}),
        ...(server.cwd !== undefined ? { cwd: server.cwd } : {}),
      }
    } else {
      // `httpUrl` is streamable HTTP; `url` is SSE.
      mcpServers[server.name] = {
        [server.transport === 'http' ? 'httpUrl' : 'url']: server.url,
        ...(Object.keys(server.headers).length ? { headers: { ...server.headers } } : {}),
      }
    }
  }
  const document = {
    // Gemini disables every MCP server in a folder it does not trust, and asks
    // interactively; omh's own trust and the sandbox decide what runs here.
    security: { folderTrust: { enabled: false } },
    // The sandbox's network reaches only its allowlist.
    privacy: { usageStatisticsEnabled: false },
    mcpServers,
  }
  return { files: [{ kind: 'file', guest: input.binding.path, content: `${JSON.stringify(document, null, 2)}\n` }], dropped, refused }
}

function commands(input) {
  const files = []
  const dropped = []
  for (const command of input.items) {
    if (ACTIVE.test(command.body) || command.body.includes('{{args}}')) {
      dropped.push({ capability: 'commands', name: command.name, reason: 'Gemini CLI runs `!{…}` and reads `@{…}` in a command, and omh writes neither' })
      continue
    }
    // The marker lets `omh doctor` find the expanded command in what Gemini sends the model.
    const prompt = `${MARKER} ${command.name} -->\n${command.body.trim().replaceAll('$ARGUMENTS', '{{args}}')}\n`
    const lines = [...(command.description ? [`description = ${tomlString(command.description)}`] : []), `prompt = ${tomlString(prompt)}`]
    files.push({ kind: 'file', guest: `${input.binding.path}/${command.name}.toml`, content: `${lines.join('\n')}\n` })
  }
  return { files, dropped }
}

export default defineRenderer({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name: 'omh-plugin-gemini', version: '0.1.0' },
  formats: ['gemini-settings', 'gemini-commands'],
  classes: ['mcp', 'commands'],
  render(input) {
    if (input.binding.render === 'gemini-settings' && input.capability === 'mcp') return settings(input)
    if (input.binding.render === 'gemini-commands' && input.capability === 'commands') return commands(input)
    return undefined
  },
})
