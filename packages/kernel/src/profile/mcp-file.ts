import path from 'node:path'
import type { Problem, McpServer } from '@omh/plugin-api'
import { SECRET_REFERENCE, closest, dotted, isObject, readJson, type JsonDocument } from '@omh/plugin-kit'
import { profileBounds, type CatalogueEntry, type CatalogueSource } from './catalogue.js'
import type { ReadBounds } from '../safe-read.js'
import { readTextFile } from '../user-files.js'

/**
 * A server name: safe as a table key and a tool prefix in every harness. Not
 * digits alone: JavaScript orders such keys first, so the file's order would
 * not survive a read.
 */
export const SERVER_NAME = /^(?!\d+$)[A-Za-z0-9][A-Za-z0-9_.-]*$/

/** The keys of a server entry omh reads and writes; any other (`required` too: no harness says it) is the user's. */
export const MANAGED_KEYS = ['type', 'command', 'args', 'env', 'cwd', 'url', 'headers'] as const

const STDIO_KEYS = ['type', 'command', 'args', 'env', 'cwd', 'required']
const REMOTE_KEYS = ['type', 'url', 'headers', 'required']

/** The catalogue's `mcp.json`, read: its servers in file order, or everything wrong with it. */
export interface McpFile {
  readonly file: string
  /** The bytes read; undefined when the file does not exist. */
  readonly text: string | undefined
  readonly doc: JsonDocument | undefined
  readonly servers: readonly McpServer[]
  readonly problems: readonly Problem[]
}

export const mcpFileOf = (omhHome: string) => path.join(omhHome, 'mcp.json')

export async function readMcpFile(file: string, bounds: ReadBounds = {}): Promise<McpFile> {
  const bytes = readTextFile(file, bounds)
  if (bytes === undefined) return { file, text: undefined, doc: undefined, servers: [], problems: [] }
  if (!bytes.ok) return { file, text: undefined, doc: undefined, servers: [], problems: [bytes.problem] }
  const { text } = bytes
  const read = readJson(text, file)
  if (!read.ok) return { file, text, doc: undefined, servers: [], problems: [read.problem] }
  const { servers, problems } = serversOf(read.doc)
  return { file, text, doc: read.doc, servers, problems }
}

/** Checks a parsed `mcp.json` completely and returns its servers. */
export function serversOf(doc: JsonDocument): { servers: McpServer[]; problems: Problem[] } {
  const problems: Problem[] = []
  const servers: McpServer[] = []
  const problem = (p: (string | number)[], message: string, suggestion?: string) => {
    const where = doc.locate(p)
    problems.push({
      file: doc.file,
      ...(where ? { line: where.line, column: where.column } : {}),
      ...(p.length ? { path: dotted(p) } : {}),
      message,
      ...(suggestion ? { suggestion } : {}),
    })
  }
  const data = doc.data
  if (!isObject(data)) {
    problem([], 'expected an object holding `mcpServers`')
    return { servers, problems }
  }
  for (const key of Object.keys(data)) {
    // `$schema` and the like belong to editors; omh neither reads nor refuses them.
    if (key !== 'mcpServers' && !key.startsWith('$')) problem([key], 'unknown key; omh reads `mcpServers`', closest(key, ['mcpServers']))
  }
  const list = data['mcpServers']
  if (list === undefined) return { servers, problems }
  if (!isObject(list)) {
    problem(['mcpServers'], 'expected an object of servers by name')
    return { servers, problems }
  }
  for (const [name, raw] of Object.entries(list)) {
    const server = serverFrom(name, raw, (p, message, suggestion) => problem(['mcpServers', name, ...p], message, suggestion))
    if (server) servers.push({ ...server, source: doc.file })
  }
  return { servers, problems }
}

type Report = (path: (string | number)[], message: string, suggestion?: string) => void

