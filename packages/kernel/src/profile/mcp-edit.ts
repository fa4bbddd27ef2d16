import { isDeepStrictEqual } from 'node:util'
import { FILE_CHANGED, OmhError, PROFILE_INVALID, serverValues, type Problem, type McpServer } from '@omh/plugin-api'
import { sameBytes, snapshot, updateFile, type FileSnapshot } from '../files.js'
import type { ReadBounds } from '../safe-read.js'
import { isObject, jsonIndent, readJson } from '@omh/plugin-kit'
import { MANAGED_KEYS, serverFrom, serverToJson } from './mcp-file.js'

/** `mcp.json` opened for a change: the bytes read, and the document as a plain object. */
export interface McpDocument {
  readonly snapshot: FileSnapshot
  readonly data: Record<string, unknown>
  readonly servers: Record<string, unknown>
  readonly indent: string | number
}

/**
 * Opens the catalogue's `mcp.json` for a change. A document that is not JSON,
 * or whose `mcpServers` is not an object, is refused before anything is
 * planned, so it stays exactly as the user left it.
 */
export async function openMcpDocument(file: string, bounds: ReadBounds = {}): Promise<McpDocument> {
  return documentOf(await snapshot(file, bounds))
}

function documentOf(before: FileSnapshot): McpDocument {
  const file = before.file
  if (!before.bytes) return { snapshot: before, data: { mcpServers: {} }, servers: {}, indent: 2 }
  const text = before.bytes.toString('utf8')
  const read = readJson(text, file)
  const refuse = (problem: Problem) => OmhError.of(PROFILE_INVALID, { args: [1], problems: [problem] })
  if (!read.ok) throw refuse(read.problem)
  const data = read.doc.data
  if (!isObject(data)) throw refuse({ file, line: 1, message: 'expected an object holding `mcpServers`' })
  const depth = depthOf(data)
  if (depth > WRITABLE_DEPTH) {
    throw refuse({ file, message: `nests ${depth} levels deep; omh writes back a document up to ${WRITABLE_DEPTH} levels deep, so it plans nothing here` })
  }
  const servers = data['mcpServers'] ?? {}
  if (!isObject(servers)) {
    const at = read.doc.locate(['mcpServers'])
    throw refuse({ file, ...(at ? { line: at.line } : {}), path: 'mcpServers', message: 'expected an object of servers by name' })
  }
  data['mcpServers'] = servers
  return { snapshot: before, data, servers, indent: jsonIndent(text) }
}

/** How deep a document omh rewrites may nest: JSON.stringify runs out of stack some thousands deep. */
const WRITABLE_DEPTH = 1000

/** How many levels of arrays and objects a parsed value nests, counted without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0
  const stack: [unknown, number][] = [[value, 1]]
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [node, depth] = next
    if (node === null || typeof node !== 'object') continue
    deepest = Math.max(deepest, depth)
    for (const child of Object.values(node)) stack.push([child, depth + 1])
  }
  return deepest
}

export type McpChangeKind = 'added' | 'changed' | 'same' | 'removed' | 'conflicting'

/** One line of a plan: what happens to one server, and why when nothing can. */
export interface McpChange {
  readonly name: string
  readonly change: McpChangeKind
  /** The server as it will be (added, changed, same). */
  readonly server?: McpServer
  /** Changed: the fields that differ, by dotted path (`args`, `env.TOKEN`). */
  readonly fields?: readonly string[]
  /** Conflicting: why it is left as it is. */
  readonly reason?: string
}

/** A server entry read with only the keys omh manages; the user's own keys do not make it unreadable. */
function managedServer(name: string, raw: unknown): { server?: McpServer; problem?: string } {
  if (!isObject(raw)) return { problem: 'is not an object' }
  const managed = Object.fromEntries(Object.entries(raw).filter(([k]) => (MANAGED_KEYS as readonly string[]).includes(k)))
  const problems: string[] = []
  const server = serverFrom(name, managed, (p, message) => problems.push(`${p.length ? `${p.join('.')}: ` : ''}${message}`))
  return server ? { server } : { problem: problems[0] ?? 'cannot be read' }
}

const strip = (server: McpServer): McpServer => {
  const { source: _source, ...rest } = server
  return rest as McpServer
}

