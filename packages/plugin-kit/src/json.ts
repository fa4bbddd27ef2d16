import type { Problem } from '@omh/plugin-api'
import { keyOf, LOCATED_DEPTH, locator, type KeyPath, type Position } from './toml-locate.js'

/** A parsed JSON document that can say where each of its keys was written. */
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
    return { ok: false, error: { message: engineWords(text), ...(at ? { line: Number(at[1]), column: Number(at[2]) } : {}) } }
  }
  return { ok: true, doc: { file, data, locate: locator(() => new Scanner(source).index()) } }
}

/**
 * The engine's message without the text it quotes: V8 repeats up to ten
 * characters of the document, and a document can be a file that holds
 * secrets. An unexpected control character is named by its code point, so
 * it never reaches a terminal.
 */
function engineWords(text: string): string {
  const words = text
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/, (?:\.\.\.)?".*$/s, '')
    .replace(/^Unexpected end of JSON input$/, 'the text ends before the JSON does')
  return words.replace(/^Unexpected token '(.)'$/su, (said, c: string) =>
    /[\p{Cc}\p{Cf}\p{Z}]/u.test(c) ? `Unexpected character U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` : said,
  )
}

export type JsonRead = { readonly ok: true; readonly doc: JsonDocument } | { readonly ok: false; readonly problem: Problem }

/**
 * Parses JSON, and on failure always says where: the engine gives a line for
 * some errors only, so a small scanner finds it for the others.
 */
export function readJson(source: string, file: string): JsonRead {
  const parsed = parseJson(source, file)
  if (parsed.ok) return parsed
  const { message, line, column } = parsed.error
  const at = line ? { line, column: column ?? 1 } : (new Scanner(source).failure() ?? { line: 1, column: 1 })
  return { ok: false, problem: { file, line: at.line, column: at.column, message: `not valid JSON: ${message}` } }
}

/** The indentation a JSON document uses, so a rewrite keeps the user's style. */
export function jsonIndent(source: string): string | number {
  const m = /^\{\s*\n([ \t]+)"/.exec(source)
  return m ? m[1]! : 2
}

class Scanner {
  #i = 0
  #line = 1
  #lineStart = 0
  readonly #index = new Map<string, Position>()

  constructor(readonly source: string) {}

  index(): Map<string, Position> {
    try {
      this.#value([])
    } catch {}
    return this.#index
  }

  /** Where the scan first found something that is not JSON. */
  failure(): Position | undefined {
    try {
      this.#value([])
      this.#blank()
      if (this.#i < this.source.length) return this.#here()
    } catch {
      return this.#here()
    }
    return undefined
  }

  #here(): Position {
    return { line: this.#line, column: this.#i - this.#lineStart + 1 }
  }

  #blank(): void {
    for (;;) {
      const c = this.source[this.#i]
      if (c === '\n') {
        this.#line++
        this.#lineStart = this.#i + 1
      } else if (c !== ' ' && c !== '\t' && c !== '\r') return
      this.#i++
    }
  }

  #fail(): never {
    throw new Error('not JSON')
  }

  #value(path: (string | number)[]): void {
    this.#blank()
    const c = this.source[this.#i]
    if (c === '{') return this.#object(path)
    if (c === '[') return this.#array(path)
    if (c === '"') return void this.#string()
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(this.source.slice(this.#i, this.#i + 64))
    if (!m) this.#fail()
    this.#i += m[0].length
  }

  #object(path: (string | number)[]): void {
    this.#i++
    this.#blank()
    if (this.source[this.#i] === '}') return void this.#i++
    for (;;) {
      this.#blank()
      if (this.source[this.#i] !== '"') this.#fail()
      const at = this.#here()
      const key = this.#string()
      const child = path.length < LOCATED_DEPTH ? [...path, key] : path
      if (child !== path && !this.#index.has(keyOf(child))) this.#index.set(keyOf(child), at)
      this.#blank()
      if (this.source[this.#i] !== ':') this.#fail()
      this.#i++
      this.#value(child)
      this.#blank()
      const next = this.source[this.#i++]
      if (next === '}') return
      if (next !== ',') {
        this.#i--
        this.#fail()
      }
    }
  }

  #array(path: (string | number)[]): void {
    this.#i++
    this.#blank()
    if (this.source[this.#i] === ']') return void this.#i++
    for (let n = 0; ; n++) {
      this.#blank()
      const child = path.length < LOCATED_DEPTH ? [...path, n] : path
      if (child !== path) this.#index.set(keyOf(child), this.#here())
      this.#value(child)
      this.#blank()
      const next = this.source[this.#i++]
      if (next === ']') return
      if (next !== ',') {
        this.#i--
        this.#fail()
      }
    }
  }

  #string(): string {
    const start = this.#i
    this.#i++
    for (;;) {
      const c = this.source[this.#i]
      if (c === undefined || c === '\n') this.#fail()
      if (c === '\\') this.#i += 2
      else if (c === '"') break
      else this.#i++
    }
    this.#i++
    return JSON.parse(this.source.slice(start, this.#i)) as string
  }
}

/** A plain object: what JSON and TOML call an object or a table. */
export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A problem reporter for one document: each problem gets the file, the key path and where it is written. */
export function problemsIn(file: string, locate: (path: KeyPath) => Position | undefined) {
  const problems: Problem[] = []
  const report = (path: readonly (string | number)[], message: string, suggestion?: string): void => {
    const at = locate(path)
    problems.push({
      file,
      ...(at ? { line: at.line, column: at.column } : {}),
      ...(path.length ? { path: path.join('.') } : {}),
      message,
      ...(suggestion ? { suggestion } : {}),
    })
  }
  return { problems, report }
}

/** One server entry of a harness document, and how to name a key inside it in a problem. */
export interface ServerEntry {
  readonly name: string
  readonly raw: Record<string, unknown>
  /** The key path of this entry, or of a key inside it. */
  at(...path: (string | number)[]): (string | number)[]
}

/**
 * The entries of the server map at `key` of a parsed document (`mcpServers`,
 * `mcp`, `mcp_servers`), for a parser to read one by one. A map that is not
 * an object, and an entry that is not, are reported; the rest are returned.
 */
export function serverEntries(
  file: string,
  data: unknown,
  key: string,
  locate: (path: KeyPath) => Position | undefined,
): { entries: ServerEntry[]; problems: Problem[]; report: ReturnType<typeof problemsIn>['report'] } {
  const { problems, report } = problemsIn(file, locate)
  const map = isObject(data) ? (data[key] ?? {}) : undefined
  if (!isObject(map)) {
    report(isObject(data) ? [key] : [], `expected an object of servers by name under \`${key}\``)
    return { entries: [], problems, report }
  }
  const entries: ServerEntry[] = []
  for (const [name, raw] of Object.entries(map)) {
    const at = (...path: (string | number)[]) => [key, name, ...path]
    if (isObject(raw)) entries.push({ name, raw, at })
    else report(at(), 'expected an object')
  }
  return { entries, problems, report }
}
