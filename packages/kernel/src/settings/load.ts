import { statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { cosmiconfig, defaultLoaders, type CosmiconfigResult, type Loader } from 'cosmiconfig'
import { FILE_UNREADABLE, OmhError, SETTINGS_INVALID, isOmhError } from '@omh/plugin-api'
import { problemsFromIssues } from '../issues.js'
import { CAPABILITY_CLASSES, type CapabilityClass } from '@omh/plugin-api'
import { parseToml, type TomlDocument } from '@omh/plugin-kit/toml'
import { resolvePluginModule } from '../plugins/resolve.js'
import { assertTrusted, repositoryTrust, type RepositoryTrust, type TrustSubject } from '../trust.js'
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

/** Where the `project` layer may be, in the order each directory is searched. */
const PROJECT_PLACES = ['package.json', 'omh.config.toml', 'omh.config.json', 'omh.config.js', 'omh.config.mjs', 'omh.config.cjs']

/** The extensions cosmiconfig's own loaders run as code. */
const CODE_EXTENSIONS = ['.js', '.mjs', '.cjs', '.ts']

export async function loadSettings(at: SettingsLocations): Promise<EffectiveSettings> {
  // The user's own layers: whatever they pull in is theirs.
  const explorer = cosmiconfig('omh', { loaders: { '.toml': tomlLoader }, searchStrategy: 'none', cache: false })
  const layers: SettingsLayer[] = []
  const push = (layer: SettingsLayer | undefined) => layer && layers.push(layer)
  push(await explicit(explorer, 'defaults', at.defaults))
  push(await explicit(explorer, 'personal', path.join(at.omhHome, 'settings.toml')))
  if (at.repoRoot) layers.push(...(await repositoryLayers(at.cwd, at.repoRoot, at.omhHome)))
  return merge(layers)
}

/**
 * The repository's layers. Anyone who can write to the repository (an
 * agent's branch, a clone) writes these, so they are read first with every
 * code loader disarmed; the files that would run code are hashed and checked
 * against the user's trust records, and code is imported only after that.
 */
async function repositoryLayers(cwd: string, repoRoot: string, omhHome: string): Promise<SettingsLayer[]> {
  const seen = await readRepository(cwd, repoRoot, new Set())
  if (!seen.subjects.length) return seen.layers
  assertTrusted(await repositoryTrust(repoRoot, omhHome, seen.subjects))
  return seen.code.length ? (await readRepository(cwd, repoRoot, new Set(seen.code))).layers : seen.layers
}

/** What the user's trust records say of the repository's files that load code; nothing is imported. */
export async function inspectRepositoryTrust(at: { cwd: string; repoRoot: string; omhHome: string }): Promise<RepositoryTrust> {
  const seen = await readRepository(at.cwd, at.repoRoot, new Set())
  return repositoryTrust(at.repoRoot, at.omhHome, seen.subjects)
}

interface RepositoryRead {
  readonly layers: SettingsLayer[]
  /** Every file that would run code, or makes omh run it. */
  readonly subjects: TrustSubject[]
  /** The JavaScript files among them, which the layers hold only when `runnable` let them run. */
  readonly code: string[]
}

/**
 * Reads the `project`, `shared` and `local` layers without running code
 * outside `runnable`: cosmiconfig loads JavaScript by extension, wherever
 * the file is named (a search place, a `$import`), so every code loader is
 * replaced by one that runs only those files and otherwise notes the file and
 * reads it as an empty table. The project layer is searched here, not by cosmiconfig,
 * whose search places a meta config in the working directory may change.
 */
async function readRepository(cwd: string, repoRoot: string, runnable: ReadonlySet<string>): Promise<RepositoryRead> {
  let read: string[] = []
  let code: string[] = []
  const reading = (loader: Loader): Loader => (file, content) => {
    read.push(path.resolve(file))
    return loader(file, content)
  }
  const gated = (loader: Loader): Loader => (file, content) => {
    const at = path.resolve(file)
    code.push(at)
    return runnable.has(at) ? loader(file, content) : {}
  }
  const loaders = Object.fromEntries(
    Object.entries({ ...defaultLoaders, '.toml': tomlLoader }).map(([ext, loader]) => [ext, CODE_EXTENSIONS.includes(ext) ? gated(loader) : reading(loader)]),
  )
  const explorer = cosmiconfig('omh', { loaders, searchStrategy: 'none', cache: false })

  const out: RepositoryRead = { layers: [], subjects: [], code: [] }
  const load = async (name: LayerName, file: string, empty: 'layer' | 'none') => {
    read = []
    code = []
    const result = await loadFile(explorer, file)
    const layer = result && !(empty === 'none' && result.isEmpty) ? await validate(name, result) : undefined
    const plugins = layer?.settings.plugins ?? []
    if (layer) out.layers.push(layer)
    if (code.length || plugins.length) {
      const key = plugins.length ? (path.basename(file) === 'package.json' ? ['omh', 'plugins'] : ['plugins']) : ['$import']
      out.subjects.push(...read.map((f) => ({ file: f, reason: 'settings' as const, ...(f === path.resolve(file) ? { key } : {}) })))
    }
    out.subjects.push(...code.map((f) => ({ file: f, reason: 'code' as const })))
    out.code.push(...code)
    for (const specifier of plugins) {
      if (!specifier.startsWith('.') && !path.isAbsolute(specifier)) continue
      const module = resolvePluginModule(specifier, path.dirname(file))
      if (module && statSync(module, { throwIfNoEntry: false })?.isFile()) out.subjects.push({ file: module, reason: 'plugin' })
    }
    return layer !== undefined || code.includes(path.resolve(file))
  }

  await searchUp(cwd, repoRoot, (file) => load('project', file, 'none'))
  await load('shared', path.join(repoRoot, '.omh', 'settings.toml'), 'layer')
  await load('local', path.join(repoRoot, '.omh', 'settings.local.toml'), 'layer')
  return out
}

/** Loads one settings file; undefined when it does not exist. */
async function loadFile(explorer: { load(file: string): Promise<CosmiconfigResult> }, file: string): Promise<CosmiconfigResult> {
  try {
    return await explorer.load(file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return null
    if (isOmhError(error)) throw error
    throw OmhError.of(FILE_UNREADABLE, { args: [file, (error as Error).message], cause: error })
  }
}

async function explicit(
  explorer: { load(file: string): Promise<CosmiconfigResult> },
  name: LayerName,
  file: string,
): Promise<SettingsLayer | undefined> {
  const result = await loadFile(explorer, file)
  return result ? validate(name, result) : undefined
}

/**
 * Offers each conventional config file from `cwd` up to the repository root,
 * and no further, nearest first, until `found` takes one.
 */
async function searchUp(cwd: string, repoRoot: string, found: (file: string) => Promise<boolean>): Promise<void> {
  if (path.relative(repoRoot, cwd).startsWith('..')) cwd = repoRoot
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    for (const place of PROJECT_PLACES) {
      const file = path.join(dir, place)
      if (statSync(file, { throwIfNoEntry: false })?.isFile() && (await found(file))) return
    }
    if (dir === repoRoot || path.dirname(dir) === dir) return
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