/** One canonical server entry, checked; undefined after reporting what is wrong. */
export function serverFrom(name: string, raw: unknown, report: Report): McpServer | undefined {
  const before = { count: 0 }
  const say: Report = (p, m, s) => {
    before.count++
    report(p, m, s)
  }
  if (!SERVER_NAME.test(name)) say([], 'a server name is letters, digits, `.`, `_` and `-`, starting with a letter or digit, and not digits alone')
  if (!isObject(raw)) {
    say([], 'expected an object with `command` (a program omh starts) or `url` (a server it reaches)')
    return undefined
  }
  const hasCommand = raw['command'] !== undefined
  const hasUrl = raw['url'] !== undefined
  if (hasCommand && hasUrl) {
    say([], 'has both `command` and `url`; a server is either started (`command`) or reached (`url`), not both')
    return undefined
  }
  if (!hasCommand && !hasUrl) {
    say([], 'has neither `command` nor `url`; a server is either started (`command`) or reached (`url`)')
    return undefined
  }
  const keys = hasCommand ? STDIO_KEYS : REMOTE_KEYS
  for (const key of Object.keys(raw)) {
    if (keys.includes(key)) continue
    const other = hasCommand ? REMOTE_KEYS : STDIO_KEYS
    say(
      [key],
      other.includes(key) ? `belongs to a server reached by \`${hasCommand ? 'url' : 'command'}\`` : 'unknown key',
      other.includes(key) ? undefined : closest(key, keys),
    )
  }
  const text = (key: string): string | undefined => {
    const v = raw[key]
    if (v === undefined) return undefined
    if (typeof v === 'string' && v.length) return v
    say([key], 'expected a non-empty string')
    return undefined
  }
  const strings = (key: string): Record<string, string> => {
    const v = raw[key]
    if (v === undefined) return {}
    if (!isObject(v)) {
      say([key], 'expected an object of strings')
      return {}
    }
    for (const [k, s] of Object.entries(v)) {
      if (typeof s !== 'string') say([key, k], 'expected a string')
      // What is left once every well-formed reference is taken out must not still try to be one.
      else if (/<\s*secret\b/i.test(s.replace(SECRET_REFERENCE, ''))) say([key, k], 'a secret is named `<secret NAME>`, NAME letters, digits and `_`, not starting with a digit (`<secret SENTRY_TOKEN>`)')
    }
    return v as Record<string, string>
  }
  if (raw['required'] !== undefined && typeof raw['required'] !== 'boolean') say(['required'], 'expected true or false')
  const required = raw['required'] === true ? { required: true as const } : {}
  if (hasCommand) {
    if (raw['type'] !== undefined && raw['type'] !== 'stdio') say(['type'], 'a server with `command` is "stdio"')
    const command = text('command')
    const args = raw['args'] ?? []
    if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) say(['args'], 'expected a list of strings')
    const env = strings('env')
    const cwd = text('cwd')
    if (before.count || command === undefined) return undefined
    return { name, transport: 'stdio', command, args: args as string[], env, ...(cwd !== undefined ? { cwd } : {}), ...required }
  }
  const type = raw['type'] ?? 'http'
  if (type !== 'http' && type !== 'sse') say(['type'], `expected "http" or "sse", found ${JSON.stringify(type)}`)
  const url = text('url')
  const headers = strings('headers')
  if (url !== undefined && !/^https?:\/\//.test(url)) say(['url'], 'expected an http:// or https:// address')
  if (before.count || url === undefined) return undefined
  return { name, transport: type as 'http' | 'sse', url, headers, ...required }
}

/** A server as `mcp.json` keeps it: defaults left out, so a hand-written entry and omh's look alike. */
export function serverToJson(server: McpServer): Record<string, unknown> {
  if (server.transport === 'stdio') {
    return {
      command: server.command,
      ...(server.args.length ? { args: [...server.args] } : {}),
      ...(Object.keys(server.env).length ? { env: { ...server.env } } : {}),
      ...(server.cwd !== undefined ? { cwd: server.cwd } : {}),
    }
  }
  return {
    type: server.transport,
    url: server.url,
    ...(Object.keys(server.headers).length ? { headers: { ...server.headers } } : {}),
  }
}

export const mcpSource: CatalogueSource<'mcp'> = {
  capability: 'mcp',
  where: (loc) => mcpFileOf(loc.omhHome),
  async list(loc) {
    const read = await readMcpFile(mcpFileOf(loc.omhHome), profileBounds(loc))
    const entries: CatalogueEntry<McpServer>[] = read.servers.map((server) => ({
      name: server.name,
      source: read.file,
      load: async () => ({ ok: true as const, item: server }),
    }))
    return { entries, problems: read.problems }
  },
}
