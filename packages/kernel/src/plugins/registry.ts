/**
 * The plugins the settings name: each resolved to its module when the kernel is made, and
 * imported either then (one whose package declares nothing) or when a command first needs what its
 * package declares (`declared.ts`). Imported plugins are tapped into the kernel's hooks at their
 * settings layer's stage, so the order they are asked in never depends on when they were imported.
 */
import path from 'node:path'
import type { SyncHook } from 'tapable'
import { OmhError, PLUGIN_NOT_FOUND, SETTINGS_INVALID, type Plugin, type Problem, type RendererPlugin, type RuntimePlugin } from '@omh/plugin-api'
import { tapRenderer, type RenderHooks } from '../render/render.js'
import { tapRuntime, type RuntimeHook } from '../runtime/resolve.js'
import { LAYERS, type EffectiveSettings, type LayerName } from '../settings/load.js'
import { runtimeOptions, unknownEngines } from '../settings/runtime-options.js'
import { checkDeclared, readDeclaration, undeclaredTap, type Declared, type ExtensionHookName } from './declared.js'
import { applyExtension, type LaunchTaps } from './extensions.js'
import { guardSync } from './guard.js'
import { importPlugin, packageRootOf, type LoadedPlugin } from './load.js'
import { resolvePluginModule } from './resolve.js'

/** The kernel's hooks plugins are tapped into. */
export interface PluginHooks extends RenderHooks {
  readonly resolveRuntime: RuntimeHook
  readonly failed: SyncHook<[OmhError]>
}

/** A plugin the settings name, resolved to its module, with what its package declares it provides. */
interface PluginEntry {
  readonly specifier: string
  readonly module: string
  readonly file: string
  readonly layer: LayerName
  /** Its place among the settings' plugins. */
  readonly order: number
  readonly declared?: Declared
  loading?: Promise<Plugin>
}

/** Where a plugin not found beside the settings file that names it is looked for, and the file settings problems are said to be in when no layer holds them. */
export interface RegistryPlaces {
  readonly fallbackDirs: readonly string[]
  readonly settingsFile: string
}

export class PluginRegistry {
  readonly #settings: EffectiveSettings
  readonly #hooks: PluginHooks
  readonly #where: RegistryPlaces
  /** Every plugin the settings name, imported or not yet. */
  readonly #entries: PluginEntry[] = []
  readonly #plugins: LoadedPlugin[] = []
  readonly #orderOf = new WeakMap<LoadedPlugin, number>()
  readonly #renderers = new Map<string, LoadedPlugin<RendererPlugin>[]>()
  readonly #runtimes: LoadedPlugin<RuntimePlugin>[] = []
  readonly #launchTaps: { beforeLaunch: LaunchTaps['beforeLaunch'][number][]; launched: LaunchTaps['launched'][number][] } = { beforeLaunch: [], launched: [] }
  /** What `failed` taps threw while the last failure was announced. */
  readonly failedFaults: OmhError[] = []

  private constructor(settings: EffectiveSettings, hooks: PluginHooks, where: RegistryPlaces) {
    this.#settings = settings
    this.#hooks = hooks
    this.#where = where
  }

  /**
   * Resolves every plugin the settings name, reads what each package declares, and imports those
   * that declare nothing, and a runtime whose table the settings hold (so that table is checked by
   * every command).
   */
  static async load(settings: EffectiveSettings, hooks: PluginHooks, where: RegistryPlaces): Promise<PluginRegistry> {
    const registry = new PluginRegistry(settings, hooks, where)
    await registry.#resolveAll()
    return registry
  }

