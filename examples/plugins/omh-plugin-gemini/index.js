// Gemini CLI's formats omh has no renderer for: `~/.gemini/settings.json` (MCP servers under
// `mcpServers`, hooks under `hooks`), custom commands as `~/.gemini/commands/<name>.toml`, and
// subagents as `~/.gemini/agents/<name>.md`. Rules (GEMINI.md) and skills (~/.gemini/skills) use
// omh's own `concat` and `dir`.
import { MOMENTS, PLUGIN_API_VERSION, defineRenderer, modelFor, serverValues } from '@omh/plugin-api'
import { FIELD_VARIABLE, doubleQuoted, fill, singleQuoted, tomlString, unexpressible } from '@omh/plugin-kit'

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
  return { files: [{ kind: 'file', guest: input.binding.path, content: json(document), syntax: 'json' }], dropped, refused }
}

const json = (value) => `${JSON.stringify(value, null, 2)}\n`

/** The adapter's spelling of a tool word as Gemini's tool names: `write_file|replace` is two. */
const names = (tools, word) => (tools[word] ?? '').split('|').map((s) => s.trim()).filter(Boolean)

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|]/g

/**
 * Gemini tests a tool matcher as an unanchored regular expression (`replace` would also match an
 * MCP tool `mcp_x_replace_all`), so the names are escaped and anchored as one exact alternation.
 */
const matcher = (hook, tools) => `^(?:${hook.tools.flatMap((word) => names(tools, word)).map((n) => n.replace(REGEX_SPECIAL, '\\$&')).join('|')})$`

/**
 * One hook as the shell script Gemini runs with the event's JSON payload on stdin: its name,
 * the trace line `omh doctor` reads, the payload fields the hook mentions, `when`, then the action.
 * Gemini reads a hook's stdout as JSON instructions and, when stdout is empty, tries its stderr
 * instead; so `when` and `run` send their output to stderr and every way out that is not the
 * adapter's template prints `{}`, which instructs nothing. A failing `run` exits 1, which Gemini
 * reports as a warning and otherwise ignores.
 */
