import { OmhError, SETTINGS_UNEDITABLE } from '@omh/plugin-api'
import { tomlString } from '@omh/plugin-kit'
import { parseToml } from '@omh/plugin-kit/toml'

/**
 * The settings text with `plugins` set to what `change` makes of it, every
 * other byte kept: comments and the order of keys are the user's. The
 * result is parsed again and must differ from the original in `plugins`
 * alone; anything else (a dotted `plugins.x`, a value omh cannot read back)
 * is SETTINGS_UNEDITABLE, so a file is never rewritten into something its
 * owner did not write.
 */
export function withPlugins(text: string, file: string, change: (current: readonly string[]) => string[]): string {
  const doc = parseToml(text, file)
  const current = doc.data['plugins'] ?? []
  const refuse = (why: string, want: readonly string[]) =>
    OmhError.of(SETTINGS_UNEDITABLE, { args: [file, why], hintArgs: [`plugins = ${list(want)}`] })
  if (!Array.isArray(current) || current.some((p) => typeof p !== 'string')) {
    throw refuse('`plugins` is not a list of strings', [])
  }
  const next = change(current as string[])
  const assignment = `plugins = ${list(next)}`
  let out: string
  if (doc.data['plugins'] === undefined) {
    if (!next.length) return text
    // A top-level key must come before the first table; the top is always before it, below a
    // `#:schema` directive, which editors read on the first line only.
    const top = SCHEMA_DIRECTIVE.test(text) ? text.indexOf('\n') + 1 || text.length : 0
    const head = text.slice(0, top)
    out = `${head}${head && !head.endsWith('\n') ? '\n' : ''}${assignment}\n${text.slice(top)}`
  } else {
    const at = doc.locate(['plugins'])
    const start = at ? lineStart(text, at.line) : -1
    const end = start < 0 ? -1 : arrayEnd(text, start)
    if (end < 0) throw refuse('its `plugins` is not written as `plugins = [ … ]` on a line of its own', next)
    // The last plugin gone, the key goes too, with the rest of its line.
    out = next.length ? text.slice(0, start) + assignment + text.slice(end) : text.slice(0, start) + text.slice(lineEnd(text, end))
  }
  const expected = next.length ? { ...doc.data, plugins: next } : Object.fromEntries(Object.entries(doc.data).filter(([key]) => key !== 'plugins'))
  if (!readsAs(out, file, expected)) throw refuse('the edit would change more than `plugins`', next)
  return out
}

/** Whether edited text parses to exactly `expected`: the check that an edit changed only what it meant to. */
function readsAs(out: string, file: string, expected: unknown): boolean {
  try {
    return canonical(parseToml(out, file).data) === canonical(expected)
  } catch {
    return false
  }
}

/** A parsed document as text that does not depend on the order of its keys. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  )

const list = (items: readonly string[]): string =>
  items.length < 2 ? `[${items.map(tomlString).join('')}]` : `[\n${items.map((i) => `  ${tomlString(i)},\n`).join('')}]`

const SCHEMA_DIRECTIVE = /^#:schema\b/

/** Just past the end of the line `at` is on: after its line break, or the end of the text. */
function lineEnd(text: string, at: number): number {
  const end = text.indexOf('\n', at)
  return end < 0 ? text.length : end + 1
}

function lineStart(text: string, line: number): number {
  let at = 0
  for (let n = 1; n < line; n++) {
    at = text.indexOf('\n', at) + 1
    if (at === 0) return -1
  }
  return at
}

/**
 * Where `plugins = [ … ]` starting at `from` ends (just after its `]`), read
 * past strings and comments; -1 when the line is not that shape.
 */
function arrayEnd(text: string, from: number, key = 'plugins'): number {
  const head = new RegExp(`^[ \\t]*(?:${key}|"${key}"|'${key}')[ \\t]*=[ \\t]*\\[`).exec(text.slice(from))
  if (!head) return -1
  let depth = 1
  for (let i = from + head[0].length; i < text.length; i++) {
    const c = text[i]
    if (c === '#') i = text.indexOf('\n', i) < 0 ? text.length : text.indexOf('\n', i)
    else if (c === '"' || c === "'") {
      const quote = text.startsWith(c.repeat(3), i) ? c.repeat(3) : c
      let j = i + quote.length
      while (j < text.length && !text.startsWith(quote, j)) j += c === '"' && text[j] === '\\' ? 2 : 1
      i = j + quote.length - 1
    } else if (c === '[') depth++
    else if (c === ']' && --depth === 0) return i + 1
  }
  return -1
}

/**
 * The settings text with `[network] allow` holding `hosts` too, every other byte kept, checked as
 * `withPlugins` checks its edit: the list on its own line in a `[network]` table is rewritten; a
 * table without it gets the line below its header; a file without the table gets the table at its
 * end. Any other way of writing it (dotted, inline) is SETTINGS_UNEDITABLE.
 */
export function withAllowedHosts(text: string, file: string, hosts: readonly string[]): string {
  const doc = parseToml(text, file)
  const network = doc.data['network']
  const current = (network as { allow?: unknown } | undefined)?.allow ?? []
  const refuse = (why: string, want: readonly string[]) =>
    OmhError.of(SETTINGS_UNEDITABLE, { args: [file, why], hintArgs: [`[network] allow = ${list(want).replace(/\n/g, ' ')}`] })
  if (network !== undefined && (typeof network !== 'object' || Array.isArray(network))) throw refuse('`network` is not a table', hosts)
  if (!Array.isArray(current) || current.some((h) => typeof h !== 'string')) throw refuse('`[network] allow` is not a list of strings', hosts)
  const next = [...current as string[], ...hosts.filter((h) => !(current as string[]).includes(h))]
  if (next.length === current.length) return text
  const assignment = `allow = ${list(next)}`
  let out: string
  const header = /^\[[ \t]*network[ \t]*\][ \t]*(?:#.*)?$/m.exec(text)
  if ((network as { allow?: unknown } | undefined)?.allow !== undefined) {
    const at = doc.locate(['network', 'allow'])
    const start = at ? lineStart(text, at.line) : -1
    const end = start < 0 ? -1 : arrayEnd(text, start, 'allow')
    if (end < 0) throw refuse('its `allow` is not written as `allow = [ … ]` on a line of its own', next)
    out = text.slice(0, start) + assignment + text.slice(end)
  } else if (header) {
    const after = lineEnd(text, header.index)
    out = `${text.slice(0, after)}${after === text.length && !text.endsWith('\n') ? '\n' : ''}${assignment}\n${text.slice(after)}`
  } else {
    out = `${text}${text && !text.endsWith('\n') ? '\n' : ''}${text ? '\n' : ''}[network]\n${assignment}\n`
  }
  const expected = { ...doc.data, network: { ...(network as object | undefined), allow: next } }
  if (!readsAs(out, file, expected)) throw refuse('the edit would change more than `[network] allow`', next)
  return out
}