  async #resolveAll(): Promise<void> {
    for (const entry of this.#settings.plugins) {
      const fromDir = path.dirname(entry.file)
      const module = resolvePluginModule(entry.value, fromDir) ?? (entry.value.startsWith('.') ? undefined : this.#fallback(entry.value))
      if (!module) throw OmhError.of(PLUGIN_NOT_FOUND, { args: [entry.value, entry.file], hintArgs: [entry.value, fromDir] })
      if (this.#entries.some((p) => p.module === module)) continue
      const root = isPackageName(entry.value) ? packageRootOf(module) : undefined
      const declared = root ? readDeclaration(root, entry.value, entry.file) : undefined
      this.#entries.push({ specifier: entry.value, module, file: entry.file, layer: entry.layer, order: this.#entries.length, ...(declared ? { declared } : {}) })
    }
    const tabled = new Set(this.#settings.layers.flatMap((l) => Object.keys(l.settings.runtimes ?? {})))
    const now = this.#entries.filter(({ declared }) => !declared || ('runtime' in declared.declaration && tabled.has(declared.declaration.runtime.engine)))
    await this.#load(now, () => unknownEngines(this.#settings.layers, this.engines()))
  }

  #fallback(specifier: string): string | undefined {
    for (const dir of this.#where.fallbackDirs) {
      const hit = resolvePluginModule(specifier, dir)
      if (hit) return hit
    }
    return undefined
  }

  /** The plugins imported so far, in the order the settings name them. */
  get plugins(): readonly LoadedPlugin[] {
    return this.#plugins
  }

  /** Every plugin the settings name, each imported now if it was not yet. */
  async all(): Promise<readonly LoadedPlugin[]> {
    await this.#load(this.#entries)
    return this.#plugins
  }

  /** Every render string some renderer answers, imported or declared, sorted. */
  formats(): string[] {
    const declared = this.#entries.flatMap(({ declared: d }) => (d && 'renderer' in d.declaration ? d.declaration.renderer.formats : []))
    return [...new Set([...this.#renderers.keys(), ...declared])].sort()
  }

  /** The renderer asked first for a format, among those imported (`need` imports the rest). */
  rendererFor(format: string): LoadedPlugin<RendererPlugin> | undefined {
    return this.#renderers.get(format)?.[0]
  }

  /** Imports every renderer that declares one of these formats or combines one of these syntaxes. */
  need({ formats = [], combines = [] }: { formats?: readonly string[]; combines?: readonly string[] }): Promise<void> {
    return this.#load(
      this.#entries.filter(({ declared: d }) => {
        if (!d || !('renderer' in d.declaration)) return false
        const { renderer } = d.declaration
        return renderer.formats.some((f) => formats.includes(f)) || (renderer.combines ?? []).some((c) => combines.includes(c))
      }),
    )
  }

  /** Runtime plugins imported so far, in the order they are asked: most specific layer first, then as named. */
  get runtimes(): readonly LoadedPlugin<RuntimePlugin>[] {
    return this.#runtimes
  }

  /** Imports the runtimes that drive `engine`, or every runtime for `auto`. */
  needRuntime(engine: string): Promise<void> {
    return this.#load(this.#entries.filter(({ declared: d }) => d && 'runtime' in d.declaration && (engine === 'auto' || d.declaration.runtime.engine === engine)))
  }

  /** Every engine some runtime drives, imported or declared, in the order they are asked. */
  engines(): string[] {
    const ranked = [...this.#entries].sort((a, b) => LAYERS.indexOf(b.layer) - LAYERS.indexOf(a.layer) || a.order - b.order)
    const engines = ranked.flatMap(({ declared, module }) => {
      if (declared) return 'runtime' in declared.declaration ? [declared.declaration.runtime.engine] : []
      const plugin = this.#plugins.find((p) => p.module === module)?.plugin
      return plugin?.kind === 'runtime' ? [plugin.engine] : []
    })
    return [...new Set(engines)]
  }

  /** Imports every extension that declares one of these hooks, and returns what they tap into a launch. */
  async extensions(hooks: readonly ExtensionHookName[]): Promise<LaunchTaps> {
    await this.#load(this.#entries.filter(({ declared: d }) => d && 'extension' in d.declaration && d.declaration.extension.hooks.some((h) => hooks.includes(h))))
    return this.#launchTaps
  }

  /** The `adapters/` or `editors/` folder of each plugin package, so one package can bring a whole harness. */
  shipped(folder: string): { dir: string; plugin: string }[] {
    return this.#entries.flatMap(({ declared, specifier, module }) => {
      const root = isPackageName(specifier) ? packageRootOf(module) : undefined
      // A declared package is known by its package name whether imported or not; any other by its plugin's own.
      const plugin = declared?.packageName ?? this.#plugins.find((p) => p.module === module)?.plugin.meta.name
      return root && plugin ? [{ dir: path.join(root, folder), plugin }] : []
    })
  }

