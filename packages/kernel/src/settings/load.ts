import { realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { cosmiconfig, type CosmiconfigResult } from 'cosmiconfig'
import { FILE_UNREADABLE, OmhError, SETTINGS_INVALID, isOmhError, CAPABILITY_CLASSES, type CapabilityClass, type Problem } from '@omh/plugin-api'
import { problemsFromIssues, isObject, readJson, type KeyPath, type Position } from '@omh/plugin-kit'
import { parseToml } from '@omh/plugin-kit/toml'
import { resolvePluginModule } from '../plugins/resolve.js'
import { readTextSafe, type ReadBounds } from '../safe-read.js'
import { assertTrusted, repositoryTrust, type RepositoryTrust, type TrustSubject } from '../trust.js'
import { settingsSchema, type NotifyTerminal, type Settings } from './schema.js'
import { wideningKeys } from './widen.js'
import { chooseDevcontainer, readDevcontainer } from './devcontainer.js'

/**
 * Settings layers, least specific first. A later layer wins for a key.
 * `project` holds the conventional `omh.config.*` / `package.json#omh`, found
 * by searching up from the working directory to the repository root.
 */
export const LAYERS = ['defaults', 'personal', 'project', 'shared', 'local'] as const
export type LayerName = (typeof LAYERS)[number]

/** The layers the user wrote or omh shipped; the rest are the repository's, which anyone who can push to it writes. */
const OWN_LAYERS: readonly LayerName[] = ['defaults', 'personal']

export interface SettingsLayer {
  readonly name: LayerName
  readonly file: string
  readonly settings: Settings
  /** Where a key is written in the file, when its format says. */
  readonly locate?: (p: KeyPath) => Position | undefined
}

/** `[notify]` as omh's notifier uses it: from the user's own layers, with omh's defaults filled in. */
export interface NotifySettings {
  /** A program and its arguments, given each event as JSON on stdin; absent: no program is run. */
  readonly command?: readonly string[]
  /** Which escape, if any, goes to the terminal; absent from the settings: `auto`. */
  readonly terminal: NotifyTerminal
  /** notify-send where there is a desktop session; absent from the settings: true. */
  readonly desktop: boolean
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
  readonly imageRegistry: Decided<string> | undefined
  readonly sessionNetwork: Decided<string> | undefined
  /** The network sessions join on `engine`: its `[runtimes.<engine>] network`, else `[session] network`. */
  readonly networkOn: (engine: string) => Decided<string> | undefined
  readonly sessionLimits: { readonly memory: Decided<string | number> | undefined; readonly pids: Decided<number> | undefined; readonly cpus: Decided<number> | undefined }
  /** `[network] egress`; absent: allowlist. */
  readonly egress: Decided<'allowlist' | 'open' | 'none'> | undefined
  readonly registries: Decided<readonly string[]> | undefined
  /** Every `[network] allow` entry of every layer, least specific first. */
  readonly allow: readonly Decided<string>[]
  /** The most bytes omh reads from one file (`[limits] file_bytes`); absent: DEFAULT_FILE_BYTES. */
  readonly fileBytes: Decided<number> | undefined
  /** `[notify]`, read from the defaults and personal layers alone. */
  readonly notify: NotifySettings
  /** Any other setting, from the most specific layer that has it. */
  readonly last: <T>(pick: (s: Settings) => T | undefined) => Decided<T> | undefined
  /** The user's own settings file (`$OMH_HOME/settings.toml`), there or not: where a hint sends them to change a setting only omh's defaults decided. */
  readonly personalFile?: string
}

/**
 * The file a hint names for changing a setting: the one that decided it,
 * unless that is omh's shipped defaults, which the user never edits; then
 * their own settings file.
 */
export function fileToChange(settings: EffectiveSettings, decided: Decided<unknown> | undefined): string {
  if (decided && decided.layer !== 'defaults') return decided.file
  return settings.personalFile ?? settings.layers.find((l) => l.name === 'personal')?.file ?? 'settings.toml in your omh home'
}

export interface SettingsLocations {
  /** omh's own defaults, naming the built-in plugins. */
  readonly defaults: string
  readonly omhHome: string
  readonly omhState: string
  /** The repository root, when omh runs inside one. */
  readonly repoRoot?: string
  readonly cwd: string
  /** `leave-out`: the repository's layers are left out while any of them waits for trust, instead of refused. */
  readonly untrusted?: 'refuse' | 'leave-out'
}

// Every settings file is read by omh (regular files only, links kept inside the
// repository, bounded); cosmiconfig is left only the importing of a JavaScript one.
const SEARCH_PLACES = ['package.json', 'omh.config.toml', 'omh.config.json', 'omh.config.js', 'omh.config.mjs', 'omh.config.cjs'] as const

/** A settings file as read: its data, and where each key is written when the format says. */
interface ReadLayer {
  readonly file: string
  readonly data: unknown
  readonly locate?: (p: KeyPath) => Position | undefined
}

export async function loadSettings(at: SettingsLocations): Promise<EffectiveSettings> {
  const layers: SettingsLayer[] = []
  const push = (name: LayerName, read: ReadLayer | undefined) => read && layers.push(validate(name, read))
  push('defaults', readToml(at.defaults, {}))
  push('personal', readToml(path.join(at.omhHome, 'settings.toml'), {}))
  if (at.repoRoot) layers.push(...(await repositoryLayers(at.cwd, at.repoRoot, at.omhState, merge(layers), at.untrusted ?? 'refuse')))
  return merge(layers, path.join(at.omhHome, 'settings.toml'))
}

/**
 * The repository's layers. Anyone who can write to the repository (an
 * agent's branch, a clone) writes these, so they are read as data first: a
 * JavaScript config is only noted, and the files that would run code are
 * checked against the user's trust records before anything is imported.
 */
async function repositoryLayers(cwd: string, repoRoot: string, omhState: string, mine: EffectiveSettings, untrusted: 'refuse' | 'leave-out'): Promise<SettingsLayer[]> {
  const seen = readRepository(cwd, repoRoot, mine)
  // An image definition waits for trust only where a session is built (`requireEnvironmentTrust`).
  const now = seen.subjects.filter((s) => s.reason !== 'environment')
  if (now.length) {
    const trust = await repositoryTrust(repoRoot, omhState, now)
    if (untrusted === 'leave-out' && trust.files.some((f) => f.state !== 'trusted')) return []
    assertTrusted(trust)
  }
  const project = seen.project && 'code' in seen.project ? await importLayer(seen.project.code) : seen.project
  return [
    ...(project ? [validate('project', project)] : []),
    ...seen.layers,
  ]
}

/** What the user's trust records say of the repository's files that load code; nothing is imported. */
export async function inspectRepositoryTrust(at: SettingsLocations & { repoRoot: string }): Promise<RepositoryTrust> {
  const mine = merge([readToml(at.defaults, {}), readToml(path.join(at.omhHome, 'settings.toml'), {})].flatMap((read, n) => (read ? [validate(n ? 'personal' : 'defaults', read)] : [])))
  return repositoryTrust(at.repoRoot, at.omhState, readRepository(at.cwd, at.repoRoot, mine).subjects)
}

/**
 * REPOSITORY_UNTRUSTED when an image definition of the repository's (its
 * devcontainer, a Containerfile) is not trusted with its present content:
 * what builds a session asks this first, since a build runs with network.
 */
export async function requireEnvironmentTrust(at: SettingsLocations & { repoRoot: string }): Promise<void> {
  const trust = await inspectRepositoryTrust(at)
  assertTrusted({ ...trust, files: trust.files.filter((f) => f.reason === 'environment') })
}

interface RepositoryRead {
  /** The project layer: read, or a JavaScript config still to be imported. */
  readonly project: ReadLayer | { readonly code: string } | undefined
  /** The shared and local layers. */
  readonly layers: SettingsLayer[]
  /** Every file that would run code, or makes omh run it. */
  readonly subjects: TrustSubject[]
}

/** Reads the `project`, `shared` and `local` layers, running nothing; `mine` is what the user's own layers allow. */
function readRepository(cwd: string, repoRoot: string, mine: EffectiveSettings): RepositoryRead {
  const bounds = { within: repoRoot }
  const subjects: TrustSubject[] = []
  const namingPlugins = (read: ReadLayer, key: readonly string[]) => {
    const plugins = (read.data as { plugins?: unknown } | undefined)?.plugins
    if (!Array.isArray(plugins) || !plugins.length) return
    subjects.push({ file: read.file, reason: 'settings', key: [...key] })
    for (const specifier of plugins) {
      if (typeof specifier !== 'string') continue
      const module = repositoryCode(specifier, path.dirname(read.file), repoRoot)
      if (module) subjects.push({ file: module, reason: 'plugin' })
    }
  }
  const widening = (layer: SettingsLayer, prefix: readonly string[]) => {
    const keys = wideningKeys(layer.settings, mine)
    if (keys.length) subjects.push({ file: layer.file, reason: 'sandbox', key: [...prefix, ...keys[0]!], widens: keys })
  }
  const project = searchUp(cwd, repoRoot)
  if (project && 'code' in project) subjects.push({ file: project.code, reason: 'code' })
  else if (project) {
    const inPackage = path.basename(project.file) === 'package.json'
    namingPlugins(project, inPackage ? ['omh', 'plugins'] : ['plugins'])
    widening(validate('project', project), inPackage ? ['omh'] : [])
  }
  const layers: SettingsLayer[] = []
  for (const [name, file] of [
    ['shared', path.join(repoRoot, '.omh', 'settings.toml')],
    ['local', path.join(repoRoot, '.omh', 'settings.local.toml')],
  ] as const) {
    const read = readToml(file, bounds)
    if (!read) continue
    namingPlugins(read, ['plugins'])
    const layer = validate(name, read)
    widening(layer, [])
    layers.push(layer)
  }
  subjects.push(...environmentFiles(repoRoot, merge([...mine.layers, ...layers])))
  return { project, layers, subjects }
}

/**
 * The repository's image definitions the settings choose: the devcontainer.json
 * (and the Containerfile it builds), and `[image] containerfile`. A file that
 * cannot be read is refused where the environment is planned, not here.
 */
function environmentFiles(repoRoot: string, settings: EffectiveSettings): TrustSubject[] {
  const files: TrustSubject[] = []
  const chosen = chooseDevcontainer(repoRoot, settings.last((s) => s.image?.devcontainer)?.value)
  if ('file' in chosen) {
    files.push({ file: chosen.file, reason: 'environment' })
    try {
      const build = readDevcontainer(chosen.file, repoRoot, settings.fileBytes?.value).build
      if (build) files.push({ file: build.dockerfile, reason: 'environment' })
    } catch {}
  }
  const containerfile = settings.last((s) => s.image?.containerfile)
  if (containerfile) files.push({ file: path.join(repoRoot, containerfile.value), reason: 'environment' })
  return files.filter((f) => statSync(f.file, { throwIfNoEntry: false })?.isFile())
}

/**
 * The file a repository's `plugins` entry would import, when trust must hash
 * it: any file named by path, and whatever a package name resolves to inside
 * the repository, through links too (a workspace's `node_modules/x ->
 * ../plugins/x`, a vendored package). A package that resolves outside the
 * repository is one the user installed. Node imports a module at its real
 * path, so that is the path hashed.
 */
function repositoryCode(specifier: string, fromDir: string, repoRoot: string): string | undefined {
  const module = resolvePluginModule(specifier, fromDir)
  if (!module) return undefined
  let real: string
  let root: string
  try {
    real = realpathSync(module)
    root = realpathSync(repoRoot)
  } catch {
    return undefined
  }
  if (!statSync(real, { throwIfNoEntry: false })?.isFile()) return undefined
  const inside = path.relative(root, real)
  const within = !inside.startsWith('..') && !path.isAbsolute(inside)
  if (within) return path.join(repoRoot, inside)
  return specifier.startsWith('.') || path.isAbsolute(specifier) ? real : undefined
}

function readToml(file: string, bounds: ReadBounds): ReadLayer | undefined {
  const text = readTextSafe(file, bounds)
  if (text === undefined) return undefined
  const doc = parseToml(text, file)
  return { file, data: doc.data, locate: doc.locate }
}

/**
 * The nearest conventional config file from `cwd` up to the repository root,
 * and no further. A `package.json` without `omh`, or a blank file, is passed
 * by. A JavaScript config is found, not run: it is the layer, whatever it
 * exports, once trusted.
 */
function searchUp(cwd: string, repoRoot: string): ReadLayer | { code: string } | undefined {
  if (path.relative(repoRoot, cwd).startsWith('..')) cwd = repoRoot
  const bounds = { within: repoRoot }
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    for (const place of SEARCH_PLACES) {
      const file = path.join(dir, place)
      const text = readTextSafe(file, bounds)
      if (text === undefined || !text.trim()) continue
      if (/\.[cm]?js$/.test(place)) return { code: file }
      const read = place.endsWith('.toml') ? readToml(file, bounds) : jsonLayer(file, text)
      if (read) return read
    }
    if (dir === repoRoot || path.dirname(dir) === dir) return undefined
  }
}

