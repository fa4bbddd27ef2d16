/**
 * A plugin module imported and checked as loading does, and where the package it came from keeps
 * its data (a package may bring adapters and editors beside its plugin).
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { OmhError, PLUGIN_API_UNSUPPORTED, PLUGIN_INVALID, PLUGIN_LOAD_FAILED, SUPPORTED_API_VERSIONS, type Plugin } from '@omh/plugin-api'
import { problemsFromIssues } from '@omh/plugin-kit'
import type { LayerName } from '../settings/load.js'
import { pluginHeaderSchema, pluginSchema } from './shape.js'

/** A plugin as loaded: the object, and who asked for it. */
export interface LoadedPlugin<P extends Plugin = Plugin> {
  readonly plugin: P
  /** The entry as written in `plugins`. */
  readonly specifier: string
  /** The module file it was imported from. */
  readonly module: string
  /** The settings file that named it first, and its layer. */
  readonly namedBy: { readonly file: string; readonly layer: LayerName }
}


/**
 * Imports a plugin module and checks it as loading does: PLUGIN_LOAD_FAILED
 * when the import throws, PLUGIN_INVALID or PLUGIN_API_UNSUPPORTED when what
 * it exports is no plugin this omh speaks. `file` is the file that names it.
 */
export async function importPlugin(specifier: string, module: string, file: string): Promise<Plugin> {
  let loaded: { default?: unknown }
  try {
    loaded = (await import(pathToFileURL(module).href)) as { default?: unknown }
  } catch (error) {
    throw OmhError.of(PLUGIN_LOAD_FAILED, {
      args: [specifier, file, (error as Error)?.message?.split('\n')[0] ?? String(error)],
      hintArgs: [specifier],
      cause: error,
    })
  }
  return checkPlugin(loaded.default, specifier, file)
}

/** The folder of the package a module file belongs to: the nearest one above it holding a package.json. */
export function packageRootOf(module: string): string | undefined {
  for (let dir = path.dirname(module); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir
    if (path.dirname(dir) === dir) return undefined
  }
}

function checkPlugin(candidate: unknown, specifier: string, file: string): Plugin {
  const header = pluginHeaderSchema.safeParse(candidate)
  if (!header.success) {
    const problems = problemsFromIssues(header.error.issues, { data: candidate, schema: pluginHeaderSchema })
    throw OmhError.of(PLUGIN_INVALID, { args: [specifier, file, problems.length], problems })
  }
  if (typeof header.data.apiVersion !== 'number' || !SUPPORTED_API_VERSIONS.has(header.data.apiVersion)) {
    const name = header.data.meta?.name ?? specifier
    throw OmhError.of(PLUGIN_API_UNSUPPORTED, {
      args: [name, header.data.apiVersion, [...SUPPORTED_API_VERSIONS]],
      hintArgs: [name, file],
    })
  }
  const parsed = pluginSchema.safeParse(candidate)
  if (!parsed.success) {
    const problems = problemsFromIssues(parsed.error.issues, { data: candidate, schema: pluginSchema })
    throw OmhError.of(PLUGIN_INVALID, { args: [specifier, file, problems.length], problems })
  }
  return candidate as Plugin
}
