/**
 * The hooks document Claude Code reads in its settings and Codex in its hooks.json: harness event
 * name → matcher groups, one shell command per group. Written from omh's hooks and read back into
 * them, for any renderer whose harness reads this shape.
 */
import { MOMENTS, TOOL_WORDS, type Binding, type DroppedItem, type Hook, type Moment, type ParseContext, type ParseDocument, type ParseResult, type ToolWord } from '@omh/plugin-api'
import { hookCommand, readHookCommand } from './hook-command.js'
import { unexpressible } from './hook-text.js'
import { readJson } from './json.js'

/** One matcher group of a hooks document: which tools it narrows to, and its handlers. */
export interface MatcherGroup {
  matcher?: string
  hooks: { type: 'command'; command: string }[]
}

/** The `hooks` object: harness event name → matcher groups. */
export type HooksDocument = Record<string, MatcherGroup[]>

/** A hook as written into the document, and where: trust records are keyed by position. */
export interface PlacedHook {
  readonly hook: Hook
  readonly event: string
  readonly group: number
  readonly entry: MatcherGroup
}

export interface HooksTranslation {
  readonly document: HooksDocument
  readonly placed: readonly PlacedHook[]
  readonly dropped: readonly DroppedItem[]
}

/**
 * The hooks a harness can express, one matcher group each, events in omh's
 * moment order and hooks in selection order within an event. Every other hook
 * is dropped by name with the reason.
 */
export function translateHooks(hooks: readonly Hook[], binding: Binding, tools: Readonly<Partial<Record<ToolWord, string>>>): HooksTranslation {
  const document: HooksDocument = {}
  const placed: PlacedHook[] = []
  const dropped: DroppedItem[] = []
  const ordered = MOMENTS.flatMap((moment) => hooks.filter((h) => h.on === moment))
  for (const hook of ordered) {
    const reason = unexpressible(hook, binding, tools)
    if (reason) {
      dropped.push({ capability: 'hooks', name: hook.name, reason })
      continue
    }
    const event = binding.events![hook.on]!
    const entry = matcherGroup(hook, binding, tools, event)
    const groups = (document[event] ??= [])
    placed.push({ hook, event, group: groups.length, entry })
    groups.push(entry)
  }
  // Drops are reported in selection order, as the user listed the hooks.
  dropped.sort((a, b) => hooks.findIndex((h) => h.name === a.name) - hooks.findIndex((h) => h.name === b.name))
  return { document, placed, dropped }
}

function matcherGroup(hook: Hook, binding: Binding, tools: Readonly<Partial<Record<ToolWord, string>>>, event: string): MatcherGroup {
  return {
    ...(hook.tools ? { matcher: hook.tools.map((t) => tools[t]!).join('|') } : {}),
    hooks: [{ type: 'command', command: hookCommand(hook, binding, event) }],
  }
}

/** An entry of a hooks document that omh did not read back, and why. */
export interface LeftInDocument {
  readonly name: string
  readonly reason: string
}

/**
 * Reads a hooks document back into hooks: the inverse of `translateHooks` for every
 * entry omh wrote. An entry is taken only when rendering what was read gives
 * the entry back byte for byte; anything else is left, with the reason, never
 * imported half-way.
 */
export function readHooksDocument(
  hooks: unknown,
  binding: Binding,
  tools: Readonly<Partial<Record<ToolWord, string>>>,
  source: string,
): { hooks: Hook[]; left: LeftInDocument[] } {
  const out: Hook[] = []
  const left: LeftInDocument[] = []
  if (hooks === undefined) return { hooks: out, left }
  if (!isRecord(hooks)) return { hooks: out, left: [{ name: 'hooks', reason: 'is not an object of events' }] }
  const moments = new Map<string, Moment[]>()
  for (const moment of MOMENTS) {
    const event = binding.events?.[moment]
    if (event) moments.set(event, [...(moments.get(event) ?? []), moment])
  }
  for (const [event, groups] of Object.entries(hooks)) {
    const candidates = moments.get(event) ?? []
    if (!Array.isArray(groups)) {
      left.push({ name: event, reason: 'is not a list of matcher groups' })
      continue
    }
    groups.forEach((group: unknown, g) => {
      const where = `${event}[${g}]`
      if (candidates.length !== 1) {
        left.push({ name: where, reason: candidates.length ? `this adapter maps ${candidates.map((m) => `\`${m}\``).join(' and ')} to ${event}, so it cannot be read back as either` : `no omh moment is ${event}` })
        return
      }
      const on = candidates[0]!
      const hook = readGroup(group, on, event, binding, tools, source)
      if (typeof hook === 'string') left.push({ name: where, reason: hook })
      else if (out.some((h) => h.name === hook.name)) left.push({ name: where, reason: `a hook named \`${hook.name}\` was read already` })
      else out.push(hook)
    })
  }
  return { hooks: out, left }
}

