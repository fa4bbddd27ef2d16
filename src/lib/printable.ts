// What a terminal acts on instead of showing: C0 controls but tab and newline
// (a carriage return too, unless it ends a line), DEL, C1 controls (0x9b is
// CSI to some terminals), and the marks that reorder a line, which can make a
// command read as something else.
// eslint-disable-next-line no-control-regex
const ACTS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g

const escape = (c: string) => {
  const code = c.charCodeAt(0)
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
}

/**
 * Text as a terminal shows it, never as commands to it: each character a
 * terminal would act on is written as an escape (`\x1b`, `\u202e`). Every
 * string from a file, a name or a value reaches the terminal through this;
 * `keep` lists the exact sequences that pass as they are (omh's own colours).
 */
export function printable(text: string, keep: readonly string[] = []): string {
  if (!keep.length || !text.includes('\u001b')) return text.replace(ACTS, escape)
  let out = ''
  let plain = 0
  for (let at = text.indexOf('\u001b'); at !== -1; at = text.indexOf('\u001b', at + 1)) {
    const kept = keep.find((k) => text.startsWith(k, at))
    if (!kept) continue
    out += text.slice(plain, at).replace(ACTS, escape) + kept
    plain = at + kept.length
    at = plain - 1
  }
  return out + text.slice(plain).replace(ACTS, escape)
}

/** A JSON document whose strings show as text on a terminal: JSON escapes C0 itself, this the rest. */
export const printableJson = (value: unknown): string =>
  JSON.stringify(value, null, 2).replace(ACTS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

// eslint-disable-next-line no-control-regex
const SEQUENCES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[P^_X][^\u001b]*(?:\u001b\\)?|\u001b[ -/]*[0-~]|\u009b[0-?]*[ -/]*[@-~]/g

/**
 * What a program wrote to its terminal, as lines of text: its escape sequences (colours, cursor
 * moves, titles, anything a terminal acts on) taken out, a carriage return that redraws a line
 * made a line of its own, and every other control escaped as `printable` does.
 */
export const outputAsText = (output: string): string => printable(output.replace(SEQUENCES, '').replace(/\r+\n/g, '\n').replace(/\r/g, '\n'))
