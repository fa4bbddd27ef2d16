import type { DroppedItem, McpServer, ParseDocument, ParseResult, RefusedValue, RenderOutput } from '@omh/plugin-api'
import { SECRET_REFERENCE, jsonSyntax, readServers } from '@omh/plugin-kit'

/** What pi 1.6.0 takes as a server name: tool names and namespaces are built from it. */
const SERVER_NAME = /^[A-Za-z0-9_-]+$/
/** A variable name `<secret NAME>` can carry. */
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/

type Entry = Record<string, unknown>

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

/**
 * A value of `env` or `headers` as pi reads it back: pi substitutes `$NAME` and `${NAME}` there,
 * and runs a value that starts with `!` as a shell command. So every `$` of the text is written
 * `$$` and a leading `!` as `$!` (pi's own escapes), and a `<secret NAME>` becomes `${NAME}`, which
 * pi fills from the container's variable NAME (recorded in `env`).
 */
export function escapeValue(value: string, env: Record<string, string>): string {
  let out = ''
  let at = 0
  for (const match of value.matchAll(SECRET_REFERENCE)) {
    out += value.slice(at, match.index).replaceAll('$', '$$$$')
    env[match[1]!] = match[0]
    out += `\${${match[1]!}}`
    at = match.index + match[0].length
  }
  out += value.slice(at).replaceAll('$', '$$$$')
  return out.startsWith('!') ? `$${out}` : out
}

const values = (record: Readonly<Record<string, string>>, env: Record<string, string>) =>
  Object.fromEntries(Object.entries(record).map(([k, v]) => [k, escapeValue(v, env)]))

/** pi reads `~` and a leading `~/` in `command`, `args` and `cwd` as the home directory. */
const HOME = /^~(\/|$)/

/** Why pi would not start this server as omh has it, if it would not. */
function unstartable(server: McpServer, taken: Map<string, string>): string | undefined {
  if (!SERVER_NAME.test(server.name)) return 'pi takes a server name of letters, digits, `_` and `-` only'
  // pi names a server's tools after it with every `-` as `_`, and refuses a second server of the same such name.
  const twin = taken.get(server.name.replaceAll('-', '_'))
  if (twin !== undefined) return `its name and "${twin}"'s differ only in \`-\` and \`_\`, which pi counts as one server`
  if (server.transport === 'sse') return 'no legacy SSE transport: pi reaches remote servers over streamable HTTP only'
  if (server.transport === 'http' && !(URL.canParse(server.url) && /^https?:$/.test(new URL(server.url).protocol))) return 'pi takes only an http or https URL it can read'
  return undefined
}

/** `~/.pi/agent/mcp.json`: `mcpServers`, each with its `type` written, so the file says what each server is. */
export function renderMcp(servers: readonly McpServer[], path: string): RenderOutput {
  const dropped: DroppedItem[] = []
  const refused: RefusedValue[] = []
  const env: Record<string, string> = {}
  const taken = new Map<string, string>()
  const mcpServers: Record<string, Entry> = {}
  for (const server of servers) {
    const reason = unstartable(server, taken)
    if (reason) {
      dropped.push({ capability: 'mcp', name: server.name, reason })
      continue
    }
    taken.set(server.name.replaceAll('-', '_'), server.name)
    if (server.transport === 'stdio') {
      const paths: [string, string][] = [['command', server.command], ...server.args.map((a, n): [string, string] => [`args[${n}]`, a]), ...(server.cwd !== undefined ? [['cwd', server.cwd] as [string, string]] : [])]
      for (const [field, value] of paths) {
        if (HOME.test(value)) refused.push({ capability: 'mcp', name: server.name, field, value, reason: 'pi reads a leading `~` as the home directory' })
      }
      mcpServers[server.name] = {
        type: 'stdio',
        command: server.command,
        args: [...server.args],
        env: values(server.env, env),
        ...(server.cwd !== undefined ? { cwd: server.cwd } : {}),
      }
    } else {
      mcpServers[server.name] = { type: 'http', url: server.url, headers: values(server.headers, env) }
    }
  }
  if (!Object.keys(mcpServers).length) return { files: [], dropped, refused }
  return { files: [{ kind: 'file', guest: path, content: json({ mcpServers }), syntax: 'json' }], dropped, refused, ...(Object.keys(env).length ? { env } : {}) }
}

/**
 * A value of `env` or `headers` as omh keeps it: pi's escapes undone, and each variable pi would
 * substitute named as `<secret NAME>`, never copied, so an import writes no value into omh's
 * mcp.json. `undefined` for a value pi computes by running a command.
 */
export function unescapeValue(value: string): string | undefined {
  if (value.startsWith('!')) return undefined
  return value.replace(/\$(\$|!|\{([^}]*)\}|[A-Za-z_][A-Za-z0-9_]*)?/g, (whole, after: string | undefined, braced: string | undefined) => {
    if (after === '$' || after === '!') return after
    if (braced !== undefined) return VARIABLE.test(braced) ? `<secret ${braced}>` : whole
    if (after !== undefined) return `<secret ${after}>`
    return whole
  })
}

/**
 * Reads `mcpServers` of pi's mcp.json back, as pi reads it: `url` for streamable HTTP, `command` for
 * stdio, `type` optional. A server turned off (`enabled: false`) or on the legacy SSE transport,
 * which pi refuses, is left out with the reason, as is one whose value pi gets by running a command.
 */
export function parseMcp(documents: readonly ParseDocument[]): ParseResult {
  return readServers(documents, jsonSyntax, {
    key: 'mcpServers',
    disabled: 'turned off in pi (`enabled: false`)',
    server({ name, raw, at }, read) {
      const type = raw['type']
      if (type === 'sse') return void read.leave('a legacy SSE server, which pi refuses')
      const text = (v: unknown, p: (string | number)[]): string | undefined => (typeof v === 'string' ? v : void read.problem(p, 'expected a string'))
      let commanded = false
      const value = (v: unknown, p: (string | number)[]): string | undefined => {
        const s = text(v, p)
        if (s === undefined) return undefined
        const kept = unescapeValue(s)
        if (kept === undefined) commanded = true
        return kept ?? ''
      }
      let server: McpServer | undefined
      if (typeof raw['url'] === 'string' && (type === undefined || type === 'http' || type === 'streamable-http')) {
        read.keep(['type', 'url', 'headers'])
        const headers = read.strings('headers', value)
        server = { name, transport: 'http', url: raw['url'], headers }
      } else if (typeof raw['command'] === 'string' && (type === undefined || type === 'stdio')) {
        read.keep(['type', 'command', 'args', 'env', 'cwd'])
        const rawArgs = raw['args'] ?? []
        if (!Array.isArray(rawArgs)) read.problem(at('args'), 'expected a list of strings')
        const args = Array.isArray(rawArgs) ? rawArgs.map((a, n) => text(a, at('args', n)) ?? '') : []
        const envs = read.strings('env', value)
        const cwd = raw['cwd'] === undefined ? undefined : text(raw['cwd'], at('cwd'))
        server = { name, transport: 'stdio', command: raw['command'], args, env: envs, ...(cwd !== undefined ? { cwd } : {}) }
      } else {
        return void read.problem(at(), 'needs `command` (stdio) or `url` (streamable HTTP), with a `type` of "stdio", "http" or "streamable-http" if any')
      }
      if (commanded) return void read.leave('a value pi gets by running a command (`!…`), which omh does not run')
      return server
    },
  })
}
