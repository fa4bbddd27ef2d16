/**
 * Plugin code runs behind a guard: whatever it throws is reported as PLUGIN_ERROR naming the
 * plugin and the hook it ran for, so a user knows whose code failed.
 */
import { OmhError, PLUGIN_ERROR, isOmhError } from '@omh/plugin-api'

/** Runs plugin code, wrapping anything it throws with the plugin's and the hook's names. */
export async function guard<T>(plugin: string, hook: string, run: () => Promise<T> | T): Promise<T> {
  try {
    return await run()
  } catch (error) {
    throw wrap(plugin, hook, error)
  }
}

export function guardSync<T>(plugin: string, hook: string, run: () => T): T {
  try {
    return run()
  } catch (error) {
    throw wrap(plugin, hook, error)
  }
}

export function wrap(plugin: string, hook: string, error: unknown): OmhError {
  if (isOmhError(error) && error.code === 'PLUGIN_ERROR') return error
  const what = error instanceof Error ? error.message : String(error)
  return OmhError.of(PLUGIN_ERROR, { args: [plugin, hook, what], hintArgs: [plugin], cause: error, details: { plugin, hook } })
}