  /**
   * Imports the entries not imported yet, all at once; taps each into the hooks, configures the
   * runtimes among them (their settings' problems come after `problemsFirst`'s) and applies the
   * extensions.
   */
  async #load(entries: readonly PluginEntry[], problemsFirst: () => Problem[] = () => []): Promise<void> {
    const fresh = entries.filter((e) => !e.loading)
    for (const entry of fresh) entry.loading = importPlugin(entry.specifier, entry.module, entry.file)
    const settled = await Promise.allSettled(entries.map((e) => e.loading!))
    const failed = settled.find((r) => r.status === 'rejected')
    if (failed) throw failed.reason
    const records = fresh.map((entry) => {
      const plugin = (settled[entries.indexOf(entry)] as PromiseFulfilledResult<Plugin>).value
      if (entry.declared) checkDeclared(plugin, entry.declared, entry.specifier, entry.file)
      const record: LoadedPlugin = { plugin, specifier: entry.specifier, module: entry.module, namedBy: { file: entry.file, layer: entry.layer } }
      this.#orderOf.set(record, entry.order)
      return { entry, record }
    })
    for (const { record } of records) this.#register(record)
    const order = (p: LoadedPlugin) => this.#orderOf.get(p)!
    // Most specific layer first, then in the settings' order.
    const byRank = (a: LoadedPlugin, b: LoadedPlugin) => rank(b) - rank(a) || order(a) - order(b)
    this.#plugins.sort((a, b) => order(a) - order(b))
    for (const list of this.#renderers.values()) list.sort(byRank)
    this.#runtimes.sort(byRank)
    const runtimes = runtimeOptions(this.#settings.layers, records.flatMap(({ record }) => (record.plugin.kind === 'runtime' ? [record.plugin] : [])))
    const problems = [...problemsFirst(), ...runtimes.problems]
    if (problems.length) throw OmhError.of(SETTINGS_INVALID, { args: [problems[0]!.file ?? this.#where.settingsFile, problems.length], problems })
    for (const [runtime, options] of runtimes.options) guardSync(runtime.meta.name, 'RuntimePlugin.configure', () => runtime.configure?.(options))
    for (const { entry, record } of records) {
      if (record.plugin.kind !== 'extension') continue
      const { declared } = entry
      const hooks = declared && 'extension' in declared.declaration ? declared.declaration.extension.hooks : undefined
      const [undeclared] = applyExtension(record.plugin, { failed: this.#hooks.failed, failedFaults: this.failedFaults, launch: this.#launchTaps }, hooks)
      if (declared && undeclared) throw undeclaredTap(declared, undeclared, entry.specifier, entry.file)
    }
  }

  #register(record: LoadedPlugin): void {
    const { plugin } = record
    this.#plugins.push(record)
    // Plugins are imported when needed, not in the settings' order: the stage alone orders the
    // taps, most specific layer first, then as the settings name them.
    const stage = -rank(record) * 10_000 + this.#orderOf.get(record)!
    if (plugin.kind === 'renderer') {
      for (const format of plugin.formats) {
        const list = this.#renderers.get(format) ?? []
        list.push(record as LoadedPlugin<RendererPlugin>)
        this.#renderers.set(format, list)
      }
      tapRenderer(this.#hooks, plugin, stage)
    } else if (plugin.kind === 'runtime') {
      this.#runtimes.push(record as LoadedPlugin<RuntimePlugin>)
      tapRuntime(this.#hooks.resolveRuntime, plugin, stage)
    }
  }
}

const rank = (p: LoadedPlugin) => LAYERS.indexOf(p.namedBy.layer)

/** A plugin named as a package, not as a file: only a package has a package.json of its own to declare in. */
const isPackageName = (specifier: string) => !specifier.startsWith('.') && !path.isAbsolute(specifier)
