import { keyOf, locator, type KeyPath, type Position } from './toml.js'

/** A parsed JSON file that can say where each of its keys was written. */
export interface JsonDocument {
  readonly file: string
  readonly data: unknown
  /** Where the key at `path` (or its nearest written ancestor) is written. */
  locate(path: KeyPath): Position | undefined
}

/** Why a JSON text did not parse, and where, when the engine says. */
export interface JsonSyntaxError {
  readonly message: string
  readonly line?: number
  readonly column?: number
}

/** Parses JSON; a syntax error is a value carrying the engine's words, line and column. */
export function parseJson(source: string, file: string): { ok: true; doc: JsonDocument } | { ok: false; error: JsonSyntaxError } {
  let data: unknown
  try {
    data = JSON.parse(source)
  } catch (error) {
    const text = (error as Error).message
    const at = /\(line (\d+) column (\d+)\)/.exec(text)
    const message = text.replace(/ in JSON at position \d+.*$/s, '').replace(/^Unexpected end of JSON input$/, 'the text ends before the JSON does')
    return { ok: false, error: { message, ...(at ? { line: Number(at[1]), column: Number(at[2]) } : {}) } }
  }
  return { ok: true, doc: { file, data, locate: locator(() => indexKeys(source)) } }
}

/**
 * Maps every key path of a JSON document that already parsed to where its key
 * (or, for array elements, its value) starts. Lenient by design: JSON.parse
 * has accepted the text.
 */
function indexKeys(source: string): Map<string, Position> {
  const index = new Map<string, Position>()
  let i = 0
  let line = 1
  let lineStart = 0
  const here = (): Position => ({ line, column: i - lineStart + 1 })
  const blank = () => {
    while (i < source.length && /\s/.test(source[i]!)) {
      if (source[i] === '\n') {
        line++
        lineStart = i + 1
      }
      i++
    }
  }
  const string = (): string => {
    const start = i
    i++
    while (i < source.length && source[i] !== '"') i += source[i] === '\\' ? 2 : 1
    i++
    return JSON.parse(source.slice(start, i)) as string
  }
  const value = (path: (string | number)[]) => {
    blank()
    const c = source[i]
    if (c === '{') {
      i++
      for (;;) {
        blank()
        if (source[i] === '}' || i >= source.length) return void i++
        if (source[i] === ',') {
          i++
          continue
        }
        const at = here()
        const key = string()
        const k = keyOf([...path, key])
        if (!index.has(k)) index.set(k, at)
        blank()
        i++ // the colon
        value([...path, key])
      }
    } else if (c === '[') {
      i++
      for (let n = 0; ; ) {
        blank()
        if (source[i] === ']' || i >= source.length) return void i++
        if (source[i] === ',') {
          i++
          n++
          continue
        }
        index.set(keyOf([...path, n]), here())
        value([...path, n])
      }
    } else if (c === '"') {
      string()
    } else {
      while (i < source.length && !/[\s,\]}]/.test(source[i]!)) i++
    }
  }
  value([])
  return index
}
