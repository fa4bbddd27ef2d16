/**
 * A small subset of JSONPath for reaching into what a harness prints as JSON.
 *
 * - `a.b.c` walks object keys;
 * - `a[*]` visits each element of the array at `a` (`[*]` alone: the document is an array);
 * - `a.*` visits each value of the object at `a`;
 * - `a.*~` visits each key of the object at `a`, as a string.
 *
 * A step that does not apply (a key missing, an array where an object was
 * expected) yields nothing rather than failing: the selector is asked of every
 * JSON line a probe printed, and most lines hold something else.
 */

type Step = { readonly key: string } | { readonly each: 'element' | 'value' | 'key' }

export type Selector = readonly Step[]

/** Parses a selector, or says what is wrong with it. */
export function parseSelector(text: string): Selector | { readonly error: string } {
  const steps: Step[] = []
  const parts = text.split('.')
  for (const [n, part] of parts.entries()) {
    if (part === '*') {
      steps.push({ each: 'value' })
      continue
    }
    if (part === '*~') {
      if (n !== parts.length - 1) return { error: '`*~` (the keys of an object) must be the last step' }
      steps.push({ each: 'key' })
      continue
    }
    const m = /^([^[\]*~]*)((?:\[\*\])*)$/.exec(part)
    if (!m) return { error: `"${part}" is not a key, \`*\`, \`*~\` or a key followed by \`[*]\`` }
    const [, key, arrays] = m as unknown as [string, string, string]
    if (key === '' && (n > 0 || arrays === '')) return { error: 'an empty step (two dots in a row, or a leading or trailing dot)' }
    if (key !== '') steps.push({ key })
    for (let i = 0; i < arrays.length / 3; i++) steps.push({ each: 'element' })
  }
  return steps
}
