import { readFileSync } from 'node:fs'
import { PLUGIN_API_VERSION, defineRenderer, serverValues, type DroppedItem, type McpServer, type ParseDocument, type ParseResult, type RefusedValue, type RenderOutput } from '@omh/plugin-api'
import { jsonSyntax, readServers } from '@omh/plugin-kit'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

/** What OpenCode substitutes in any string of its config: `{env:VAR}` and `{file:path}`. */
const SUBSTITUTION = /\{(env|file):([^}]*)\}/

export const SCHEMA = 'https://opencode.ai/config.json'

/**
 * Servers as OpenCode's `mcp` map. Local servers take one `command` array
 * (OpenCode has no `args` key and drops one silently); remote servers are
 * `remote` whatever their transport, since OpenCode has no key to choose one.
 */
export function renderServers(servers: readonly McpServer[], harness: string) {
  const dropped: DroppedItem[] = []
  const refused: RefusedValue[] = []
  const mcp: Record<string, Record<string, unknown>> = {}
  for (const server of servers) {
    if (server.transport === 'stdio' && server.cwd !== undefined) {
      dropped.push({ capability: 'mcp', name: server.name, reason: 'no `cwd` for MCP servers' })
      continue
    }
    for (const [field, value] of serverValues(server)) {
      const hit = SUBSTITUTION.exec(value)
      if (hit) refused.push({ capability: 'mcp', name: server.name, field, value, reason: `${harness} substitutes \`{${hit[1]}:…}\` in its config` })
    }
    mcp[server.name] =
      server.transport === 'stdio'
        ? { type: 'local', command: [server.command, ...server.args], environment: { ...server.env }, enabled: true }
        : { type: 'remote', url: server.url, headers: { ...server.headers }, enabled: true }
  }
  return { mcp, dropped, refused }
}

const LOCAL_KEYS = ['type', 'command', 'environment', 'enabled']
const REMOTE_KEYS = ['type', 'url', 'headers', 'enabled']

/**
 * Reads the `mcp` map of an OpenCode config back. `{env:VAR}` is resolved
 * against the host environment, as OpenCode would at launch; a server that
 * reads a file (`{file:…}`) or names a variable that is not set is left out,
 * with the reason. A remote server reads back as `http`.
 */
export function parseServers(documents: readonly ParseDocument[], env: Readonly<Record<string, string | undefined>>): ParseResult {
  return readServers(documents, jsonSyntax, {
    key: 'mcp',
    disabled: 'disabled in this file (`enabled: false`)',
    server({ name, raw, at }, read) {
      const type = raw['type']
      if (type !== 'local' && type !== 'remote') return void read.problem(at('type'), `expected "local" or "remote", found ${JSON.stringify(type)}`)
      read.keep(type === 'local' ? LOCAL_KEYS : REMOTE_KEYS)
      const value = (v: unknown, p: (string | number)[]): string => {
        if (typeof v !== 'string') {
          read.problem(p, 'expected a string')
          return ''
        }
        return v.replace(new RegExp(SUBSTITUTION, 'g'), (whole, kind: string, inner: string) => {
          const set = kind === 'env' ? env[inner] : undefined
          if (set !== undefined) return set
          read.leave(kind === 'env' ? `{env:${inner}} is not set here, so its value is unknown` : `${whole} reads a file at launch; omh keeps literal values`)
          return whole
        })
      }
      if (type === 'remote') return { name, transport: 'http', url: value(raw['url'], at('url')), headers: read.strings('headers', value) }
      const command = raw['command']
      if (!Array.isArray(command) || command.length === 0) return void read.problem(at('command'), 'expected a non-empty list: the program, then its arguments')
      const words = command.map((w, n) => value(w, at('command', n)))
      return { name, transport: 'stdio', command: words[0]!, args: words.slice(1), env: read.strings('environment', value) }
    },
  })
}


export default defineRenderer({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: ['opencode-json'],
  classes: ['mcp'],
  render(input): RenderOutput {
    if (input.capability !== 'mcp' || !input.items.length) return { files: [], dropped: [] }
    const { mcp, dropped, refused } = renderServers(input.items, input.adapter.name)
    if (!Object.keys(mcp).length) return { files: [], dropped, refused }
    const content = `${JSON.stringify({ $schema: SCHEMA, mcp }, null, 2)}\n`
    return { files: [{ kind: 'file', guest: input.binding.path, content, syntax: 'json' }], dropped, refused }
  },
  parse: (documents, context) => parseServers(documents, context.env),
})
