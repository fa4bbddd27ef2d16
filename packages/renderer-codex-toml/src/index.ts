import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { PLUGIN_API_VERSION, defineRenderer, type CombinePart, type CombineResult, type DroppedItem, type McpServer, type ParseDocument, type ParseResult, type Problem, type RenderOutput } from '@omh/plugin-api'
import { isObject, readServers, stringifyToml, tomlLocator, type SyntaxRead, type TomlValue } from '@omh/plugin-kit'

const require = createRequire(import.meta.url)
// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

// Loaded on first use: rendering never needs a TOML parser, and every omh command loads this plugin.
let toml: typeof import('smol-toml') | undefined
const smolToml = () => (toml ??= require('smol-toml') as typeof import('smol-toml'))

const BEARER = /^Bearer (\S.*)$/

/** The container variable that carries a server's bearer token. */
export const tokenVariable = (server: string) => `OMH_MCP_${server.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_TOKEN`

/**
 * Servers as `[mcp_servers.<name>]` tables, with only the keys Codex accepts
 * under `--strict-config` (never `type`). Codex never substitutes anything,
 * so values are written as they are; a bearer token travels as a container
 * variable named by `bearer_token_env_var`, because Codex refuses a literal
 * `bearer_token`.
 */
export function renderServers(servers: readonly McpServer[]) {
  const dropped: DroppedItem[] = []
  const env: Record<string, string> = {}
  const tables: Record<string, Record<string, TomlValue>> = {}
  for (const server of servers) {
    if (server.transport === 'stdio') {
      tables[server.name] = {
        command: server.command,
        ...(server.args.length ? { args: [...server.args] } : {}),
        ...(server.cwd !== undefined ? { cwd: server.cwd } : {}),
        ...(Object.keys(server.env).length ? { env: { ...server.env } } : {}),
      }
      continue
    }
    if (server.transport === 'sse') {
      dropped.push({ capability: 'mcp', name: server.name, reason: 'no SSE transport (only streamable HTTP)' })
      continue
    }
    const { Authorization: auth, ...rest } = server.headers
    const bearer = auth !== undefined ? BEARER.exec(auth)?.[1] : undefined
    const headers = bearer === undefined ? server.headers : rest
    let variable: string | undefined
    if (bearer !== undefined) {
      variable = tokenVariable(server.name)
      for (let n = 2; env[variable] !== undefined && env[variable] !== bearer; n++) variable = `${tokenVariable(server.name)}_${n}`
      env[variable] = bearer
    }
    tables[server.name] = {
      url: server.url,
      ...(variable ? { bearer_token_env_var: variable } : {}),
      ...(Object.keys(headers).length ? { http_headers: { ...headers } } : {}),
    }
  }
  return { tables, dropped, env }
}

type TomlRead = { ok: true; data: Record<string, unknown> } | { ok: false; problem: Problem }

function readToml(content: string, file: string): TomlRead {
  const { parse, TomlError } = smolToml()
  try {
    return { ok: true, data: parse(content) as Record<string, unknown> }
  } catch (error) {
    if (!(error instanceof TomlError)) throw error
    const what = error.message.split('\n')[0]?.replace(/^Invalid TOML document: /, '') ?? 'syntax error'
    return { ok: false, problem: { file, line: error.line, column: error.column, message: `not valid TOML: ${what}` } }
  }
}

/** Joins TOML documents whose top-level keys are disjoint; an overlap is refused, naming the key. */
export function combineToml(parts: readonly CombinePart[]): CombineResult {
  const merged: Record<string, TomlValue> = {}
  const owner = new Map<string, string>()
  for (const part of parts) {
    const text = typeof part.content === 'string' ? part.content : new TextDecoder().decode(part.content)
    const read = readToml(text, part.binding)
    if (!read.ok) return { ok: false, reason: `${part.binding} did not write valid TOML (${read.problem.message})` }
    for (const [key, value] of Object.entries(read.data)) {
      const first = owner.get(key)
      if (first) return { ok: false, reason: `both set the top-level key "${key}" (${first}, ${part.binding})` }
      owner.set(key, part.binding)
      merged[key] = value as TomlValue
    }
  }
  return { ok: true, content: stringifyToml(merged) }
}

