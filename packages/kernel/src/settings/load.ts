import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { cosmiconfig, type CosmiconfigResult } from 'cosmiconfig'
import { FILE_UNREADABLE, OmhError, SETTINGS_INVALID, isOmhError } from '@omh/plugin-api'
import { problemsFromIssues } from '../issues.js'
import { CAPABILITY_CLASSES, type CapabilityClass } from '@omh/plugin-api'
import { parseToml, type TomlDocument } from '@omh/plugin-kit'
import { isUserFile } from '../user-files.js'
import { settingsSchema, type Settings } from './schema.js'

/**
 * Settings layers, least specific first. A later layer wins for a key.
 * `project` holds the conventional `omh.config.*` / `package.json#omh`, found
 * by searching up from the working directory to the repository root.
 */
export const LAYERS = ['defaults', 'personal', 'project', 'shared', 'local'] as const
export type LayerName = (typeof LAYERS)[number]

export interface SettingsLayer {
  readonly name: LayerName
  readonly file: string
  readonly settings: Settings
}

/** A value and the layer that decided it. */
export interface Decided<T> {
  readonly value: T
  readonly layer: LayerName
  readonly file: string
}

export interface EffectiveSettings {
  readonly layers: readonly SettingsLayer[]
  /** Every plugin entry of every layer, least specific first, with the file that named it. */
  readonly plugins: readonly Decided<string>[]
  readonly runtime: Decided<string> | undefined
  readonly account: Decided<string> | undefined
  /** Per capability, the allowlist of the most specific layer that has one. */
  readonly use: Readonly<Partial<Record<CapabilityClass, Decided<readonly string[]>>>>
  readonly imageBase: Decided<string> | undefined
  readonly imageNetwork: Decided<string> | undefined
  readonly sessionNetwork: Decided<string> | undefined
}

export interface SettingsLocations {
  /** omh's own defaults, naming the built-in plugins. */
  readonly defaults: string
  readonly omhHome: string
  /** The repository root, when omh runs inside one. */
  readonly repoRoot?: string
  readonly cwd: string
}

const tomlLoader = async (file: string, content: string) => parseToml(content, file).data

export async function loadSettings(at: SettingsLocations): Promise<EffectiveSettings> {
  const explorer = cosmiconfig('omh', {
    searchPlaces: [
      'package.json',
      'omh.config.toml',
      'omh.config.json',
      'omh.config.js',
      'omh.config.mjs',
      'omh.config.cjs',
    ],
    loaders: { '.toml': tomlLoader },
    searchStrategy: 'none',
    cache: false,
  })

  const explicit = async (name: LayerName, file: string): Promise<SettingsLayer | undefined> => {
    if (!isUserFile(file)) return undefined
    let result: CosmiconfigResult
    try {
      result = await explorer.load(file)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT') return undefined
      if (isOmhError(error)) throw error
      throw OmhError.of(FILE_UNREADABLE, { args: [file, (error as Error).message], cause: error })
    }
    return result ? validate(name, result) : undefined
  }

  const layers: SettingsLayer[] = []
  const push = (layer: SettingsLayer | undefined) => layer && layers.push(layer)
  push(await explicit('defaults', at.defaults))
  push(await explicit('personal', path.join(at.omhHome, 'settings.toml')))
  if (at.repoRoot) {
    const found = await searchUp(explorer, at.cwd, at.repoRoot)
    if (found) push(await validate('project', found))
    push(await explicit('shared', path.join(at.repoRoot, '.omh', 'settings.toml')))
    push(await explicit('local', path.join(at.repoRoot, '.omh', 'settings.local.toml')))
  }
  return merge(layers)
}

/** The nearest conventional config file from `cwd` up to the repository root, and no further. */
async function searchUp(
  explorer: { search(from: string): Promise<CosmiconfigResult> },
  cwd: string,
  repoRoot: string,
): Promise<CosmiconfigResult> {
  if (path.relative(repoRoot, cwd).startsWith('..')) cwd = repoRoot
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const found = await explorer.search(dir)
    if (found && !found.isEmpty) return found
    if (dir === repoRoot || path.dirname(dir) === dir) return null
  }
}

async function validate(name: LayerName, result: NonNullable<CosmiconfigResult>): Promise<SettingsLayer> {
  const data: unknown = result.config ?? {}
  const parsed = settingsSchema.safeParse(data)
  if (parsed.success) return { name, file: result.filepath, settings: parsed.data }
  let doc: TomlDocument | undefined
  if (result.filepath.endsWith('.toml')) doc = parseToml(await readFile(result.filepath, 'utf8'), result.filepath)
  const problems = problemsFromIssues(parsed.error.issues, {
    file: result.filepath,
    data,
    schema: settingsSchema,
    ...(doc ? { locate: doc.locate } : {}),
  })
  throw OmhError.of(SETTINGS_INVALID, { args: [result.filepath, problems.length], problems })
}

export function merge(layers: readonly SettingsLayer[]): EffectiveSettings {
  const last = <T>(pick: (s: Settings) => T | undefined): Decided<T> | undefined => {
    for (let n = layers.length - 1; n >= 0; n--) {
      const layer = layers[n]!
      const value = pick(layer.settings)
      if (value !== undefined) return { value, layer: layer.name, file: layer.file }
    }
    return undefined
  }
  const use: Partial<Record<CapabilityClass, Decided<readonly string[]>>> = {}
  for (const capability of CAPABILITY_CLASSES) {
    const decided = last((s) => s.use?.[capability])
    if (decided) use[capability] = decided
  }
  return {
    layers,
    plugins: layers.flatMap((l) => (l.settings.plugins ?? []).map((value) => ({ value, layer: l.name, file: l.file }))),
    runtime: last((s) => s.runtime),
    account: last((s) => s.account),
    use,
    imageBase: last((s) => s.image?.base),
    imageNetwork: last((s) => s.image?.network),
    sessionNetwork: last((s) => s.session?.network),
  }
}
