/**
 * Reading a probe's output against an adapter's evidence: the patterns and
 * selectors the adapter schema checked, applied to what a harness printed.
 */
import type { Selector } from '@omh/kernel'

// Mirrors the kernel's pattern tokens: `{{placeholder}}` or `*`.
const TOKEN = /\{\{([^{}]*)\}\}|\*/g

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

/** Every value the selector reaches in a document. */
export function select(document: unknown, selector: Selector): unknown[] {
  let current: unknown[] = [document]
  for (const step of selector) {
    const next: unknown[] = []
    for (const value of current) {
      if ('key' in step) {
        if (isObject(value) && Object.hasOwn(value, step.key)) next.push(value[step.key])
      } else if (step.each === 'element') {
        if (Array.isArray(value)) next.push(...value)
      } else if (isObject(value)) {
        next.push(...(step.each === 'value' ? Object.values(value) : Object.keys(value)))
      }
    }
    current = next
  }
  return current
}

/** The scalar at a dotted key path inside a value, as text; `undefined` when absent, null or not a scalar. */
export function scalarAt(value: unknown, path: string): string | undefined {
  let node = value
  for (const key of path.split('.')) {
    if (!isObject(node) || !Object.hasOwn(node, key)) return undefined
    node = node[key]
  }
  return typeof node === 'string' || typeof node === 'number' || typeof node === 'boolean' ? String(node) : undefined
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
