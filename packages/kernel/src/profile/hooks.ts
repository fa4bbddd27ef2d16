import path from 'node:path'
import * as z from 'zod/mini'
import { HOOK_INVALID, OmhError, MOMENTS, TOOL_WORDS, type Problem, type Hook, type HookAction } from '@omh/plugin-api'
import { byText, fieldsMentioned, FIELD_VARIABLE, parseHookText, TOOL_MOMENTS, dotted, problemsFromIssues, readJson, type KeyPath } from '@omh/plugin-kit'
import type { ReadBounds } from '../safe-read.js'
import { readTextFile } from '../user-files.js'
import { namesIn } from './catalogue.js'

/**
 * A hook file, `<name>.json`: a moment, optionally the tools and a shell
 * predicate that narrow it, and exactly one action. Unknown keys are refused.
 */
export const hookFileSchema = z.strictObject({
  /** Names the file's JSON Schema, for editors; omh reads nothing from it. */
  $schema: z.optional(z.string()),
  /** The moment the hook fires at. */
  on: z.enum(MOMENTS),
  /** Narrows a tool moment to these tools; absent means every tool. */
  tools: z.optional(z.array(z.enum(TOOL_WORDS))),
  /** A shell predicate; a non-zero exit keeps the hook silent. */
  when: z.optional(z.string()),
  /** A shell command to run; its output is ignored and it never blocks. */
  run: z.optional(z.string()),
  /** Advisory text for the agent; the call proceeds. */
  inject: z.optional(z.string()),
  /** Blocks the call with this reason; `before-tool` only. */
  refuse: z.optional(z.string()),
  /** A harness that cannot express this hook must not start without it. */
  required: z.optional(z.boolean()),
})

export type HookFile = z.infer<typeof hookFileSchema>

const ACTIONS = ['run', 'inject', 'refuse'] as const
// A file name becomes the hook's name in commands, plugins and drop reports.
const HOOK_NAME = /^[a-z0-9][a-z0-9._-]*$/

export interface HookSources {
  readonly omhHome: string
  /** The project whose `.omh/hooks` shadow the catalogue's: the session's worktree, or the checkout. */
  readonly projectDir?: string
  /** The most bytes read from one hook file; absent: DEFAULT_FILE_BYTES. */
  readonly fileBytes?: number | undefined
  /** `[use] hooks`: absent or `["*"]` selects every hook, a list selects those names in its order. */
  readonly allow?: readonly string[]
}

/** Where a hook file was found; a project file shadows a catalogue file of the same name. */
export interface HookSource {
  readonly name: string
  readonly file: string
  readonly origin: 'catalogue' | 'project'
  /** The catalogue file this one shadows. */
  readonly shadows?: string
}

/**
 * Every hook file omh would consider, by name, project files shadowing
 * catalogue ones; and a notice for each file left out.
 */
export async function findHooks(sources: Pick<HookSources, 'omhHome' | 'projectDir'>): Promise<{ hooks: HookSource[]; notices: string[] }> {
  const byName = new Map<string, HookSource>()
  const notices: string[] = []
  const dirs: [HookSource['origin'], string][] = [['catalogue', path.join(sources.omhHome, 'hooks')]]
  if (sources.projectDir) dirs.push(['project', path.join(sources.projectDir, '.omh', 'hooks')] as const)
  for (const [origin, dir] of dirs) {
    const names = await namesIn(dir, origin === 'project' ? { within: sources.projectDir } : {})
    notices.push(...names.notices)
    for (const { name: entry } of names.entries.filter((e) => e.name.endsWith('.json'))) {
      const name = entry.slice(0, -'.json'.length)
      const shadowed = byName.get(name)
      byName.set(name, { name, file: path.join(dir, entry), origin, ...(shadowed ? { shadows: shadowed.file } : {}) })
    }
  }
  return { hooks: [...byName.values()].sort((a, b) => byText(a.name, b.name)), notices }
}

/**
 * The selected hooks, parsed and checked. Files `[use]` does not select are
 * not read. Every problem of every selected file is reported at once, as
 * HOOK_INVALID.
 */
export async function resolveHooks(sources: HookSources): Promise<Hook[]> {
  const { hooks: found } = await findHooks(sources)
  const byName = new Map(found.map((s) => [s.name, s]))
  const allow = sources.allow
  const selected = !allow || allow[0] === '*' ? found : allow.flatMap((n) => byName.get(n) ?? [])
  const hooks: Hook[] = []
  const problems: Problem[] = []
  const bad = new Set<string>()
  for (const source of selected) {
    const read = readTextFile(source.file, hookBounds(sources, source))
    const parsed: HookParse = read && !read.ok ? { ok: false, problems: [read.problem] } : parseHookFile(source.name, source.file, read?.text ?? '')
    if (parsed.ok) hooks.push(parsed.hook)
    else {
      problems.push(...parsed.problems)
      bad.add(source.file)
    }
  }
  if (problems.length) throw OmhError.of(HOOK_INVALID, { args: [[...bad], problems.length], problems })
  return hooks
}

export type HookParse = { readonly ok: true; readonly hook: Hook } | { readonly ok: false; readonly problems: readonly Problem[] }