function hookScript(hook, binding, event) {
  const lines = [`# omh: ${hook.name}`, `[ -z "$OMH_HOOK_TRACE" ] || printf '%s\\n' ${singleQuoted(hook.name)} >> "$OMH_HOOK_TRACE"`]
  if (hook.fields.length) {
    lines.push('p=$(cat)')
    for (const field of hook.fields) {
      lines.push(`export ${FIELD_VARIABLE[field]}="$(printf '%s' "$p" | jq -r ${singleQuoted(`(${binding.fields[field]}) // empty`)} 2>/dev/null)"`)
    }
  }
  // OMH_HOOK_WHEN_MET (set by omh doctor --turn alone) goes on as if `when` passed: it can only make a hook act.
  if (hook.when !== undefined) lines.push(`[ -n "$OMH_HOOK_WHEN_MET" ] || sh -c -- ${singleQuoted(hook.when)} </dev/null >&2 || { echo '{}'; exit 0; }`)
  const { action } = hook
  if (action.kind === 'run') lines.push(`sh -c -- ${singleQuoted(action.command)} </dev/null >&2 || { echo '{}'; exit 1; }`, `echo '{}'`)
  else lines.push(fill(binding[action.kind].template, doubleQuoted(action.text), event))
  return `${lines.join('\n')}\n`
}

/**
 * `hooks` in settings.json: per event one matcher group per hook, in omh's moment order. Gemini
 * substitutes `$NAME`, `${NAME}` and `${NAME:-default}` in every string of settings.json from its
 * own environment when it loads the file, with no way to escape a dollar sign, so a script written
 * there would lose its variables before it ran. Each hook's script is a file of its own beside the
 * settings (`omh-hooks/<name>.sh`), and the settings name it with no `$` at all.
 */
function hooks(input) {
  const tools = input.adapter.tools
  const folder = `${input.binding.path.slice(0, input.binding.path.lastIndexOf('/'))}/omh-hooks`
  const document = {}
  const scripts = []
  const dropped = []
  for (const hook of MOMENTS.flatMap((moment) => input.items.filter((h) => h.on === moment))) {
    const reason = unexpressible(hook, input.binding, tools)
    if (reason) {
      dropped.push({ capability: 'hooks', name: hook.name, reason })
      continue
    }
    const event = input.binding.events[hook.on]
    const script = `${folder}/${hook.name}.sh`
    scripts.push({ kind: 'file', guest: script, content: hookScript(hook, input.binding, event), syntax: 'sh' })
    ;(document[event] ??= []).push({
      ...(hook.tools ? { matcher: matcher(hook, tools) } : {}),
      hooks: [{ name: hook.name, type: 'command', command: `sh ${singleQuoted(script)}` }],
    })
  }
  dropped.sort((a, b) => input.items.findIndex((h) => h.name === a.name) - input.items.findIndex((h) => h.name === b.name))
  // The MCP binding writes the rest of the same settings.json; omh joins the two JSON objects
  // (their top-level keys are disjoint). With no hook, this binding adds nothing.
  if (!scripts.length) return { files: [], dropped }
  return { files: [{ kind: 'file', guest: input.binding.path, content: json({ hooks: document }), syntax: 'json' }, ...scripts], dropped }
}

/** Gemini's agent names: its loader refuses any other (`Name must be a valid slug`). */
const AGENT_NAME = /^[a-z0-9_-]+$/

/**
 * A subagent as `~/.gemini/agents/<name>.md`: YAML frontmatter (`name`, `description`, `tools`
 * as Gemini's tool names, `model`) and the system prompt as the body. Gemini validates the
 * frontmatter strictly and skips a file that fails. Values are written as JSON strings, which
 * YAML reads as the same strings. A subagent allowed a tool word Gemini cannot spell is dropped
 * rather than staged with fewer tools than it asked for; absent `tools` inherits every tool.
 */
function agents(input) {
  const files = []
  const dropped = []
  for (const agent of input.items) {
    const drop = (reason) => dropped.push({ capability: 'subagents', name: agent.name, reason })
    if (!AGENT_NAME.test(agent.name)) {
      drop('Gemini CLI names an agent with lowercase letters, digits, `-` and `_` only')
      continue
    }
    if (!agent.description.trim()) {
      drop('Gemini CLI skips an agent without a description')
      continue
    }
    const lines = [`name: ${agent.name}`, `description: ${JSON.stringify(agent.description)}`]
    if (agent.tools) {
      const missing = agent.tools.find((word) => !names(input.adapter.tools, word).length)
      if (missing) {
        drop(`no \`${missing}\` tool`)
        continue
      }
      lines.push(agent.tools.length ? 'tools:' : 'tools: []', ...agent.tools.flatMap((word) => names(input.adapter.tools, word)).map((n) => `  - ${JSON.stringify(n)}`))
    }
    const model = modelFor(agent, input.adapter.name)
    if (model) lines.push(`model: ${JSON.stringify(model)}`)
    files.push({ kind: 'file', guest: `${input.binding.path}/${agent.name}.md`, content: `---\n${lines.join('\n')}\n---\n\n${agent.body}`, syntax: 'markdown' })
  }
  return { files, dropped }
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
  formats: ['gemini-settings', 'gemini-commands', 'gemini-agents'],
  classes: ['mcp', 'hooks', 'commands', 'subagents'],
  render(input) {
    if (input.binding.render === 'gemini-settings' && input.capability === 'mcp') return settings(input)
    if (input.binding.render === 'gemini-settings' && input.capability === 'hooks') return hooks(input)
    if (input.binding.render === 'gemini-commands' && input.capability === 'commands') return commands(input)
    if (input.binding.render === 'gemini-agents' && input.capability === 'subagents') return agents(input)
    return undefined
  },
})
