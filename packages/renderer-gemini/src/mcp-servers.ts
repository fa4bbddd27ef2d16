import { serverValues, type McpServer, type ParseDocument, type ParseResult, type RefusedValue, type RenderOutput } from '@omh/plugin-api'
import { jsonSyntax, readServers, referSecrets, type SyntaxRead } from '@omh/plugin-kit'
import type { GeminiOptions } from './options.js'

/** Gemini expands `$VAR` and `${VAR}` in every string of settings.json. */
const EXPANDED = /\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)/

/** A variable name `<secret NAME>` can carry. */
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

type Entry = Record<string, unknown>

/**
 * One server as Gemini's `mcpServers` entry: `url` with the `type` that names
 * its transport (Gemini reads a bare `url` as streamable HTTP, and calls
 * `httpUrl` deprecated), or, with `remote = "httpUrl"`, the key that names it
 * (`httpUrl` for streamable HTTP, a bare `url` for SSE). A `<secret NAME>` becomes
 * `${NAME}`, which Gemini fills from its environment as it loads the file, where omh
 * puts the secret (recorded in `env`).
 */
function entryOf(server: McpServer, env: Record<string, string>, remote: GeminiOptions['remote']): Entry {
  const values = (record: Readonly<Record<string, string>>) =>
    Object.fromEntries(Object.entries(record).map(([k, v]) => [k, referSecrets(v, (n) => `\${${n}}`, env)]))
  if (server.transport === 'stdio') {
    return {
      command: server.command,
      args: [...server.args],
      ...(Object.keys(server.env).length ? { env: values(server.env) } : {}),
      ...(server.cwd !== undefined ? { cwd: server.cwd } : {}),
    }
  }
  const headers = Object.keys(server.headers).length ? { headers: values(server.headers) } : {}
  if (remote === 'httpUrl') return { [server.transport === 'http' ? 'httpUrl' : 'url']: server.url, ...headers }
  return { url: server.url, type: server.transport, ...headers }
}

/**
 * The user settings that carry the MCP servers. Written even with no server:
 * the trust prompt it turns off would stop every launch in /work.
 */
export function renderSettings(servers: readonly McpServer[], path: string, harness: string, options: GeminiOptions = {}): RenderOutput {
  const refused: RefusedValue[] = []
  const env: Record<string, string> = {}
  const mcpServers: Record<string, Entry> = {}
  for (const server of servers) {
    for (const [field, value] of serverValues(server)) {
      if (EXPANDED.test(value)) refused.push({ capability: 'mcp', name: server.name, field, value, reason: `${harness} expands \`$VAR\` in settings.json` })
    }
    mcpServers[server.name] = entryOf(server, env, options.remote)
  }
  const document = {
    ...options.settings,
    // Gemini disables every MCP server in a folder it does not trust, and asks
    // interactively; omh's own trust and the sandbox decide what runs here.
    security: { folderTrust: { enabled: false } },
    // The sandbox's network reaches only its allowlist.
    privacy: { usageStatisticsEnabled: false },
    mcpServers,
  }
  return {
    files: [{ kind: 'file', guest: path, content: json(document), syntax: 'json' }],
    dropped: [],
    refused,
    ...(Object.keys(env).length ? { env } : {}),
  }
}

/**
 * Comments blanked to spaces, line breaks kept: Gemini reads settings.json
 * with comments allowed, and blanking them keeps every line and column the
 * JSON reader reports true to the file.
 */
const uncommented = (text: string): string =>
  text.replace(/"(?:[^"\\\n]|\\.)*"|\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)/g, (m) => (m.startsWith('"') ? m : m.replace(/[^\n]/g, ' ')))

const settingsSyntax = (content: string, file: string): SyntaxRead => jsonSyntax(uncommented(content), file)

const STDIO_KEYS = ['command', 'args', 'env', 'cwd']

/**
 * Reads `mcpServers` of Gemini's settings back. The transport is the one
 * Gemini picks: `httpUrl` first, then `url` (as its `type` says, else
 * streamable HTTP; with `remote = "httpUrl"`, SSE whatever `type` says), then `command`. In `env` and `headers`, `$VAR` and `${VAR}` read back as
 * `<secret VAR>`, the inverse of rendering; elsewhere they are resolved
 * against the host environment, as Gemini would at launch, and a server
 * naming a variable that is not set is left out, with the reason.
 */
export function parseServers(documents: readonly ParseDocument[], env: Readonly<Record<string, string | undefined>>, options: GeminiOptions = {}): ParseResult {
  return readServers(documents, settingsSyntax, {
    key: 'mcpServers',
    server({ name, raw, at }, read) {
      const unset = new Set<string>()
      const value = (v: unknown, p: (string | number)[], secrets = false): string | undefined => {
        if (typeof v !== 'string') return void read.problem(p, 'expected a string')
        return v.replace(new RegExp(EXPANDED, 'g'), (whole, reference: string) => {
          const variable = reference.startsWith('{') ? reference.slice(1, -1) : reference
          // In env and headers a variable is a secret Gemini takes from its environment:
          // named, never copied, so the import writes no value into mcp.json.
          if (secrets && VARIABLE.test(variable)) return `<secret ${variable}>`
          const set = env[variable]
          if (set !== undefined) return set
          unset.add(whole)
          return whole
        })
      }
      let server: McpServer | undefined
      // Truthiness, not presence: Gemini skips an empty `httpUrl` or `url` the same way.
      const urlKey = raw['httpUrl'] ? 'httpUrl' : raw['url'] ? 'url' : undefined
      if (urlKey) {
        // A reader that takes the transport from the key ignores `type` beside `url`: it is left, not read.
        const byKey = options.remote === 'httpUrl'
        const type = urlKey === 'httpUrl' ? 'http' : byKey ? 'sse' : (raw['type'] ?? 'http')
        if (type !== 'http' && type !== 'sse') return void read.problem(at('type'), `expected "http" or "sse", found ${JSON.stringify(type)}`)
        read.keep(urlKey === 'httpUrl' || byKey ? [urlKey, 'headers'] : ['url', 'type', 'headers'])
        const url = value(raw[urlKey], at(urlKey))
        const headers = read.strings('headers', (v, p) => value(v, p, true))
        if (url !== undefined) server = { name, transport: type, url, headers }
      } else if (raw['command']) {
        read.keep(STDIO_KEYS)
        const command = value(raw['command'], at('command'))
        const rawArgs = raw['args'] ?? []
        if (!Array.isArray(rawArgs)) read.problem(at('args'), 'expected a list of strings')
        const args = Array.isArray(rawArgs) ? rawArgs.map((a, n) => value(a, at('args', n)) ?? '') : []
        const envs = read.strings('env', (v, p) => value(v, p, true))
        const cwd = raw['cwd'] === undefined ? undefined : value(raw['cwd'], at('cwd'))
        if (command !== undefined) server = { name, transport: 'stdio', command, args, env: envs, ...(cwd !== undefined ? { cwd } : {}) }
      } else if (raw['tcp'] !== undefined) {
        return void read.leave('a WebSocket server (`tcp`); omh reaches servers over stdio, http or sse')
      } else {
        return void read.problem(at(), 'has none of `httpUrl`, `url` and `command`')
      }
      if (unset.size) read.leave(`${[...unset].join(', ')} is not set here, so its value is unknown`)
      return server
    },
  })
}