/** Parses one hook file's text. Pure: `file` only labels problems and becomes the hook's `source`. */
export function parseHookFile(name: string, file: string, source: string): HookParse {
  const problems: Problem[] = []
  if (!HOOK_NAME.test(name)) {
    problems.push({ file, message: `"${name}" cannot name a hook: the file name is the hook's name, in lowercase letters, digits, \`.\`, \`_\` and \`-\`` })
  }
  const json = readJson(source, file)
  if (!json.ok) {
    problems.push(json.problem)
    return { ok: false, problems }
  }
  const { doc } = json
  const at = (p: KeyPath, message: string): Problem => {
    const where = doc.locate(p)
    return { file, ...(where ? { line: where.line, column: where.column } : {}), ...(p.length ? { path: dotted(p) } : {}), message }
  }
  if (doc.data === null || typeof doc.data !== 'object' || Array.isArray(doc.data)) {
    problems.push(at([], 'a hook file holds one JSON object: `on`, optional `tools` and `when`, and one of `run`, `inject`, `refuse`'))
    return { ok: false, problems }
  }
  const raw = doc.data as Record<string, unknown>
  const parsed = hookFileSchema.safeParse(raw)
  if (!parsed.success) {
    problems.push(...problemsFromIssues(parsed.error.issues, { file, data: raw, schema: hookFileSchema, locate: doc.locate }))
  }
  // The rules below read the fields that did parse, so one file reports everything at once.
  const actions = ACTIONS.filter((a) => typeof raw[a] === 'string')
  if (!ACTIONS.some((a) => a in raw)) problems.push(at([], 'a hook does nothing without `run`, `inject` or `refuse`'))
  if (actions.length > 1) {
    problems.push(
      at(
        [actions[1]!],
        `a hook does one thing: \`run\` a command, \`inject\` advice or \`refuse\` the call; this one has ${actions.map((a) => `\`${a}\``).join(' and ')}, so split it into ${actions.length} files`,
      ),
    )
  }
  for (const key of ['when', ...ACTIONS] as const) {
    const value = raw[key]
    if (typeof value !== 'string') continue
    if (!value.trim()) {
      problems.push(at([key], key === 'when' ? '`when` is empty; leave it out to fire every time' : `\`${key}\` is empty, so this hook does nothing`))
    } else if (value.includes('\0')) {
      problems.push(at([key], 'holds a NUL character, which no shell or harness passes on'))
    }
  }
  const on = typeof raw['on'] === 'string' && (MOMENTS as readonly string[]).includes(raw['on']) ? (raw['on'] as Hook['on']) : undefined
  if (typeof raw['refuse'] === 'string' && on && on !== 'before-tool') {
    problems.push(at(['refuse'], `\`refuse\` blocks a call, so it belongs to \`before-tool\`; this hook is on \`${on}\`, where there is no call to block`))
  }
  const tools = Array.isArray(raw['tools']) ? (raw['tools'] as unknown[]) : undefined
  if (tools && on && !TOOL_MOMENTS.includes(on)) {
    problems.push(at(['tools'], `\`tools\` narrows a tool call, and \`${on}\` has none; leave it out`))
  } else if (tools && tools.length === 0) {
    problems.push(at(['tools'], '`tools` is empty; leave it out to mean every tool'))
  } else if (tools) {
    tools.forEach((t, n) => {
      if (tools.indexOf(t) !== n) problems.push(at(['tools', n], `\`${String(t)}\` is listed twice`))
    })
  }
  for (const key of ['inject', 'refuse'] as const) {
    const text = raw[key]
    if (typeof text !== 'string' || !text.trim()) continue
    const checked = parseHookText(text)
    if (!checked.ok) problems.push(at([key], checked.problem))
  }
  const texts = { when: raw['when'], run: raw['run'], inject: raw['inject'], refuse: raw['refuse'] }
  if (on && !TOOL_MOMENTS.includes(on)) {
    for (const [key, text] of Object.entries(texts)) {
      if (typeof text !== 'string') continue
      for (const field of fieldsMentioned(text)) {
        problems.push(at([key], `\`$${FIELD_VARIABLE[field]}\` is set only around a tool call, and \`${on}\` has none`))
      }
    }
  }
  if (problems.length || !parsed.success) return { ok: false, problems: sortProblems(problems) }

  const data = parsed.data
  const kind = actions[0]!
  const action: HookAction = kind === 'run' ? { kind, command: data.run! } : { kind, text: data[kind]! }
  const hook: Hook = {
    name,
    on: data.on,
    ...(data.tools ? { tools: data.tools } : {}),
    ...(data.when !== undefined ? { when: data.when } : {}),
    action,
    fields: fieldsMentioned(data.when, data.run, data.inject, data.refuse),
    source: file,
    ...(data.required ? { required: true } : {}),
  }
  return { ok: true, hook }
}

const sortProblems = (problems: Problem[]) =>
  problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0))

/** How a hook file is read: a project's may not lead out of the project. */
export const hookBounds = (sources: Pick<HookSources, 'projectDir' | 'fileBytes'>, hook: HookSource): ReadBounds => ({
  ...(hook.origin === 'project' ? { within: sources.projectDir } : {}),
  maxBytes: sources.fileBytes,
})
