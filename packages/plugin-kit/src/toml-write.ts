/** A value a TOML document can hold. */
export type TomlValue = string | number | boolean | readonly TomlValue[] | { readonly [key: string]: TomlValue }

const isTable = (v: unknown): v is Record<string, TomlValue> => v !== null && typeof v === 'object' && !Array.isArray(v)
const isTableArray = (v: unknown): v is readonly Record<string, TomlValue>[] =>
  Array.isArray(v) && v.length > 0 && v.every(isTable)

/** A key as TOML writes it: bare when it can be, quoted otherwise (never multi-line: a key cannot be). */
export const tomlKey = (key: string): string => (/^[A-Za-z0-9_-]+$/.test(key) ? key : basic(key))

// eslint-disable-next-line no-control-regex -- control characters are exactly what must be escaped
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g
const escapeControl = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`

/**
 * A string as TOML writes it. Text with line breaks becomes a multi-line
 * basic string, so prompts stay readable; everything else a basic string.
 */
export function tomlString(text: string): string {
  if (!text.includes('\n')) return basic(text)
  const body = text
    .replace(/\\/g, '\\\\')
    .replace(/\r/g, '\\r')
    .replace(CONTROL, escapeControl)
    // A run of three quotes would close the string; a quote at the very end would merge with the closing ones.
    .replace(/"(?="")/g, '\\"')
    .replace(/"$/, '\\"')
  return `"""\n${body}"""`
}

function basic(text: string): string {
  const escaped = text
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/\t/g, '\\t')
    .replace(/\n/g, '\\n')
    .replace(/\r/g, '\\r')
    .replace(CONTROL, escapeControl)
  return `"${escaped}"`
}

function inline(value: TomlValue): string {
  if (typeof value === 'string') return tomlString(value)
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`TOML cannot hold the number ${value}`)
    return String(value)
  }
  if (typeof value === 'boolean') return String(value)
  if (Array.isArray(value)) return `[${value.map(inline).join(', ')}]`
  const entries = Object.entries(value as Record<string, TomlValue>)
  return entries.length ? `{ ${entries.map(([k, v]) => `${tomlKey(k)} = ${inline(v)}`).join(', ')} }` : '{}'
}

/**
 * Writes a document as TOML: each table's plain keys first, then its
 * sub-tables as `[a.b]` headers and arrays of tables as `[[a.b]]`, in the
 * order the object holds them. Deterministic, so staging the same document
 * twice writes the same bytes.
 */
export function stringifyToml(doc: Readonly<Record<string, TomlValue>>): string {
  const out: string[] = []
  const table = (obj: Readonly<Record<string, TomlValue>>, path: readonly string[], header: string | undefined) => {
    const plain = Object.entries(obj).filter(([, v]) => !isTable(v) && !isTableArray(v))
    const nested = Object.entries(obj).filter(([, v]) => isTable(v) || isTableArray(v))
    // A table that only holds sub-tables needs no header of its own.
    if (header && (plain.length || !nested.length)) out.push(header)
    for (const [k, v] of plain) out.push(`${tomlKey(k)} = ${inline(v)}`)
    if (header && (plain.length || !nested.length)) out.push('')
    else if (!header && plain.length) out.push('')
    for (const [k, v] of nested) {
      const sub = [...path, k]
      const name = sub.map(tomlKey).join('.')
      if (isTable(v)) table(v, sub, `[${name}]`)
      else for (const element of v as readonly Record<string, TomlValue>[]) table(element, sub, `[[${name}]]`)
    }
  }
  table(doc, [], undefined)
  while (out.at(-1) === '') out.pop()
  return out.length ? `${out.join('\n')}\n` : ''
}
