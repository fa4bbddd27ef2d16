/**
 * Reading a harness's MCP servers back, as every `parse` of an MCP format
 * does: walk the server map, leave what omh cannot keep (with the reason),
 * report what is malformed (with file, line and key), and collect the rest.
 * A format supplies only its own rules: the map's key, how it says
 * "disabled", and how one entry becomes a canonical server.
 */
import type { McpServer, ParseDocument, ParseResult, Problem } from '@omh/plugin-api'
import { isObject, readJson, serverEntries, type ServerEntry } from './json.js'
import type { KeyPath, Position } from './toml-locate.js'

/** The helpers a format's `server` reads one entry with. */
export interface EntryReader {
  /** A problem at a key path of the document (use `entry.at(…)`); any problem fails the read. */
  problem(path: readonly (string | number)[], message: string): void
  /** Leaves the whole server out, with the reason; several reasons are joined. */
  leave(reason: string): void
  /** Names every field of the entry outside `keys` as left: omh keeps no such field. */
  keep(keys: readonly string[]): void
  /**
   * The map of strings at `key` (absent: empty), each value through `value`
   * (default: the string as written). Not a map: a problem naming `noun`.
   */
  strings(key: string, value?: (raw: unknown, path: (string | number)[]) => string | undefined, noun?: string): Record<string, string>
}

/** One MCP format's rules. */
export interface ServerFormat {
  /** The key of the map of servers by name: `mcpServers`, `mcp`, `mcp_servers`. */
  readonly key: string
  /** How the format writes a switched-off server (`enabled: false`), as the reason it is left; absent: it has no switch. */
  readonly disabled?: string
  /** One entry as a canonical server; undefined when the entry reported a problem or was left. */
  server(entry: ServerEntry, read: EntryReader): McpServer | undefined
}

/** A document read in its syntax: its data and where each key path is written, or why it could not be read. */
export type SyntaxRead =
  | { readonly ok: true; readonly data: unknown; readonly locate: (path: KeyPath) => Position | undefined }
  | { readonly ok: false; readonly problem: Problem }

/** Reads the servers of the first document (none: no servers), in `syntax`, by the format's rules. */
export function readServers(documents: readonly ParseDocument[], syntax: (content: string, file: string) => SyntaxRead, format: ServerFormat): ParseResult {
  const doc = documents[0]
  if (!doc) return { ok: true, items: { mcp: [] }, left: [] }
  const parsed = syntax(doc.content, doc.file)
  if (!parsed.ok) return { ok: false, problems: [parsed.problem] }
  const { entries, problems, report } = serverEntries(doc.file, parsed.data, format.key, parsed.locate)
  const servers: McpServer[] = []
  const left: { name: string; reason: string }[] = []
  for (const entry of entries) {
    if (format.disabled && entry.raw['enabled'] === false) {
      left.push({ name: entry.name, reason: format.disabled })
      continue
    }
    const reasons: string[] = []
    const read: EntryReader = {
      problem: (path, message) => report(path, message),
      leave: (reason) => void reasons.push(reason),
      keep: (keys) => {
        for (const key of Object.keys(entry.raw)) if (!keys.includes(key)) left.push({ name: `${entry.name}.${key}`, reason: 'omh keeps no such field' })
      },
      strings: (key, value = asString(report), noun = 'an object') => {
        const raw = entry.raw[key] ?? {}
        if (!isObject(raw)) {
          report(entry.at(key), `expected ${noun} of strings`)
          return {}
        }
        return Object.fromEntries(Object.entries(raw).map(([name, v]) => [name, value(v, entry.at(key, name)) ?? '']))
      },
    }
    const server = format.server(entry, read)
    if (reasons.length) left.push({ name: entry.name, reason: reasons.join('; ') })
    else if (server) servers.push(server)
  }
  if (problems.length) return { ok: false, problems }
  return { ok: true, items: { mcp: servers }, left }
}

const asString =
  (report: (path: readonly (string | number)[], message: string) => void) =>
  (raw: unknown, path: (string | number)[]): string | undefined => {
    if (typeof raw === 'string') return raw
    report(path, 'expected a string')
    return undefined
  }

/** JSON as `readServers` reads it: with positions, and a syntax error as a located problem. */
export function jsonSyntax(content: string, file: string): SyntaxRead {
  const read = readJson(content, file)
  return read.ok ? { ok: true, data: read.doc.data, locate: (p) => read.doc.locate(p) } : read
}
