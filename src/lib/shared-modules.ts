/**
 * The packages every plugin imports (zod/mini, @omh/plugin-api, @omh/plugin-kit), handed to a
 * plugin ready-made instead of being loaded again from node_modules, which cost more than the
 * plugins themselves: about 50 ms for zod/mini's two dozen files and 20 ms for the other two,
 * against about 20 ms for six renderers. The plugin API and kit are the bundle's own copies; zod/mini
 * is one prebuilt script beside the bundle (dist/zod-mini.cjs, run with its own code cache as the
 * bundle is: packages/fast-path/src/script.ts), as the bundle holds only the part of
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
import { runScript } from '@omh/fast-path/script'

/** The version of each package in the bundle, folded in by scripts/bundle.js; undefined when not bundled. */
declare const OMH_SHARED_VERSIONS: Readonly<Record<string, string>> | undefined

const SCHEME = 'omh-shared:'
type Shared = { readonly packageName: string; readonly namespace: () => object }
const MODULES: Readonly<Record<string, Shared>> = {
  // The bundle's own URL: the prebuilt script is beside it.
  'zod/mini': { packageName: 'zod', namespace: () => runScript(fileURLToPath(new URL('./zod-mini.cjs', import.meta.url)), { url: import.meta.url, importer: (specifier) => import(specifier) }) },
  '@omh/plugin-api': { packageName: '@omh/plugin-api', namespace: () => pluginApi },
  '@omh/plugin-kit': { packageName: '@omh/plugin-kit', namespace: () => pluginKit },
}
const NAMESPACES = Symbol.for('omh.shared-modules')

let installed = false

/** Hands later plugin imports omh's copies of the packages they share with it. Once per process. */
export function shareModules(): void {
  const versions = typeof OMH_SHARED_VERSIONS === 'undefined' ? undefined : OMH_SHARED_VERSIONS
  if (installed || !versions || typeof module.registerHooks !== 'function') return
  installed = true
  const namespaces: Record<string, object> = {}
  ;(globalThis as Record<symbol, unknown>)[NAMESPACES] = namespaces
  const versionOf = new Map<string, string | undefined>()
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context)
      const shared = Object.hasOwn(MODULES, specifier) ? MODULES[specifier]! : undefined
      if (!shared || !resolved.url.startsWith('file:') || !context.conditions.includes('import')) return resolved
      const file = fileURLToPath(resolved.url)
      if (!versionOf.has(file)) versionOf.set(file, installedVersion(file, shared.packageName))
      if (versionOf.get(file) !== versions[shared.packageName]) return resolved
      return { url: `${SCHEME}${specifier}`, format: 'module', shortCircuit: true }
    },
    load(url, context, nextLoad) {
      if (!url.startsWith(SCHEME)) return nextLoad(url, context)
      const specifier = url.slice(SCHEME.length)
      const namespace = (namespaces[specifier] ??= MODULES[specifier]!.namespace())
      return { format: 'module', source: reexport(specifier, namespace), shortCircuit: true }
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
function reexport(specifier: string, namespace: object): string {
  const names = Object.keys(namespace)
  return [
    `const shared = globalThis[Symbol.for(${JSON.stringify(NAMESPACES.description)})][${JSON.stringify(specifier)}];`,
    ...names.map((name, i) => `const v${i} = shared[${JSON.stringify(name)}];`),
    `export { ${names.map((name, i) => `v${i} as ${JSON.stringify(name)}`).join(', ')} };`,
  ].join('\n')
}
