import { CAPABILITY_CLASSES, countOf, type DroppedItem } from '@omh/plugin-api'

/**
 * The one-line account of what a harness will not see, e.g.
 * `dropped 2 hooks, 3 subagents (unsupported)`,
 * `dropped 1 hook (no \`search\` tool), 3 subagents (unsupported)` or, when
 * one class lost items for several reasons,
 * `dropped 4 hooks (3 reasons; --verbose names each)`.
 * Empty when nothing was dropped.
 */
export function droppedSummary(dropped: readonly DroppedItem[], verbose = false): string {
  if (!dropped.length) return ''
  const groups = CAPABILITY_CLASSES.map((capability) => {
    const items = dropped.filter((d) => d.capability === capability)
    return { capability, items, reasons: [...new Set(items.map((d) => d.reason))] }
  }).filter((g) => g.items.length)
  const allReasons = new Set(groups.flatMap((g) => g.reasons))
  if (allReasons.size === 1) {
    return `dropped ${groups.map((g) => countOf(g.capability, g.items.length)).join(', ')} (${[...allReasons][0]})`
  }
  const why = (reasons: string[]) =>
    reasons.length === 1 ? reasons[0] : `${reasons.length} reasons${verbose ? '' : '; --verbose names each'}`
  return `dropped ${groups.map((g) => `${countOf(g.capability, g.items.length)} (${why(g.reasons)})`).join(', ')}`
}

/** One line per dropped item, for --verbose: `hooks: graph-first (no \`search\` tool)`. */
export function droppedDetail(dropped: readonly DroppedItem[]): string[] {
  return dropped.map((d) => `  ${d.capability}: ${d.name} (${d.reason})`)
}
