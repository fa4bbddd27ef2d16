/**
 * What a plugin package says it provides, in its `package.json` under `omh`, so that omh imports
 * it only when a command needs what it provides: a renderer's formats (and the syntaxes it
 * combines), a runtime's engine, the hooks an extension taps. A package without the declaration is
 * imported whenever omh loads, as every plugin was before; a declaration that does not parse is
 * refused, and one the module then contradicts is refused when it is imported.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import * as z from 'zod/mini'
import { OmhError, PLUGIN_INVALID, type ExtensionHooks, type Plugin, type Problem } from '@omh/plugin-api'
import { problemsFromIssues } from '@omh/plugin-kit'

const names = z.array(z.string().check(z.minLength(1)))

/** The hooks an extension may declare it taps: those `apply` is handed. */
const EXTENSION_HOOKS = ['failed', 'beforeLaunch', 'launched'] as const satisfies readonly (keyof ExtensionHooks)[]

const declarationSchema = z.union([
  z.strictObject({ renderer: z.strictObject({ formats: names.check(z.minLength(1)), combines: z.optional(names) }) }),
  z.strictObject({ runtime: z.strictObject({ engine: z.string().check(z.minLength(1)) }) }),
  z.strictObject({ extension: z.strictObject({ hooks: z.array(z.enum(EXTENSION_HOOKS)) }) }),
])

/** A plugin package's `omh` declaration. */
export type Declaration = z.infer<typeof declarationSchema>

/** A hook an extension may declare it taps. */
export type ExtensionHookName = keyof ExtensionHooks

/** A declared plugin: its declaration, the package.json it is in, and the package's name. */
export interface Declared {
  readonly declaration: Declaration
  readonly manifest: string
  readonly packageName: string
}

/**
 * The declaration in the `package.json` at `root`, or undefined where there is none. A file that
 * cannot be read or parsed says nothing either: importing the module reports what is wrong with it.
 */
export function readDeclaration(root: string, specifier: string, namedBy: string): Declared | undefined {
  const manifest = path.join(root, 'package.json')
  let pkg: { name?: unknown; omh?: unknown }
  try {
    pkg = JSON.parse(readFileSync(manifest, 'utf8')) as typeof pkg
  } catch {
    return undefined
  }
  if (pkg === null || typeof pkg !== 'object' || pkg.omh === undefined) return undefined
  const parsed = declarationSchema.safeParse(pkg.omh)
  if (!parsed.success) {
    const problems = problemsFromIssues(parsed.error.issues, { data: pkg.omh, schema: declarationSchema }).map((p) => ({ ...p, file: manifest, path: `omh${p.path ? `.${p.path}` : ''}` }))
    throw invalid(specifier, namedBy, problems)
  }
  return { declaration: parsed.data, manifest, packageName: typeof pkg.name === 'string' ? pkg.name : specifier }
}

/** PLUGIN_INVALID when the module imported is not what its package declared. */
export function checkDeclared(plugin: Plugin, declared: Declared, specifier: string, namedBy: string): void {
  const { declaration, manifest } = declared
  const problems: Problem[] = []
  const problem = (key: string, message: string) => problems.push({ file: manifest, path: `omh.${key}`, message })
  const listed = (values: readonly string[]) => values.join(', ') || 'none'
  const same = (a: readonly string[], b: readonly string[]) => listed([...a].sort()) === listed([...b].sort())
  const kind = Object.keys(declaration)[0]!
  if (plugin.kind !== kind) problem(kind, `the package declares a ${kind}, but its module exports a ${plugin.kind}`)
  else if ('renderer' in declaration && plugin.kind === 'renderer') {
    const { formats, combines = [] } = declaration.renderer
    if (!same(formats, plugin.formats)) problem('renderer.formats', `declares ${listed(formats)}, but the renderer answers ${listed(plugin.formats)}`)
    const combined = Object.keys(plugin.combine ?? {})
    if (!same(combines, combined)) problem('renderer.combines', `declares ${listed(combines)}, but the renderer combines ${listed(combined)}`)
  } else if ('runtime' in declaration && plugin.kind === 'runtime' && declaration.runtime.engine !== plugin.engine) {
    problem('runtime.engine', `declares "${declaration.runtime.engine}", but the runtime drives "${plugin.engine}"`)
  }
  if (problems.length) throw invalid(specifier, namedBy, problems)
}

/** PLUGIN_INVALID for an extension that tapped a hook its package did not declare. */
export function undeclaredTap(declared: Declared, hook: string, specifier: string, namedBy: string): OmhError {
  return invalid(specifier, namedBy, [{ file: declared.manifest, path: 'omh.extension.hooks', message: `the extension taps ${hook}, which the package does not declare` }])
}

function invalid(specifier: string, namedBy: string, problems: Problem[]): OmhError {
  return OmhError.of(PLUGIN_INVALID, { args: [specifier, namedBy, problems.length], problems })
}