function readGroup(
  group: unknown,
  on: Moment,
  event: string,
  binding: Binding,
  tools: Readonly<Partial<Record<ToolWord, string>>>,
  source: string,
): Hook | string {
  if (!isRecord(group) || !Array.isArray(group['hooks']) || group['hooks'].length !== 1) {
    return 'not a group omh writes: one handler per group'
  }
  const handler = group['hooks'][0] as unknown
  if (!isRecord(handler) || handler['type'] !== 'command' || typeof handler['command'] !== 'string' || Object.keys(handler).length !== 2) {
    return 'not a handler omh writes: exactly `type: "command"` and `command`'
  }
  const matcher = group['matcher']
  const narrowed = matcher === undefined ? undefined : typeof matcher === 'string' ? readMatcher(matcher, tools) : null
  if (narrowed === null) return `its matcher ${JSON.stringify(matcher)} is not a list of tools omh knows`
  const parts = readHookCommand(handler['command'], binding, event)
  if (!parts) return 'its command was not written by omh, so what its output means is the harness\'s own protocol; omh does not guess'
  const hook: Hook = {
    name: parts.name,
    on,
    ...(narrowed ? { tools: narrowed } : {}),
    ...(parts.when !== undefined ? { when: parts.when } : {}),
    action: parts.action,
    fields: parts.fields,
    source,
  }
  const again = matcherGroup(hook, binding, tools, event)
  if (JSON.stringify(again) !== JSON.stringify(group)) return 'it was changed after omh wrote it'
  return hook
}

/** Splits `Edit|Write|MultiEdit|Bash` into omh tool words, longest spelling first at each step. */
function readMatcher(matcher: string, tools: Readonly<Partial<Record<ToolWord, string>>>): ToolWord[] | null {
  const spellings = TOOL_WORDS.flatMap((word) => (tools[word] ? [{ word, spelling: tools[word] }] : [])).sort(
    (a, b) => b.spelling.length - a.spelling.length,
  )
  const words: ToolWord[] = []
  for (let i = 0; i < matcher.length; ) {
    const hit = spellings.find((s) => matcher.startsWith(s.spelling, i) && (i + s.spelling.length === matcher.length || matcher[i + s.spelling.length] === '|'))
    if (!hit) return null
    words.push(hit.word)
    i += hit.spelling.length + 1
  }
  return words.length ? words : null
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * `parse` for a renderer whose harness reads this shape: each document one JSON object whose
 * `hooks` are read back (`readHooksDocument`), every other key left to the harness but those in
 * `managed`, which the renderer writes itself for other capabilities. `atRoot`: the document is
 * the hooks object itself, its keys the events.
 */
export function parseHooksDocuments(documents: readonly ParseDocument[], context: ParseContext, managed: ReadonlySet<string> = new Set(), atRoot = false): ParseResult {
  const hooks: Hook[] = []
  const left: { name: string; reason: string }[] = []
  for (const doc of documents) {
    const parsed = readJson(doc.content, doc.file)
    if (!parsed.ok) return { ok: false, problems: [parsed.problem] }
    const data = parsed.doc.data
    if (!isRecord(data)) return { ok: false, problems: [{ file: doc.file, message: 'a hooks document is one JSON object' }] }
    const read = readHooksDocument(atRoot ? data : data['hooks'], context.binding, context.adapter.tools, doc.file)
    hooks.push(...read.hooks)
    left.push(...read.left.map((l) => ({ name: atRoot ? l.name : `hooks.${l.name}`, reason: l.reason })))
    if (atRoot) continue
    for (const key of Object.keys(data)) {
      if (key !== 'hooks' && !managed.has(key)) left.push({ name: key, reason: 'not a hook; omh leaves the rest of this file to the harness' })
    }
  }
  return { ok: true, items: { hooks }, left }
}
