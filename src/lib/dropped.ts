import { CAPABILITY_CLASSES, countOf, type DroppedItem } from '@omh/kernel'

/**
 * The one-line account of what a harness will not see, e.g.
 * `dropped 2 hooks, 3 subagents (unsupported)` or
 * `dropped 1 hook (no \`search\` tool), 3 subagents (unsupported)`.
 * Empty when nothing was dropped.
 */
export function droppedSummary(dropped: readonly DroppedItem[]): string {
  if (!dropped.length) return ''
  const groups = CAPABILITY_CLASSES.map((capability) => {
    const items = dropped.filter((d) => d.capability === capability)
    return { capability, items, reasons: [...new Set(items.map((d) => d.reason))] }
  }).filter((g) => g.items.length)
  const allReasons = new Set(groups.flatMap((g) => g.reasons))
  if (allReasons.size === 1) {
    return `dropped ${groups.map((g) => countOf(g.capability, g.items.length)).join(', ')} (${[...allReasons][0]})`
  }
  return `dropped ${groups.map((g) => `${countOf(g.capability, g.items.length)} (${g.reasons.join(', ')})`).join(', ')}`
}

/** One line per dropped item, for --verbose. */
export function droppedDetail(dropped: readonly DroppedItem[]): string[] {
  return dropped.map((d) => `  ${d.capability}/${d.name}: ${d.reason}`)
}
