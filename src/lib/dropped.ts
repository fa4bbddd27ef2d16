import { CAPABILITY_CLASSES, countOf, type CapabilityClass, type DroppedItem, type TranslatedItem } from '@omh/plugin-api'

/** `verb 2 hooks, 3 subagents (why)`, or a why per class when they differ; empty for no items. */
function counted(verb: string, items: readonly { capability: CapabilityClass; why: string }[], verbose: boolean): string {
  if (!items.length) return ''
  const groups = CAPABILITY_CLASSES.map((capability) => {
    const mine = items.filter((d) => d.capability === capability)
    return { capability, items: mine, reasons: [...new Set(mine.map((d) => d.why))] }
  }).filter((g) => g.items.length)
  const allReasons = new Set(groups.flatMap((g) => g.reasons))
  if (allReasons.size === 1) {
    return `${verb} ${groups.map((g) => countOf(g.capability, g.items.length)).join(', ')} (${[...allReasons][0]})`
  }
  const why = (reasons: string[]) =>
    reasons.length === 1 ? reasons[0] : `${reasons.length} reasons${verbose ? '' : '; --verbose names each'}`
  return `${verb} ${groups.map((g) => `${countOf(g.capability, g.items.length)} (${why(g.reasons)})`).join(', ')}`
}

/**
 * The one-line account of what a harness will not see, e.g.
 * `dropped 2 hooks, 3 subagents (unsupported)`,
 * `dropped 1 hook (no \`search\` tool), 3 subagents (unsupported)` or, when
 * one class lost items for several reasons,
 * `dropped 4 hooks (3 reasons; --verbose names each)`.
 * Empty when nothing was dropped.
 */
export function droppedSummary(dropped: readonly DroppedItem[], verbose = false): string {
  return counted('dropped', dropped.map((d) => ({ capability: d.capability, why: d.reason })), verbose)
}

/**
 * What a harness sees as something else, then what it will not see, on one
 * line: `translated 1 command (to a skill); dropped 2 hooks (unsupported)`.
 * Empty when every item is staged as itself.
 */
export function renderSummary(dropped: readonly DroppedItem[], translated: readonly TranslatedItem[], verbose = false): string {
  const moved = counted('translated', translated.map((t) => ({ capability: t.capability, why: `to ${t.to}` })), verbose)
  return [moved, droppedSummary(dropped, verbose)].filter(Boolean).join('; ')
}

/** One line per translated or dropped item, for --verbose: `hooks: graph-first (no \`search\` tool)`. */
export function droppedDetail(dropped: readonly DroppedItem[], translated: readonly TranslatedItem[] = []): string[] {
  return [
    ...translated.map((t) => `  ${t.capability}: ${t.name} (translated to ${t.to})`),
    ...dropped.map((d) => `  ${d.capability}: ${d.name} (${d.reason})`),
  ]
}

/**
 * What a launch and `omh render` say of the project's environment: what it is
 * when it is not omh's base, each devcontainer key omh does not honour (with
 * why, under --verbose), and anything about the choice worth a word.
 */
export function environmentLines(
  environment:
    | {
        readonly describe: string
        readonly unsupported: readonly { readonly key: string; readonly why: string }[]
        readonly notes: readonly string[]
        readonly published?: readonly { readonly guest: number; readonly url: string }[]
      }
    | undefined,
  verbose = false,
): string[] {
  if (!environment) return []
  const lines = [...environment.notes]
  if (environment.published?.length) lines.push(`ports: ${environment.published.map((p) => `${p.guest} → ${p.url}`).join(', ')}`)
  const keys = environment.unsupported.map((u) => (verbose ? `${u.key} (${u.why})` : u.key))
  if (environment.describe !== "omh's base" || keys.length) {
    lines.push(`environment: ${environment.describe}${keys.length ? ` — not honoured: ${keys.join(', ')}` : ''}`)
  }
  return lines
}
