/**
 * Hook text and commands as POSIX shell words, for renderers whose harness runs
 * a hook as a shell command: quoting that keeps a command exactly as written,
 * text with its variables live, and the readers that invert both.
 */
import { hookText, parseHookText, type TextPiece } from './hook-text.js'

/** A POSIX single-quoted word: nothing inside is special, so any command text survives as written. */
export const singleQuoted = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

/**
 * Hook text as one double-quoted shell word: its variables stay live, so
 * `$OMH_TOOL_FILE` expands when the hook fires, and everything else the agent
 * should read as written (`"`, `\`, backticks, a dollar written `$$`) is
 * escaped. The text was checked when its file was parsed, so every `$` left
 * live names a variable omh sets.
 */
export function doubleQuoted(text: string): string {
  const parsed = parseHookText(text)
  if (!parsed.ok) throw new Error(`hook text was not checked before rendering: ${parsed.problem}`)
  return `"${parsed.pieces.map(wordPiece).join('')}"`
}

function wordPiece(piece: TextPiece): string {
  if (piece.kind === 'literal') return piece.text.replace(/[\\"`$]/g, (c) => `\\${c}`)
  if (!piece.braced) return `$${piece.name}`
  return `\${${piece.name}${piece.fallback !== undefined ? `:-${piece.fallback}` : ''}}`
}

/** A word read back from a command, and where the command goes on after it. */
export interface Read<T> {
  readonly value: T
  readonly end: number
}

/** Reads the single-quoted word at `at` (`'…'` pieces joined by `\'`), the inverse of `singleQuoted`. */
export function readSingleQuoted(source: string, at: number): Read<string> | undefined {
  let value = ''
  let i = at
  if (source[i] !== "'") return undefined
  for (;;) {
    if (source[i] === "'") {
      const close = source.indexOf("'", i + 1)
      if (close === -1) return undefined
      value += source.slice(i + 1, close)
      i = close + 1
    } else if (source.startsWith("\\'", i)) {
      value += "'"
      i += 2
    } else return { value, end: i }
  }
}

/** Reads the double-quoted word at `at` back into hook text, the inverse of `doubleQuoted`. */
export function readDoubleQuoted(source: string, at: number): Read<string> | undefined {
  if (source[at] !== '"') return undefined
  const pieces: TextPiece[] = []
  let literal = ''
  const flush = () => {
    if (literal) pieces.push({ kind: 'literal', text: literal })
    literal = ''
  }
  for (let i = at + 1; i < source.length; ) {
    const c = source[i]!
    if (c === '"') {
      flush()
      return { value: hookText(pieces), end: i + 1 }
    }
    if (c === '\\') {
      const next = source[i + 1]
      literal += next !== undefined && '\\"`$'.includes(next) ? next : `\\${next ?? ''}`
      i += 2
      continue
    }
    if (c === '$') {
      const m = /^\$(?:\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)/.exec(source.slice(i))
      const parsed = m ? parseHookText(m[0]) : undefined
      if (!m || !parsed?.ok || parsed.pieces.length !== 1) return undefined
      flush()
      pieces.push(parsed.pieces[0]!)
      i += m[0].length
      continue
    }
    literal += c
    i++
  }
  return undefined
}

/** Fills a template: `{{text}}` with a value already written in the template's language, `{{event}}` with the harness's event name. */
export const fill = (template: string, text: string, event: string): string =>
  template.split('{{text}}').map((part) => part.split('{{event}}').join(event)).join(text)
