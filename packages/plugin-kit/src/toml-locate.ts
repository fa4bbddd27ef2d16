export type KeyPath = readonly (string | number)[]

export interface Position {
  readonly line: number
  readonly column: number
}

export const keyOf = (path: KeyPath): string => path.map(String).join('\u0000')

/**
 * How deep an index records where keys are. A key path is copied and joined
 * for each key recorded and each ancestor asked, so a document nested
 * thousands deep took seconds; a key deeper than this is located at its
 * nearest recorded ancestor.
 */
export const LOCATED_DEPTH = 64

/**
 * Answers where a key path (or its nearest written ancestor) is, from an index
 * of key positions built on first use: most documents never need it.
 */
export function locator(build: () => Map<string, Position>): (path: KeyPath) => Position | undefined {
  let index: Map<string, Position> | undefined
  return (path) => {
    index ??= build()
    for (let n = Math.min(path.length, LOCATED_DEPTH); n > 0; n--) {
      const hit = index.get(keyOf(path.slice(0, n)))
      if (hit) return hit
    }
    return undefined
  }
}

/**
 * Where each key path of a TOML document is written. It has no dependency, so
 * a parser can report lines without loading a TOML library a second time.
 */
export const tomlLocator = (source: string): ((path: KeyPath) => Position | undefined) => locator(() => indexKeys(source))

/**
 * Maps every key path written in a TOML document to where it was written.
 * smol-toml has already accepted the syntax, so this scanner can be lenient:
 * it only needs to follow strings, arrays and inline tables well enough to
 * attribute keys to lines.
 */
function indexKeys(source: string): Map<string, Position> {
  const index = new Map<string, Position>()
  const arrayTables = new Map<string, number>()
  let i = 0
  let line = 1
  let lineStart = 0
  let table: (string | number)[] = []

  const here = (): Position => ({ line, column: i - lineStart + 1 })
  const record = (path: KeyPath, at: Position) => {
    const k = keyOf(path)
    if (!index.has(k)) index.set(k, at)
  }
  const newline = () => {
    line++
    lineStart = i + 1
  }
  // The parser accepted the document; where this lenient scan reads nothing it
  // steps over a character, so syntax it does not know ends a scan, never loops it.
  const onward = (before: number) => {
    if (i === before) i++
  }
  const skipInline = () => {
    while (i < source.length && (source[i] === ' ' || source[i] === '\t')) i++
  }
  const skipComment = () => {
    if (source[i] === '#') while (i < source.length && source[i] !== '\n') i++
  }
  const skipBlank = () => {
    for (;;) {
      skipInline()
      skipComment()
      if (source[i] === '\n') {
        newline()
        i++
      } else if (source[i] === '\r') i++
      else return
    }
  }
  const readString = (): string => {
    const quote = source[i]!
    const triple = source.startsWith(quote.repeat(3), i)
    const close = triple ? quote.repeat(3) : quote
    i += close.length
    let out = ''
    while (i < source.length && !source.startsWith(close, i)) {
      const c = source[i]!
      if (c === '\\' && quote === '"') {
        out += source.slice(i, i + 2)
        i += 2
        continue
      }
      if (c === '\n') newline()
      out += c
      i++
    }
    i += close.length
    // Triple-quoted strings may end with up to two extra quotes.
    while (triple && source[i] === quote) i++
    return quote === '"' ? unescapeBasic(out) : out
  }
  const readKey = (): string[] => {
    const parts: string[] = []
    for (;;) {
      skipInline()
      const c = source[i]
      if (c === '"' || c === "'") parts.push(readString())
      else {
        const start = i
        while (i < source.length && /[A-Za-z0-9_-]/.test(source[i]!)) i++
        parts.push(source.slice(start, i))
      }
      skipInline()
      if (source[i] === '.') {
        i++
        continue
      }
      return parts
    }
  }
  const resolveHeader = (keys: string[]): (string | number)[] => {
    const out: (string | number)[] = []
    for (const k of keys) {
      out.push(k)
      const n = arrayTables.get(keyOf(out))
      if (n !== undefined) out.push(n)
    }
    return out
  }
  const readValue = (path: KeyPath) => {
    skipInline()
    const c = source[i]
    if (c === '"' || c === "'") {
      readString()
    } else if (c === '[') {
      i++
      let n = 0
      for (;;) {
        skipBlank()
        if (source[i] === ']' || i >= source.length) {
          i++
          return
        }
        const before = i
        record([...path, n], here())
        readValue([...path, n])
        skipBlank()
        if (source[i] === ',') {
          i++
          n++
        }
        onward(before)
      }
    } else if (c === '{') {
      i++
      for (;;) {
        // TOML 1.1 lets an inline table span lines and hold comments.
        skipBlank()
        if (source[i] === '}' || i >= source.length) {
          i++
          return
        }
        const before = i
        const at = here()
        const keys = readKey()
        record([...path, ...keys], at)
        if (source[i] === '=') i++
        readValue([...path, ...keys])
        skipBlank()
        if (source[i] === ',') i++
        onward(before)
      }
    } else {
      while (i < source.length && !/[,\]}\n#]/.test(source[i]!)) i++
    }
  }

  while (i < source.length) {
    skipBlank()
    if (i >= source.length) break
    const before = i
    const at = here()
    if (source[i] === '[') {
      const isArray = source[i + 1] === '['
      i += isArray ? 2 : 1
      const keys = readKey()
      i += isArray ? 2 : 1
      if (isArray) {
        const parent = resolveHeader(keys.slice(0, -1))
        const base = [...parent, keys[keys.length - 1]!]
        const n = (arrayTables.get(keyOf(base)) ?? -1) + 1
        arrayTables.set(keyOf(base), n)
        table = [...base, n]
        record(base, at)
      } else {
        table = resolveHeader(keys)
      }
      record(table, at)
    } else {
      const keys = readKey()
      record([...table, ...keys], at)
      skipInline()
      if (source[i] === '=') i++
      readValue([...table, ...keys])
    }
    skipInline()
    skipComment()
    onward(before)
  }
  return index
}

function unescapeBasic(raw: string): string {
  return raw.replace(/\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)/g, (_, e: string) => {
    if (e[0] === 'u' || e[0] === 'U') return String.fromCodePoint(Number.parseInt(e.slice(1), 16))
    return ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' } as Record<string, string>)[e] ?? e
  })
}