const STDIO_KEYS = ['command', 'args', 'env', 'env_vars', 'cwd']
const REMOTE_KEYS = ['url', 'bearer_token_env_var', 'http_headers', 'env_http_headers']

/**
 * Reads `[mcp_servers.*]` back. Values Codex takes from its environment
 * (`env_vars`, `bearer_token_env_var`, `env_http_headers`) are read from the
 * host environment, since omh keeps literal values; a server naming a
 * variable that is not set is left out, with the reason.
 */
export function parseServers(documents: readonly ParseDocument[], env: Readonly<Record<string, string | undefined>>): ParseResult {
  return readServers(documents, tomlSyntax, {
    key: 'mcp_servers',
    disabled: 'disabled in this file (`enabled = false`)',
    server({ name, raw, at }, read) {
      const stdio = raw['command'] !== undefined
      if (!stdio && raw['url'] === undefined) return void read.problem(at(), 'has neither `command` nor `url`')
      read.keep([...(stdio ? STDIO_KEYS : REMOTE_KEYS), 'enabled'])
      const unset: string[] = []
      const fromEnv = (variable: unknown, path: (string | number)[]): string | undefined => {
        if (typeof variable !== 'string') return void read.problem(path, 'expected a variable name')
        const value = env[variable]
        if (value === undefined) unset.push(variable)
        return value
      }
      const text = (key: string): string | undefined => {
        const v = raw[key]
        if (v === undefined || typeof v === 'string') return v
        return void read.problem(at(key), 'expected a string')
      }
      // Codex's tables hold strings only: one problem for the table, as Codex itself would refuse it.
      const strings = (key: string): Record<string, string> => {
        const v = raw[key]
        if (isObject(v) && Object.values(v).some((s) => typeof s !== 'string')) {
          read.problem(at(key), 'expected a table of strings')
          return {}
        }
        return read.strings(key, (s) => s as string, 'a table')
      }
      let server: McpServer | undefined
      if (stdio) {
        const args = raw['args'] ?? []
        if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) read.problem(at('args'), 'expected a list of strings')
        const vars = raw['env_vars'] ?? []
        if (!Array.isArray(vars)) read.problem(at('env_vars'), 'expected a list of variable names')
        const envs = { ...strings('env') }
        for (const v of Array.isArray(vars) ? vars : []) {
          const value = fromEnv(v, at('env_vars'))
          if (value !== undefined) envs[v as string] = value
        }
        const command = text('command')
        const cwd = text('cwd')
        if (command !== undefined) {
          server = { name, transport: 'stdio', command, args: Array.isArray(args) ? (args as string[]) : [], env: envs, ...(cwd !== undefined ? { cwd } : {}) }
        }
      } else {
        const headers = { ...strings('http_headers') }
        for (const [header, variable] of Object.entries(strings('env_http_headers'))) {
          const value = fromEnv(variable, at('env_http_headers', header))
          if (value !== undefined) headers[header] = value
        }
        if (raw['bearer_token_env_var'] !== undefined) {
          const token = fromEnv(raw['bearer_token_env_var'], at('bearer_token_env_var'))
          if (token !== undefined) headers['Authorization'] = `Bearer ${token}`
        }
        const url = text('url')
        if (url !== undefined) server = { name, transport: 'http', url, headers }
      }
      if (unset.length) read.leave(`${unset.join(', ')} ${unset.length === 1 ? 'is' : 'are'} not set here, so the value is unknown`)
      return server
    },
  })
}

function tomlSyntax(content: string, file: string): SyntaxRead {
  const read = readToml(content, file)
  return read.ok ? { ok: true, data: read.data, locate: tomlLocator(content) } : read
}

export default defineRenderer({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: ['codex-toml'],
  classes: ['mcp'],
  render(input): RenderOutput {
    if (input.capability !== 'mcp' || !input.items.length) return { files: [], dropped: [] }
    const { tables, dropped, env } = renderServers(input.items)
    if (!Object.keys(tables).length) return { files: [], dropped }
    const content = stringifyToml({ mcp_servers: tables })
    return { files: [{ kind: 'file', guest: input.binding.path, content, syntax: 'toml' }], dropped, env }
  },
  parse: (documents, context) => parseServers(documents, context.env),
  combine: { toml: combineToml },
})
