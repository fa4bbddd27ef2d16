import { createRequire } from 'node:module'
import { PLUGIN_API_VERSION, defineRenderer, serverValues, type CombinePart, type CombineResult, type DroppedItem, type McpServer, type ParseDocument, type ParseResult, type RefusedValue, type RenderOutput } from '@omh/plugin-api'
import { isObject, readJson, serverEntries } from '@omh/plugin-kit'

const { name, version } = createRequire(import.meta.url)('../package.json') as { name: string; version: string }

/** What the harness would substitute: `${VAR}` and `${VAR:-default}`. */
const SUBSTITUTION = /\$\{([^}]*)\}/

type Entry = Record<string, unknown>

/** One server in the `mcpServers` shape: `type` always written, so the file says what each server is. */
export function entryOf(server: McpServer): Entry {
  if (server.transport === 'stdio') {
    return { type: 'stdio', command: server.command, args: [...server.args], env: { ...server.env } }
  }
  return { type: server.transport, url: server.url, headers: { ...server.headers } }
}

export function renderServers(servers: readonly McpServer[], harness: string) {
  const dropped: DroppedItem[] = []
  const refused: RefusedValue[] = []
  const mcpServers: Record<string, Entry> = {}
  for (const server of servers) {
    if (server.transport === 'stdio' && server.cwd !== undefined) {
      dropped.push({ capability: 'mcp', name: server.name, reason: 'no `cwd` for MCP servers' })
      continue
    }
    for (const [field, value] of serverValues(server)) {
      if (SUBSTITUTION.test(value)) {
        refused.push({ capability: 'mcp', name: server.name, field, value, reason: `${harness} substitutes \`\${…}\` in this file` })
      }
    }
    mcpServers[server.name] = entryOf(server)
  }
  return { mcpServers, dropped, refused }
}

export const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

/** Joins JSON objects whose top-level keys are disjoint; refuses an overlap rather than let one part win. */
export function combineJson(parts: readonly CombinePart[]): CombineResult {
  const merged: Record<string, unknown> = {}
  const owner = new Map<string, string>()
  for (const part of parts) {
    const text = typeof part.content === 'string' ? part.content : new TextDecoder().decode(part.content)
    let data: unknown
    try {
      data = JSON.parse(text)
    } catch {
      return { ok: false, reason: `${part.binding} did not write a JSON document` }
    }
    if (data === null || typeof data !== 'object' || Array.isArray(data)) {
      return { ok: false, reason: `${part.binding} did not write a JSON object` }
    }
    for (const [key, value] of Object.entries(data)) {
      const first = owner.get(key)
      if (first) return { ok: false, reason: `both set the top-level key "${key}" (${first}, ${part.binding})` }
      owner.set(key, part.binding)
      merged[key] = value
    }
  }
  return { ok: true, content: json(merged) }
}

/**
 * Reads an `mcpServers` document back (`.mcp.json`, or the user scope of
 * `~/.claude.json`). `${VAR}` and `${VAR:-default}` are resolved against the
 * host environment, as the harness would resolve them at launch, because omh
 * keeps literal values; a server naming a variable that is not set is left
 * out, with the reason.
 */
export function parseServers(documents: readonly ParseDocument[], env: Readonly<Record<string, string | undefined>>): ParseResult {
  const doc = documents[0]
  if (!doc) return { ok: true, items: { mcp: [] }, left: [] }
  const read = readJson(doc.content, doc.file)
  if (!read.ok) return { ok: false, problems: [read.problem] }
  const { entries, problems, report: problem } = serverEntries(doc.file, read.doc.data, 'mcpServers', read.doc.locate)
  const servers: McpServer[] = []
  const left: { name: string; reason: string }[] = []
  for (const { name: server, raw, at } of entries) {
    const type = raw['type'] ?? (raw['url'] !== undefined ? 'http' : 'stdio')
    if (type === 'ws') {
      left.push({ name: server, reason: 'a WebSocket server; omh reaches servers over http or sse' })
      continue
    }
    if (type !== 'stdio' && type !== 'http' && type !== 'sse') {
      problem(at('type'), `expected "stdio", "http", "sse" or "ws", found ${JSON.stringify(type)}`)
      continue
    }
    const known = type === 'stdio' ? ['type', 'command', 'args', 'env'] : ['type', 'url', 'headers']
    for (const key of Object.keys(raw)) if (!known.includes(key)) left.push({ name: `${server}.${key}`, reason: 'omh keeps no such field' })
    const unset = new Set<string>()
    const value = (v: unknown, p: (string | number)[]): string | undefined => {
      if (typeof v !== 'string') {
        problem(p, 'expected a string')
        return undefined
      }
      return v.replace(new RegExp(SUBSTITUTION, 'g'), (whole, inner: string) => {
        const [variable = '', fallback] = inner.split(/:-(.*)/s, 2)
        const set = env[variable]
        if (set !== undefined && set !== '') return set
        if (fallback !== undefined) return fallback
        unset.add(variable)
        return whole
      })
    }
    const strings = (key: string): Record<string, string> => {
      const v = raw[key] ?? {}
      if (!isObject(v)) {
        problem(at(key), 'expected an object of strings')
        return {}
      }
      return Object.fromEntries(Object.entries(v).map(([k, s]) => [k, value(s, at(key, k)) ?? '']))
    }
    let parsed: McpServer | undefined
    if (type === 'stdio') {
      const command = value(raw['command'], at('command'))
      const rawArgs = raw['args'] ?? []
      if (!Array.isArray(rawArgs)) problem(at('args'), 'expected a list of strings')
      const args = Array.isArray(rawArgs) ? rawArgs.map((a, n) => value(a, at('args', n)) ?? '') : []
      const envs = strings('env')
      if (command !== undefined) parsed = { name: server, transport: 'stdio', command, args, env: envs }
    } else {
      const url = value(raw['url'], at('url'))
      const headers = strings('headers')
      if (url !== undefined) parsed = { name: server, transport: type, url, headers }
    }
    if (unset.size) {
      left.push({ name: server, reason: `${[...unset].map((v) => `\${${v}}`).join(', ')} is not set here, so its value is unknown` })
      continue
    }
    if (parsed) servers.push(parsed)
  }
  if (problems.length) return { ok: false, problems }
  return { ok: true, items: { mcp: servers }, left }
}

/**
 * The `mcpServers` document. A project `.mcp.json` also needs the user
 * settings to approve its servers before an interactive Claude Code session
 * starts them; the hooks binding's settings file does that, from the same
 * profile.
 */
export default defineRenderer({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: ['mcp-json'],
  classes: ['mcp'],
  render(input): RenderOutput {
    if (input.capability !== 'mcp' || !input.items.length) return { files: [], dropped: [] }
    const { mcpServers, dropped, refused } = renderServers(input.items, input.adapter.name)
    if (!Object.keys(mcpServers).length) return { files: [], dropped, refused }
    return { files: [{ kind: 'file', guest: input.binding.path, content: json({ mcpServers }), syntax: 'json' }], dropped, refused }
  },
  parse: (documents, context) => parseServers(documents, context.env),
  combine: { json: combineJson },
})