/** The fields of two servers that differ, as dotted paths; values stay out of it. */
function differences(a: McpServer, b: McpServer): string[] {
  if (a.transport !== b.transport) return ['transport']
  const left = new Map(serverValues(a))
  const right = new Map(serverValues(b))
  const out = new Set<string>()
  for (const key of new Set([...left.keys(), ...right.keys()])) {
    if (left.get(key) !== right.get(key)) out.add(key.startsWith('args[') ? 'args' : key)
  }
  return [...out]
}

/**
 * What putting `incoming` servers into the document would do, one line per
 * server: added, changed (with the fields), same, or conflicting when the
 * entry there cannot be read.
 */
export function planPut(doc: McpDocument, incoming: readonly McpServer[]): McpChange[] {
  return incoming.map((server) => {
    const current = Object.hasOwn(doc.servers, server.name) ? doc.servers[server.name] : undefined
    if (current === undefined) return { name: server.name, change: 'added', server }
    const { server: existing, problem } = managedServer(server.name, current)
    if (!existing) return { name: server.name, change: 'conflicting', reason: `the entry in mcp.json ${problem}; fix or remove it first` }
    if (isDeepStrictEqual(strip(existing), strip(server))) return { name: server.name, change: 'same', server }
    return { name: server.name, change: 'changed', server, fields: differences(existing, server) }
  })
}

/**
 * The document's new text after a plan: added servers appended, changed ones
 * rewritten in place (keeping every key omh does not manage), removed ones
 * deleted. Everything else in the document stays as it was.
 */
export function applyPlan(doc: McpDocument, plan: readonly McpChange[]): string {
  // A name is the user's word: `constructor` is a server like any other, never what every object has.
  const servers: Record<string, unknown> = Object.assign(Object.create(null), doc.servers)
  for (const step of plan) {
    if (step.change === 'removed') delete servers[step.name]
    else if ((step.change === 'added' || step.change === 'changed') && step.server) {
      const previous = isObject(servers[step.name]) ? (servers[step.name] as Record<string, unknown>) : {}
      const kept = Object.fromEntries(Object.entries(previous).filter(([k]) => !(MANAGED_KEYS as readonly string[]).includes(k)))
      servers[step.name] = { ...serverToJson(step.server), ...kept }
    }
  }
  return `${JSON.stringify({ ...doc.data, mcpServers: servers }, null, doc.indent)}\n`
}

/** Whether a plan writes anything. */
export const planWrites = (plan: readonly McpChange[]): boolean => plan.some((s) => s.change === 'added' || s.change === 'changed' || s.change === 'removed')

/**
 * The plan again, for the document as it is now: each step recomputed from
 * what it puts or removes. Conflicting steps stay as they were: nothing of
 * them is written.
 */
function replan(doc: McpDocument, plan: readonly McpChange[]): McpChange[] {
  return plan.map((step) => {
    if (step.change === 'removed') return step.name in doc.servers ? step : { name: step.name, change: 'same' }
    if (step.change === 'conflicting' || !step.server) return step
    return planPut(doc, [step.server])[0]!
  })
}

const sameSteps = (a: readonly McpChange[], b: readonly McpChange[]): boolean =>
  a.length === b.length && a.every((step, n) => step.change === b[n]!.change && isDeepStrictEqual(step.fields ?? [], b[n]!.fields ?? []))

/**
 * Writes a plan, whole or not at all. When the file changed since it was
 * read (by another omh, or by hand), the plan is made again from the file as
 * it is, under its lock: if every step would do the same, it is written over
 * that, so adds that run at once all land; if any step would differ, that
 * step is no longer what was shown and agreed to, and nothing is written
 * (FILE_CHANGED).
 */
export async function writePlan(doc: McpDocument, plan: readonly McpChange[]): Promise<void> {
  await updateFile(doc.snapshot.file, (now) => {
    if (sameBytes(now, doc.snapshot)) return applyPlan(doc, plan)
    let current: McpDocument
    try {
      current = documentOf(now)
    } catch {
      throw OmhError.of(FILE_CHANGED, { args: [doc.snapshot.file] })
    }
    const again = replan(current, plan)
    if (!sameSteps(again, plan)) throw OmhError.of(FILE_CHANGED, { args: [doc.snapshot.file] })
    return applyPlan(current, again)
  })
}