function jsonLayer(file: string, text: string): ReadLayer | undefined {
  const read = readJson(text, file)
  if (!read.ok) throw OmhError.of(SETTINGS_INVALID, { args: [file, 1], problems: [read.problem] })
  if (path.basename(file) !== 'package.json') return { file, data: read.doc.data, locate: read.doc.locate }
  const data = read.doc.data
  if (!isObject(data) || data['omh'] === undefined) return undefined
  return { file, data: data['omh'], locate: (p) => read.doc.locate(['omh', ...p]) }
}

/** Imports a JavaScript config, which only a trusted repository gets to. */
async function importLayer(file: string): Promise<ReadLayer | undefined> {
  const explorer = cosmiconfig('omh', { searchStrategy: 'none', cache: false })
  let result: CosmiconfigResult
  try {
    result = await explorer.load(file)
  } catch (error) {
    if (isOmhError(error)) throw error
    throw OmhError.of(FILE_UNREADABLE, { args: [file, (error as Error).message], cause: error })
  }
  return result && !result.isEmpty ? { file, data: result.config } : undefined
}

function validate(name: LayerName, read: ReadLayer): SettingsLayer {
  const data: unknown = read.data ?? {}
  const parsed = settingsSchema.safeParse(data)
  const problems = parsed.success
    ? []
    : problemsFromIssues(parsed.error.issues, {
        file: read.file,
        data,
        schema: settingsSchema,
        ...(read.locate ? { locate: read.locate } : {}),
      })
  if (!OWN_LAYERS.includes(name) && isObject(data) && data['notify'] !== undefined) problems.push(notifyInRepository(read))
  if (parsed.success && !problems.length) return { name, file: read.file, settings: parsed.data, ...(read.locate ? { locate: read.locate } : {}) }
  throw OmhError.of(SETTINGS_INVALID, { args: [read.file, problems.length], problems })
}

