/**
 * Patterns an adapter writes to say what a harness prints about an item: text
 * where `*` stands for any run of characters (newlines included) and
 * `{{placeholder}}` for a fact about the item, filled in literally. Everything
 * else is literal, so a path or a table row is written as it appears.
 */

const TOKEN = /\{\{([^{}]*)\}\}|\*/g

/** The placeholders a pattern names, in order of appearance, repeats included. */
export function placeholdersOf(pattern: string): string[] {
  return [...pattern.matchAll(TOKEN)].flatMap((m) => (m[1] === undefined ? [] : [m[1]]))
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

/**
 * The pattern as a regular expression matching a whole string, with each
 * placeholder replaced by its value. A placeholder without a value throws:
 * the adapter schema refuses unknown placeholders, so this is a bug.
 */
export function compilePattern(pattern: string, values: Readonly<Record<string, string>>): RegExp {
  let source = ''
  let last = 0
  for (const m of pattern.matchAll(TOKEN)) {
    source += escape(pattern.slice(last, m.index))
    if (m[1] === undefined) source += '[\\s\\S]*'
    else {
      const value = values[m[1]]
      if (value === undefined) throw new Error(`pattern ${JSON.stringify(pattern)} names {{${m[1]}}}, which has no value here`)
      source += escape(value)
    }
    last = m.index + m[0].length
  }
  return new RegExp(`^${source + escape(pattern.slice(last))}$`)
}

/** The pattern with placeholders filled, for messages: what was looked for. */
export function fillPattern(pattern: string, values: Readonly<Record<string, string>>): string {
  return pattern.replace(/\{\{([^{}]*)\}\}/g, (whole, key: string) => values[key] ?? whole)
}
