import {
  OmhError,
  PROFILE_INVALID,
  USE_UNKNOWN,
  CAPABILITY_CLASSES,
  GUEST_WORK,
  emptyProfile,
  type Problem,
  type CapabilityClass,
  type ProfileItems,
} from '@omh/plugin-api'
import { byText, closest } from '@omh/plugin-kit'
import path from 'node:path'
import type { Adapter } from '../adapter/load.js'
import type { Decided, EffectiveSettings } from '../settings/load.js'
import type { CatalogueLocation, CatalogueSource } from './catalogue.js'
import { commandsSource, rulesSource, skillsSource, subagentsSource } from './entries.js'
import { hooksSource } from './hooks-source.js'
import { mcpSource } from './mcp-file.js'

/**
 * Every class the catalogue keeps, in capability order. A class missing here
 * resolves to nothing.
 */
export const CATALOGUE_SOURCES: readonly CatalogueSource[] = [rulesSource, skillsSource, mcpSource, commandsSource, subagentsSource, hooksSource]

export interface ProfileSources extends CatalogueLocation {
  /** The effective `[use]`, per class, with the layer that decided it. */
  readonly use: Readonly<Partial<Record<string, Decided<readonly string[]>>>>
}

/**
 * The project's own rules files an adapter stages over (its rules binding's
 * `path` and `also` at the top of the worktree), so the resolver composes the
 * project's copy instead of hiding it. Pass it as `projectRules`.
 */
export function projectRulesOf(adapter: Adapter): string[] {
  const rules = adapter.bindings.find((b) => b.capability === 'rules')
  if (!rules) return []
  return [rules.path, ...rules.also].filter((p) => path.posix.dirname(p) === GUEST_WORK).map((p) => path.posix.basename(p))
}

/**
 * Where a harness's profile is read from, as the settings say: the catalogue
 * in `$OMH_HOME`, the project's own rules in `projectDir` (the session's
 * worktree, or the checkout), `[use]` and `[limits] file_bytes`.
 */
export function profileSourcesFor(at: { omhHome: string; settings: EffectiveSettings }, adapter: Adapter, projectDir: string | undefined): ProfileSources {
  return {
    omhHome: at.omhHome,
    ...(projectDir ? { projectDir } : {}),
    projectRules: projectRulesOf(adapter),
    use: at.settings.use,
    fileBytes: at.settings.fileBytes?.value,
  }
}

/** How one class was selected, and who decided. */
export interface ClassSelection {
  readonly capability: CapabilityClass
  /** The allowlist that decided; absent when no settings layer has one, which selects everything. */
  readonly use?: Decided<readonly string[]>
  /** Where the user keeps this class. */
  readonly where: string
  /** Every name the catalogue has, in catalogue order. */
  readonly available: readonly string[]
  /** The names selected, in selection order. */
  readonly selected: readonly string[]
}

/** The profile a harness is rendered from: the selected items, how each class was selected, and notices. */
export interface ResolvedProfile extends ProfileItems {
  readonly selection: Readonly<Record<CapabilityClass, ClassSelection>>
  readonly notices: readonly string[]
}

/**
 * The user's profile, selected by `[use]`, in composition order. Every class
 * is listed first; `[use]` names are checked against the listing; then only
 * selected entries are read. Every problem of every file is reported at once,
 * and nothing is returned half-read.
 */
export async function resolveProfile(sources: ProfileSources, catalogue = CATALOGUE_SOURCES): Promise<ResolvedProfile> {
  const listings = await Promise.all(catalogue.map(async (source) => ({ source, listing: await source.list(sources) })))
  const problems: Problem[] = listings.flatMap((l) => l.listing.problems)
  const notices: string[] = listings.flatMap((l) => l.listing.notices ?? [])
  const unknown: Problem[] = []
  const plans = listings.map(({ source, listing }) => {
    const use = sources.use[source.capability]
    const byName = new Map(listing.entries.map((e) => [e.name, e]))
    const available = listing.entries.map((e) => e.name)
    const list = use?.value
    const wanted = !list || list[0] === '*' ? available : [...new Set(list)]
    for (const [n, name] of wanted.entries()) {
      if (byName.has(name)) continue
      const near = closest(name, available)
      unknown.push({
        file: use!.file,
        path: `use.${source.capability}[${n}]`,
        message: `"${name}" is not in ${source.where(sources)}${available.length ? '' : ', which is empty'}`,
        ...(near ? { suggestion: near } : {}),
      })
    }
    const selected = wanted.filter((name) => byName.has(name))
    const files = new Set(listing.entries.map((e) => e.source))
    const owns = (problem: Problem) => problem.file !== undefined && [...files].some((f) => problem.file === f || problem.file!.startsWith(`${f}/`))
    return { source, use, available, selected, entries: selected.map((name) => byName.get(name)!), owns }
  })
  if (unknown.length) throw OmhError.of(USE_UNKNOWN, { args: [unknown[0]!.file!, unknown.length], problems: unknown })

  const items: Record<string, unknown[]> = emptyProfile() as unknown as Record<string, unknown[]>
  await Promise.all(
    plans.map(async (plan) => {
      const loaded = await Promise.all(plan.entries.map((e) => e.load()))
      const out: unknown[] = []
      for (const l of loaded) {
        if (l.ok) out.push(l.item)
        else problems.push(...l.problems)
      }
      const extra = await plan.source.extra?.(sources)
      if (extra) {
        out.push(...extra.items)
        notices.push(...extra.notices)
        problems.push(...(extra.problems ?? []))
      }
      items[plan.source.capability] = out
    }),
  )
  if (problems.length) {
    problems.sort((a, b) => byText(a.file ?? '', b.file ?? '') || (a.line ?? 0) - (b.line ?? 0))
    // A class with an error of its own reports it when it is the only one with problems.
    const failing = plans.filter((p) => problems.some((pr) => p.owns(pr)))
    const own = failing.length === 1 ? failing[0]!.source.invalid : undefined
    throw own ? own(problems) : OmhError.of(PROFILE_INVALID, { args: [problems.length], problems })
  }

  const selection = {} as Record<CapabilityClass, ClassSelection>
  for (const capability of CAPABILITY_CLASSES) {
    const plan = plans.find((p) => p.source.capability === capability)
    selection[capability] = {
      capability,
      ...(plan?.use ? { use: plan.use } : {}),
      where: plan?.source.where(sources) ?? '',
      available: plan?.available ?? [],
      selected: plan?.selected ?? [],
    }
  }
  return { ...(items as unknown as ProfileItems), selection, notices }
}
