import type { Problem } from '@omh/plugin-api'

/** A markdown file split into its YAML frontmatter and its body. */
export interface Markdown {
  /** The frontmatter mapping; undefined when the file has none. */
  readonly frontmatter: Readonly<Record<string, unknown>> | undefined
  readonly body: string
  /** 1-based line of each top-level frontmatter key, for problems. */
  readonly lines: Readonly<Record<string, number>>
}

export type MarkdownRead = { readonly ok: true; readonly value: Markdown } | { readonly ok: false; readonly problem: Problem }

const OPEN = /^---[ \t]*\r?\n/
const CLOSE = /^---[ \t]*$/m

type Yaml = typeof import('js-yaml')
let yaml: Yaml | undefined

/** Loads the YAML parser once, on the first file that has frontmatter: most commands never need it. */
export async function loadYaml(): Promise<Yaml> {
  yaml ??= await import('js-yaml')
  return yaml
}

/**
 * Splits `---` frontmatter from a markdown body and parses it as YAML (core
 * schema: dates and `yes` stay strings). A file without frontmatter is not an
 * error here; the caller decides whether it needs one.
 */
export async function readMarkdown(source: string, file: string): Promise<MarkdownRead> {
  const text = source.startsWith('\uFEFF') ? source.slice(1) : source
  const open = OPEN.exec(text)
  if (!open) return { ok: true, value: { frontmatter: undefined, body: text, lines: {} } }
  const rest = text.slice(open[0].length)
  const close = CLOSE.exec(rest)
  if (!close) {
    return { ok: false, problem: { file, line: 1, message: 'the frontmatter opened by `---` is never closed by another `---` line' } }
  }
  const raw = rest.slice(0, close.index)
  const body = rest.slice(close.index + close[0].length).replace(/^\r?\n/, '')
  if (!raw.trim()) return { ok: true, value: { frontmatter: {}, body, lines: {} } }
  const simple = plainMapping(raw)
  if (simple) return { ok: true, value: { frontmatter: simple.data, body, lines: simple.lines } }
  const { load, YAMLException } = await loadYaml()
  let data: unknown
  try {
    data = load(raw, { filename: file })
  } catch (error) {
    if (!(error instanceof YAMLException)) throw error
    const line = error.mark ? error.mark.line + 2 : 1
    return { ok: false, problem: { file, line, message: `the frontmatter is not valid YAML: ${error.reason}` } }
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return { ok: false, problem: { file, line: 2, message: 'the frontmatter must be a mapping of keys to values' } }
  }
  const lines: Record<string, number> = Object.create(null)
  raw.split('\n').forEach((l, n) => {
    const m = /^([A-Za-z0-9_-]+)\s*:/.exec(l)
    if (m && !(m[1]! in lines)) lines[m[1]!] = n + 2
  })
  return { ok: true, value: { frontmatter: data as Record<string, unknown>, body, lines } }
}

const PLAIN_LINE = /^([A-Za-z_][A-Za-z0-9_-]*):[ \t]+(\S(?:.*\S)?)[ \t]*$/
// Words YAML's core schema reads as booleans or null, in any case.
const NOT_A_STRING = /^(?:true|false|yes|no|on|off|null|~)$/i

/**
 * Most frontmatter is `key: words` on every line. Read that directly, exactly
 * as YAML would (a string), and leave anything else to the YAML parser: a
 * catalogue of hundreds of skills is resolved on every launch.
 */
function plainMapping(raw: string): { data: Record<string, string>; lines: Record<string, number> } | undefined {
  // Keys are the user's words: `constructor` is a key like any other, never what every object has.
  const data: Record<string, string> = Object.create(null)
  const lines: Record<string, number> = Object.create(null)
  const all = raw.split('\n')
  for (let n = 0; n < all.length; n++) {
    const line = all[n]!.replace(/\r$/, '')
    if (!line.trim()) continue
    const m = PLAIN_LINE.exec(line)
    if (!m) return undefined
    const [, key, value] = m as unknown as [string, string, string]
    // Anything YAML could read as more than plain words: quotes, flow collections, anchors,
    // tags, block scalars, numbers, comments, nested `key: value`.
    if (/^[-?:,[\]{}#&*!|>'"%@`.+\d]/.test(value) || /:\s|:$|\s#/.test(value) || NOT_A_STRING.test(value)) return undefined
    if (key in data) return undefined
    data[key] = value
    lines[key] = n + 2
  }
  return { data, lines }
}
