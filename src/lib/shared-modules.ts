/**
 * The packages every plugin imports (zod/mini, @omh/plugin-api, @omh/plugin-kit), handed to a
 * plugin ready-made instead of being loaded again from node_modules, which cost more than the
 * plugins themselves: about 50 ms for zod/mini's two dozen files and 20 ms for the other two,
 * against about 20 ms for six renderers. The plugin API and kit are the bundle's own copies; zod/mini
 * is one prebuilt file beside the bundle (dist/zod-mini.js), as the bundle holds only the part of
 * zod the kernel uses, and the whole of it (locales, JSON Schema) would cost every command that
 * makes a kernel about 10 ms more. A plugin is handed these only where its import resolves to the
 * same package at the version omh was built from; any other version, a CommonJS require, or a Node
 * without module hooks loads its own, as before.
 */
import { readFileSync } from 'node:fs'
import module from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as pluginApi from '@omh/plugin-api'
import * as pluginKit from '@omh/plugin-kit'

/** The version of each package in the bundle, folded in by scripts/bundle.js; undefined when not bundled. */
declare const OMH_SHARED_VERSIONS: Readonly<Record<string, string>> | undefined

const SCHEME = 'omh-shared:'
type Shared = { readonly packageName: string } & ({ readonly namespace: object } | { readonly prebuilt: string })
const MODULES: Readonly<Record<string, Shared>> = {
  'zod/mini': { packageName: 'zod', prebuilt: './zod-mini.js' },
  '@omh/plugin-api': { packageName: '@omh/plugin-api', namespace: pluginApi },
  '@omh/plugin-kit': { packageName: '@omh/plugin-kit', namespace: pluginKit },
}
const NAMESPACES = Symbol.for('omh.shared-modules')

let installed = false

/** Hands later plugin imports omh's copies of the packages they share with it. Once per process. */
export function shareModules(): void {
  const versions = typeof OMH_SHARED_VERSIONS === 'undefined' ? undefined : OMH_SHARED_VERSIONS
  if (installed || !versions || typeof module.registerHooks !== 'function') return
  installed = true
  ;(globalThis as Record<symbol, unknown>)[NAMESPACES] = Object.fromEntries(Object.entries(MODULES).flatMap(([specifier, shared]) => ('namespace' in shared ? [[specifier, shared.namespace]] : [])))
  const versionOf = new Map<string, string | undefined>()
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context)
      const shared = Object.hasOwn(MODULES, specifier) ? MODULES[specifier]! : undefined
      if (!shared || !resolved.url.startsWith('file:') || !context.conditions.includes('import')) return resolved
      const file = fileURLToPath(resolved.url)
      if (!versionOf.has(file)) versionOf.set(file, installedVersion(file, shared.packageName))
      if (versionOf.get(file) !== versions[shared.packageName]) return resolved
      // The bundle's own URL: the prebuilt file is beside it.
      if ('prebuilt' in shared) return { url: new URL(shared.prebuilt, import.meta.url).href, format: 'module', shortCircuit: true }
      return { url: `${SCHEME}${specifier}`, format: 'module', shortCircuit: true }
    },
    load(url, context, nextLoad) {
      if (!url.startsWith(SCHEME)) return nextLoad(url, context)
      return { format: 'module', source: reexport(url.slice(SCHEME.length)), shortCircuit: true }
    },
  })
}

/** The version in the package.json of the package named `name` that holds `file`. */
function installedVersion(file: string, name: string): string | undefined {
  for (let dir = path.dirname(file); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    let manifest: { name?: unknown; version?: unknown }
    try {
      manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as typeof manifest
    } catch {
      continue
    }
    if (manifest.name === name) return typeof manifest.version === 'string' ? manifest.version : undefined
  }
  return undefined
}

/** A module exporting what the shared namespace does; export names may be words like `enum`, so each is quoted. */
function reexport(specifier: string): string {
  const namespace = (MODULES[specifier] as { namespace: object }).namespace
  const names = Object.keys(namespace)
  return [
    `const shared = globalThis[Symbol.for(${JSON.stringify(NAMESPACES.description)})][${JSON.stringify(specifier)}];`,
    ...names.map((name, i) => `const v${i} = shared[${JSON.stringify(name)}];`),
    `export { ${names.map((name, i) => `v${i} as ${JSON.stringify(name)}`).join(', ')} };`,
  ].join('\n')
}
