import { stripVTControlCharacters } from 'node:util'
import { printable } from './printable.js'
import { STYLE_SEQUENCES } from './style.js'

/**
 * Left-aligned columns, two spaces apart; width counts visible characters
 * only. Cells are measured as they will show: user words with their escapes
 * written out, styles as colour.
 */
export function table(cells: readonly (readonly string[])[], indent = ''): string {
  const rows = cells.map((row) => row.map((cell) => printable(cell, STYLE_SEQUENCES)))
  const widths: number[] = []
  for (const row of rows) row.forEach((cell, n) => (widths[n] = Math.max(widths[n] ?? 0, visible(cell))))
  return rows
    .map((row) =>
      indent +
      row
        .map((cell, n) => (n === row.length - 1 ? cell : cell + ' '.repeat(widths[n]! - visible(cell))))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

const visible = (text: string) => stripVTControlCharacters(text).length

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

export function bytes(n: number): string {
  if (n < 1000) return `${n} B`
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)} kB`
  return `${(n / 1_000_000).toFixed(1)} MB`
}
