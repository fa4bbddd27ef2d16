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
