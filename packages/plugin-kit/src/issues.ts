import type { $ZodIssue, $ZodType } from 'zod/v4/core'
import type { Problem } from '@omh/plugin-api'
import type { KeyPath, Position } from './toml-locate.js'

/** The closest candidate within a small edit distance, for "did you mean". */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1
  for (const candidate of candidates) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1))
      diagonal = above
    }
  }
  return row[b.length]!
}

export const dotted = (path: KeyPath): string =>
  path.map((p, n) => (typeof p === 'number' ? `[${p}]` : `${n ? '.' : ''}${/^[A-Za-z0-9_-]+$/.test(p) ? p : JSON.stringify(p)}`)).join('')

interface Def {
  type: string
  shape?: Record<string, $ZodType>
  innerType?: $ZodType
  element?: $ZodType
  valueType?: $ZodType
  in?: $ZodType
}

const defOf = (schema: $ZodType | undefined): Def | undefined => (schema as { _zod?: { def: Def } } | undefined)?._zod?.def

/** Looks through wrappers (optional, default, checks) to the schema that holds the value. */
function unwrap(schema: $ZodType | undefined): $ZodType | undefined {
  for (let def = defOf(schema); def; def = defOf(schema)) {
    if (def.type === 'optional' || def.type === 'default' || def.type === 'nullable') schema = def.innerType
    else if (def.type === 'pipe') schema = def.in
    else return schema
  }
  return schema
}

/** The keys an object schema accepts at `path`, for suggestions. */
function keysAt(schema: $ZodType, path: KeyPath): string[] {
  let node: $ZodType | undefined = schema
  for (const step of path) {
    const def = defOf(unwrap(node))
    if (def?.type === 'object') node = def.shape?.[String(step)]
    else if (def?.type === 'array') node = def.element
    else if (def?.type === 'record') node = def.valueType
    else return []
  }
  const def = defOf(unwrap(node))
  return def?.type === 'object' ? Object.keys(def.shape ?? {}) : []
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (Array.isArray(value)) return 'an array'
  if (value === null) return 'null'
  if (value instanceof Date) return 'a date'
  switch (typeof value) {
    case 'string':
      return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`
    case 'number':
    case 'bigint':
      return `the number ${String(value)}`
    case 'boolean':
      return `${String(value)}`
    case 'object':
      return 'a table'
    default:
      return typeof value
  }
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  object: 'a table',
  record: 'a table',
  function: 'a function',
}

function valueAt(data: unknown, path: KeyPath): unknown {
  let node = data
  for (const step of path) {
    if (node === null || typeof node !== 'object') return undefined
    node = (node as Record<string | number, unknown>)[step]
  }
  return node
}

export interface IssueContext {
  file?: string
  data: unknown
  schema: $ZodType
  /** Where a key is written; `file` when the data was merged from several files and this key's differs from `file`. */
  locate?: (path: KeyPath) => (Partial<Position> & { readonly file?: string }) | undefined
}

/** Turns zod issues into problems with key paths, positions and suggestions, in document order. */
export function problemsFromIssues(issues: readonly $ZodIssue[], ctx: IssueContext): Problem[] {
  const out: Problem[] = []
  const push = (path: KeyPath, message: string, suggestion?: string) => {
    const at = ctx.locate?.(path)
    const file = at?.file ?? ctx.file
    out.push({
      ...(file ? { file } : {}),
      ...(at?.line !== undefined && at.column !== undefined ? { line: at.line, column: at.column } : {}),
      path: dotted(path),
      message,
      ...(suggestion ? { suggestion } : {}),
    })
  }
  for (const issue of issues) {
    const path = issue.path as KeyPath
    switch (issue.code) {
      case 'unrecognized_keys': {
        const known = keysAt(ctx.schema, path)
        for (const key of issue.keys) {
          const near = closest(key, known)
          push([...path, key], `unknown key`, near)
        }
        break
      }
      case 'invalid_type': {
        const value = valueAt(ctx.data, path)
        if (value === undefined) push(path, 'required, but missing')
        else push(path, `expected ${EXPECTED[issue.expected] ?? issue.expected}, found ${describe(value)}`)
        break
      }
      case 'invalid_value': {
        const value = valueAt(ctx.data, path)
        if (value === undefined) {
          push(path, 'required, but missing')
          break
        }
        const options = issue.values.map((v) => JSON.stringify(v))
        const near = typeof value === 'string' ? closest(value, issue.values.map(String)) : undefined
        push(path, `expected one of ${options.join(', ')}, found ${describe(value)}`, near)
        break
      }
      case 'too_small':
        push(path, issue.origin === 'array' || issue.origin === 'string' ? 'must not be empty' : issue.message)
        break
      case 'invalid_key': {
        // The key's own check says what a name may be; zod's own message is only "Invalid input".
        const why = (issue as { issues?: readonly { message: string }[] }).issues?.[0]?.message
        push(path, why ?? issue.message)
        break
      }
      default:
        push(path, issue.message)
    }
  }
  return out.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? 0) - (b.column ?? 0))
}
