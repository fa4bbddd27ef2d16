/**
 * An adapter checked completely: its schema, then every binding against the renderers installed,
 * so a `render` string no renderer answers, a class it does not render, or options it does not
 * take are all reported at once, each at its line.
 */
import * as z from 'zod/mini'
import { CAPABILITY_CLASSES, type CapabilityClass, type Problem, type RendererPlugin } from '@omh/plugin-api'
import { closest, dotted, problemsFromIssues } from '@omh/plugin-kit'
import type { LoadedPlugin } from '../plugins/load.js'
import { checkAdapterFile, toAdapter, type Adapter } from './load.js'

/** The renderers an adapter's bindings are checked against. */
export interface InstalledRenderers {
  rendererFor(format: string): LoadedPlugin<RendererPlugin> | undefined
  formats(): string[]
  /** Imports the renderers of these formats that are declared and not imported yet. */
  need(what: { formats: readonly string[] }): Promise<void>
}

/**
 * Checks an adapter file completely: its schema, then every binding against
 * the loaded renderers (format answered, class accepted, options valid).
 * Returns every problem at once.
 */
export async function checkAdapterWith(
  renderers: InstalledRenderers,
  file: string,
  expectName: string | undefined,
  fileBytes: number | undefined,
): Promise<{ adapter?: Adapter; problems: Problem[] }> {
  const check = await checkAdapterFile(file, expectName, fileBytes)
  const problems = [...check.problems]
  const raw = (check.doc?.data ?? {}) as { capabilities?: Record<string, { render?: unknown; options?: unknown }> }
  await renderers.need({ formats: Object.values(raw.capabilities ?? {}).flatMap((b) => (typeof b?.render === 'string' ? [b.render] : [])) })
  for (const [capability, b] of Object.entries(raw.capabilities ?? {})) {
    if (!CAPABILITY_CLASSES.includes(capability as CapabilityClass) || typeof b?.render !== 'string') continue
    const where = (p: (string | number)[]) => {
      const at = check.doc?.locate(['capabilities', capability, ...p])
      return { file, ...(at ? { line: at.line, column: at.column } : {}), path: dotted(['capabilities', capability, ...p]) }
    }
    const renderer = renderers.rendererFor(b.render)?.plugin
    if (!renderer) {
      const near = closest(b.render, renderers.formats())
      problems.push({
        ...where(['render']),
        message: `"${b.render}" matches no installed renderer (installed: ${renderers.formats().join(', ') || 'none'})`,
        ...(near ? { suggestion: near } : {}),
      })
      continue
    }
    if (!renderer.classes.includes(capability as CapabilityClass)) {
      problems.push({
        ...where(['render']),
        message: `"${b.render}" (${renderer.meta.name}) renders ${renderer.classes.join(', ')}, not ${capability}`,
      })
    }
    if (b.options !== undefined) {
      if (!renderer.options) {
        problems.push({ ...where(['options']), message: `"${b.render}" (${renderer.meta.name}) takes no options` })
      } else {
        const parsed = z.safeParse(renderer.options, b.options)
        if (!parsed.success) {
          problems.push(
            ...problemsFromIssues(parsed.error.issues, {
              file,
              data: b.options,
              schema: renderer.options,
              locate: (p) => check.doc?.locate(['capabilities', capability, 'options', ...p]),
            }).map((pr) => ({ ...pr, path: `capabilities.${capability}.options${pr.path ? `.${pr.path}` : ''}` })),
          )
        }
      }
    }
  }
  problems.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? 0) - (b.column ?? 0))
  if (problems.length || !check.data) return { problems }
  return { adapter: toAdapter(file, check.data), problems }
}