/**
 * `[notify] command` runs on the host, outside every sandbox, so the program
 * it names must be one the user chose: no trust makes a repository's good.
 */
function notifyInRepository(read: ReadLayer): Problem {
  const at = read.locate?.(['notify'])
  return {
    file: read.file,
    ...(at ? { line: at.line, column: at.column } : {}),
    path: 'notify',
    message: "a repository's settings cannot say how omh notifies you: its command would run on your machine, outside the sandbox. Move [notify] to your own settings.toml ($OMH_HOME/settings.toml)",
  }
}

/** A setting from the most specific of `layers` that has it. */
const lastIn =
  (layers: readonly SettingsLayer[]) =>
  <T>(pick: (s: Settings) => T | undefined): Decided<T> | undefined => {
    for (let n = layers.length - 1; n >= 0; n--) {
      const layer = layers[n]!
      const value = pick(layer.settings)
      if (value !== undefined) return { value, layer: layer.name, file: layer.file }
    }
    return undefined
  }

export function merge(layers: readonly SettingsLayer[], personalFile?: string): EffectiveSettings {
  const last = lastIn(layers)
  const lastOwn = lastIn(layers.filter((l) => OWN_LAYERS.includes(l.name)))
  const command = lastOwn((s) => s.notify?.command)?.value
  const use: Partial<Record<CapabilityClass, Decided<readonly string[]>>> = {}
  for (const capability of CAPABILITY_CLASSES) {
    const decided = last((s) => s.use?.[capability])
    if (decided) use[capability] = decided
  }
  return {
    layers,
    ...(personalFile ? { personalFile } : {}),
    plugins: layers.flatMap((l) => (l.settings.plugins ?? []).map((value) => ({ value, layer: l.name, file: l.file }))),
    runtime: last((s) => s.runtime),
    account: last((s) => s.account),
    use,
    imageBase: last((s) => s.image?.base),
    imageNetwork: last((s) => s.image?.network),
    imageRegistry: last((s) => s.image?.registry),
    sessionNetwork: last((s) => s.session?.network),
    networkOn: (engine) => last((s) => s.runtimes?.[engine]?.network) ?? last((s) => s.session?.network),
    sessionLimits: { memory: last((s) => s.session?.memory), pids: last((s) => s.session?.pids), cpus: last((s) => s.session?.cpus) },
    egress: last((s) => s.network?.egress),
    registries: last((s) => s.network?.registries),
    allow: layers.flatMap((l) => (l.settings.network?.allow ?? []).map((value) => ({ value, layer: l.name, file: l.file }))),
    fileBytes: last((s) => s.limits?.file_bytes),
    notify: {
      ...(command ? { command } : {}),
      terminal: lastOwn((s) => s.notify?.terminal)?.value ?? 'auto',
      desktop: lastOwn((s) => s.notify?.desktop)?.value ?? true,
    },
    last,
  }
}
