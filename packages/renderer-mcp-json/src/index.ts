import { readFileSync } from 'node:fs'
import { PLUGIN_API_VERSION, defineRenderer, serverValues, type CombinePart, type CombineResult, type DroppedItem, type McpServer, type ParseDocument, type ParseResult, type RefusedValue, type RenderOutput } from '@omh/plugin-api'
import { jsonSyntax, readServers, referSecrets } from '@omh/plugin-kit'
import * as z from 'zod/mini'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

/** What the harness would substitute: `${VAR}` and `${VAR:-default}`. */
const SUBSTITUTION = /\$\{([^}]*)\}/
/** What a harness that also reads a bare `$VAR` would substitute. */
const BARE_SUBSTITUTION = /\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)/

/**
 * `bare_variables`: the harness substitutes `$VAR` as well as `${VAR}` in every
 * string of a server, so a value holding either is refused. `key`: the
 * top-level key holding the servers, for a harness whose settings file names
 * them otherwise (Amp's `amp.mcpServers`); one literal key, dots and all.
 */
const options = z.strictObject({ bare_variables: z._default(z.boolean(), false), key: z._default(z.string().check(z.minLength(1)), 'mcpServers') })
export type McpJsonOptions = z.infer<typeof options>

type Entry = Record<string, unknown>

/** A variable name `<secret NAME>` can carry. */
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * One server in the `mcpServers` shape: `type` always written, so the file
 * says what each server is. A `<secret NAME>` becomes `${NAME}`, which the
 * harness fills from the container's variable NAME (recorded in `env`).
 */
export function entryOf(server: McpServer, env: Record<string, string> = {}): Entry {
  const values = (record: Readonly<Record<string, string>>) =>
    Object.fromEntries(Object.entries(record).map(([k, v]) => [k, referSecrets(v, (n) => `\${${n}}`, env)]))
  if (server.transport === 'stdio') {
    return { type: 'stdio', command: server.command, args: [...server.args], env: values(server.env) }
  }
  return { type: server.transport, url: server.url, headers: values(server.headers) }
}

export function renderServers(servers: readonly McpServer[], harness: string, bareVariables = false) {
  const substituted = bareVariables ? BARE_SUBSTITUTION : SUBSTITUTION
  const dropped: DroppedItem[] = []
  const refused: RefusedValue[] = []
  const mcpServers: Record<string, Entry> = {}
  const env: Record<string, string> = {}
  for (const server of servers) {
    if (server.transport === 'stdio' && server.cwd !== undefined) {
      dropped.push({ capability: 'mcp', name: server.name, reason: 'no `cwd` for MCP servers' })
      continue
    }
    for (const [field, value] of serverValues(server)) {
      if (substituted.test(value)) {
        refused.push({ capability: 'mcp', name: server.name, field, value, reason: `${harness} substitutes \`${bareVariables ? '$…' : '${…}'}\` in this file` })
      }
    }
    mcpServers[server.name] = entryOf(server, env)
  }
  return { mcpServers, dropped, refused, env }
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
 * `~/.claude.json`; the servers under `key` when the binding names one). In `env` and `headers`, `${VAR}` reads back as
 * `<secret VAR>`, the inverse of rendering; elsewhere, and `${VAR:-default}`
 * anywhere, is resolved against the host environment, as the harness would at
 * launch; a server naming a variable that is not set is left out, with the reason.
 */
export function parseServers(documents: readonly ParseDocument[], env: Readonly<Record<string, string | undefined>>, key = 'mcpServers'): ParseResult {
  return readServers(documents, jsonSyntax, {
    key,
    server({ name, raw, at }, read) {
      const type = raw['type'] ?? (raw['url'] !== undefined ? 'http' : 'stdio')
      if (type === 'ws') return void read.leave('a WebSocket server; omh reaches servers over http or sse')
      if (type !== 'stdio' && type !== 'http' && type !== 'sse') return void read.problem(at('type'), `expected "stdio", "http", "sse" or "ws", found ${JSON.stringify(type)}`)
      read.keep(type === 'stdio' ? ['type', 'command', 'args', 'env'] : ['type', 'url', 'headers'])
      const unset = new Set<string>()
      const value = (v: unknown, p: (string | number)[], secrets = false): string | undefined => {
        if (typeof v !== 'string') return void read.problem(p, 'expected a string')
        return v.replace(new RegExp(SUBSTITUTION, 'g'), (whole, inner: string) => {
          // In env and headers a bare variable is a secret the harness takes from its environment:
          // named, never copied, so the import writes no value into mcp.json.
          if (secrets && VARIABLE.test(inner)) return `<secret ${inner}>`
          const [variable = '', fallback] = inner.split(/:-(.*)/s, 2)
          const set = env[variable]
          if (set !== undefined && set !== '') return set
          if (fallback !== undefined) return fallback
          unset.add(variable)
          return whole
        })
      }
      let server: McpServer | undefined
      if (type === 'stdio') {
        const command = value(raw['command'], at('command'))
        const rawArgs = raw['args'] ?? []
        if (!Array.isArray(rawArgs)) read.problem(at('args'), 'expected a list of strings')
        const args = Array.isArray(rawArgs) ? rawArgs.map((a, n) => value(a, at('args', n)) ?? '') : []
        const envs = read.strings('env', (v, p) => value(v, p, true))
        if (command !== undefined) server = { name, transport: 'stdio', command, args, env: envs }
      } else {
        const url = value(raw['url'], at('url'))
        const headers = read.strings('headers', (v, p) => value(v, p, true))
        if (url !== undefined) server = { name, transport: type, url, headers }
      }
      if (unset.size) read.leave(`${[...unset].map((v) => `\${${v}}`).join(', ')} is not set here, so its value is unknown`)
      return server
    },
  })
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
  options,
  render(input): RenderOutput {
    if (input.capability !== 'mcp' || !input.items.length) return { files: [], dropped: [] }
    const { mcpServers, dropped, refused, env } = renderServers(input.items, input.adapter.name, input.options?.bare_variables)
    if (!Object.keys(mcpServers).length) return { files: [], dropped, refused }
    const key = input.options?.key ?? 'mcpServers'
    return { files: [{ kind: 'file', guest: input.binding.path, content: json({ [key]: mcpServers }), syntax: 'json' }], dropped, refused, ...(Object.keys(env).length ? { env } : {}) }
  },
  parse: (documents, context) => parseServers(documents, context.env, context.options?.key),
  combine: { json: combineJson },
})
