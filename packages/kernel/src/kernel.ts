/**
 * The kernel: a facade over plugin loading (plugins/), the render pipeline (render/) and the
 * runtime's choice (runtime/), behind one frozen table of tapable hooks. It holds what those
 * share: the settings, the loaded plugins and the hooks they are tapped into.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { SyncHook } from 'tapable'
import {
  ADAPTER_INVALID,
  ADAPTER_NOT_FOUND,
  EDITOR_INVALID,
  EDITOR_NOT_FOUND,
  OmhError,
  PLUGIN_NOT_FOUND,
  SETTINGS_INVALID,
  type CapabilityClass,
  type Hook,
  type Problem,
  type ProfileItems,
  type RendererPlugin,
  type RuntimeContext,
  type RuntimePlugin,
} from '@omh/plugin-api'
import { closest } from '@omh/plugin-kit'
import { checkAdapterWith } from './adapter/check.js'
import { checkEditorFile, findAdapters, type Adapter, type AdapterSource } from './adapter/load.js'
import type { EditorFile } from './adapter/schema.js'
import { omhHomeOf, omhStateOf } from './locations.js'
import { applyExtension, type LaunchTaps } from './plugins/extensions.js'
import { guardSync } from './plugins/guard.js'
import { importPlugin, packageRootOf, type LoadedPlugin } from './plugins/load.js'
import { resolvePluginModule } from './plugins/resolve.js'
import { profileSourcesFor, resolveProfile } from './profile/resolve.js'
import { readerOf, renderAdapter, renderHooks, tapRenderer, type HarnessRender, type NativeReader, type RenderReport } from './render/render.js'
import { resolveWith, runtimeHook, tapRuntime, type ReachedRuntime, type ResolvedRuntime, type RuntimeAsk } from './runtime/resolve.js'
import { LAYERS, loadSettings, type EffectiveSettings, type LayerName } from './settings/load.js'
import { runtimeOptions } from './settings/runtime-options.js'

export interface KernelOptions {
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  /** omh's own default settings file, which names the built-in plugins. */
  readonly defaultsFile: string
  /** Directory of the adapters omh ships. */
  readonly bundledAdapters: string
  /** Directory of the editors omh ships. */
  readonly bundledEditors?: string
  /** Where plugin names are looked up when the naming file's directory has no such package. */
  readonly fallbackDirs?: readonly string[]
  /**
   * `leave-out`: settings the repository holds that wait for `omh trust` are left out instead of
   * refused, for a command that only stops what runs: stopping never needs trust.
   */
  readonly untrustedRepository?: 'refuse' | 'leave-out'
}

/** An editor file, found and checked. */
export interface Editor extends EditorFile {
  readonly file: string
}

/**
 * The kernel: loads settings and plugins, validates adapters, renders a
 * profile for a harness and resolves a container runtime. It knows the plugin
 * contracts and nothing about any concrete format or engine.
 */
export class Kernel {
  /**
   * Tapable hooks, each tapped by someone: renderers (`render`, `combine`)
   * and runtimes (`resolveRuntime`) are tapped by the kernel as they load;
   * extension plugins tap `failed` through `apply`. Errors thrown in a tap
   * are PLUGIN_ERROR naming the plugin and the hook. A launch's own hooks
   * are declared by the launch, which taps `launchTaps` into them.
   */
  readonly hooks = Object.freeze({
    ...renderHooks(),
    resolveRuntime: runtimeHook(),
    /** Fired by the CLI (`notifyFailed`) when a command failed, just before the error is reported. */
    failed: new SyncHook<[OmhError]>(['error']),
  })

  readonly options: KernelOptions
  readonly omhHome: string
  readonly omhState: string
  readonly repoRoot: string | undefined
  #settings: EffectiveSettings | undefined
  readonly #plugins: LoadedPlugin[] = []
  readonly #renderers = new Map<string, LoadedPlugin<RendererPlugin>[]>()
  readonly #runtimes: LoadedPlugin<RuntimePlugin>[] = []
  readonly #launchTaps: { beforeLaunch: LaunchTaps['beforeLaunch'][number][]; launched: LaunchTaps['launched'][number][] } = { beforeLaunch: [], launched: [] }
  /** What `failed` taps threw while the last failure was announced. */
  #failedTaps: OmhError[] = []

  private constructor(options: KernelOptions) {
    this.options = options
    this.omhHome = omhHomeOf(options.env)
    this.omhState = omhStateOf(options.env)
    this.repoRoot = findRepoRoot(options.cwd)
  }

  /** Loads settings and every plugin they name, and lets each extension tap its hooks. */
  static async create(options: KernelOptions): Promise<Kernel> {
    const kernel = new Kernel(options)
    kernel.#settings = await kernel.rereadSettings()
    await kernel.#loadPlugins()
    return kernel
  }

  /** The settings as their files say now (plugins stay as loaded): for a command that outlives an edit. */
  rereadSettings(): Promise<EffectiveSettings> {
    const { defaultsFile: defaults, cwd } = this.options
    const leaveOut = this.options.untrustedRepository === 'leave-out' ? { untrusted: 'leave-out' as const } : {}
    return loadSettings({ defaults, omhHome: this.omhHome, omhState: this.omhState, cwd, ...(this.repoRoot ? { repoRoot: this.repoRoot } : {}), ...leaveOut })
  }

  get settings(): EffectiveSettings {
    if (!this.#settings) throw new Error('Kernel used before create() finished')
    return this.#settings
  }

  get plugins(): readonly LoadedPlugin[] {
    return this.#plugins
  }

  /** Every render string some loaded renderer answers, sorted. */
  formats(): string[] {
    return [...this.#renderers.keys()].sort()
  }

  /** The renderer asked first for a format. */
  rendererFor(format: string): LoadedPlugin<RendererPlugin> | undefined {
    return this.#renderers.get(format)?.[0]
  }

  /** Runtime plugins in the order `resolveRuntime` asks them: most specific layer first, then as named. */
  get runtimes(): readonly LoadedPlugin<RuntimePlugin>[] {
    return this.#runtimes
  }

  /** What extensions tapped into a launch's hooks, for the launch to tap into the hooks it declares. */
  get launchTaps(): LaunchTaps {
    return this.#launchTaps
  }

  async #loadPlugins(): Promise<void> {
    const pending: { specifier: string; module: string; file: string; layer: LayerName }[] = []
    for (const entry of this.settings.plugins) {
      const fromDir = path.dirname(entry.file)
      const module =
        resolvePluginModule(entry.value, fromDir) ??
        (entry.value.startsWith('.') ? undefined : this.#fallback(entry.value))
      if (!module) {
        throw OmhError.of(PLUGIN_NOT_FOUND, { args: [entry.value, entry.file], hintArgs: [entry.value, fromDir] })
      }
      if (pending.some((p) => p.module === module)) continue
      pending.push({ specifier: entry.value, module, file: entry.file, layer: entry.layer })
    }
    const modules = await Promise.allSettled(pending.map((p) => importPlugin(p.specifier, p.module, p.file)))
    pending.forEach((p, n) => {
      const loaded = modules[n]!
      if (loaded.status === 'rejected') throw loaded.reason
      const record: LoadedPlugin = { plugin: loaded.value, specifier: p.specifier, module: p.module, namedBy: { file: p.file, layer: p.layer } }
      this.#plugins.push(record)
      this.#register(record, LAYERS.indexOf(p.layer))
    })
    for (const list of this.#renderers.values()) list.sort((a, b) => rank(b) - rank(a))
    this.#runtimes.sort((a, b) => rank(b) - rank(a))
    const runtimes = runtimeOptions(this.settings.layers, this.#runtimes.map((r) => r.plugin))
    const first = runtimes.problems[0]?.file ?? path.join(this.omhHome, 'settings.toml')
    if (runtimes.problems.length) throw OmhError.of(SETTINGS_INVALID, { args: [first, runtimes.problems.length], problems: runtimes.problems })
    for (const [runtime, options] of runtimes.options) guardSync(runtime.meta.name, 'RuntimePlugin.configure', () => runtime.configure?.(options))
    for (const record of this.#plugins) {
      if (record.plugin.kind === 'extension') {
        applyExtension(record.plugin, { failed: this.hooks.failed, failedFaults: this.#failedTaps, launch: this.#launchTaps })
      }
    }
  }

  /**
   * Fires `failed` for an error about to be reported. Every tap runs, and a
   * tap's own fault never hides the error: it is returned, to be reported
   * beside it.
   */
  notifyFailed(error: OmhError): readonly OmhError[] {
    this.#failedTaps.length = 0
    this.hooks.failed.call(error)
    return [...this.#failedTaps]
  }

  #fallback(specifier: string): string | undefined {
    for (const dir of this.options.fallbackDirs ?? []) {
      const hit = resolvePluginModule(specifier, dir)
      if (hit) return hit
    }
    return undefined
  }

  #register(record: LoadedPlugin, layerRank: number): void {
    const { plugin } = record
    const stage = -layerRank
    if (plugin.kind === 'renderer') {
      for (const format of plugin.formats) {
        const list = this.#renderers.get(format) ?? []
        list.push(record as LoadedPlugin<RendererPlugin>)
        this.#renderers.set(format, list)
      }
      tapRenderer(this.hooks, plugin, stage)
    } else if (plugin.kind === 'runtime') {
      this.#runtimes.push(record as LoadedPlugin<RuntimePlugin>)
      tapRuntime(this.hooks.resolveRuntime, plugin, stage)
    }
  }

  // ─── Adapters ──────────────────────────────────────────────────────────────

  /** Every adapter file omh would find, bundled and personal. */
  adapterSources(): Promise<AdapterSource[]> {
    return findAdapters({ bundled: this.options.bundledAdapters, shipped: this.#shipped('adapters'), personal: path.join(this.omhHome, 'adapters') })
  }

  /** Every editor file omh would find, bundled and personal. */
  editorSources(): Promise<AdapterSource[]> {
    return findAdapters({
      bundled: this.options.bundledEditors ?? path.join(this.options.bundledAdapters, '..', 'editors'),
      shipped: this.#shipped('editors'),
      personal: path.join(this.omhHome, 'editors'),
    })
  }

  /** The `adapters/` or `editors/` folder of each plugin package loaded, so one package can bring a whole harness. */
  #shipped(folder: string): { dir: string; plugin: string }[] {
    return this.#plugins.flatMap(({ plugin, specifier, module }) => {
      const root = specifier.startsWith('.') || path.isAbsolute(specifier) ? undefined : packageRootOf(module)
      return root ? [{ dir: path.join(root, folder), plugin: plugin.meta.name }] : []
    })
  }

  /**
   * Checks an adapter file completely: its schema, then every binding against
   * the loaded renderers (format answered, class accepted, options valid).
   * Returns every problem at once.
   */
  checkAdapter(file: string, expectName?: string): Promise<{ adapter?: Adapter; problems: Problem[] }> {
    return checkAdapterWith(this, file, expectName, this.settings.fileBytes?.value)
  }

  /** The named adapter, validated and passed through the `adapter` hook. */
  async adapter(name: string): Promise<Adapter> {
    const sources = await this.adapterSources()
    const source = sources.find((s) => s.name === name)
    if (!source) {
      const known = sources.map((s) => s.name)
      throw OmhError.of(ADAPTER_NOT_FOUND, {
        args: [name],
        hintArgs: [known, path.join(this.omhHome, 'adapters'), closest(name, known)],
      })
    }
    const { adapter, problems } = await this.checkAdapter(source.file, source.name)
    if (!adapter) {
      throw OmhError.of(ADAPTER_INVALID, { args: [source.file, problems.length], hintArgs: [source.file], problems })
    }
    return adapter
  }

  /** The named editor, bundled or personal, checked. */
  async editor(name: string): Promise<Editor> {
    const sources = await this.editorSources()
    const source = sources.find((e) => e.name === name)
    if (!source) {
      const known = sources.map((e) => e.name)
      throw OmhError.of(EDITOR_NOT_FOUND, { args: [name], hintArgs: [known, path.join(this.omhHome, 'editors'), closest(name, known)] })
    }
    const checked = await checkEditorFile(source.file, this.settings.fileBytes?.value)
    if (!checked.data) throw OmhError.of(EDITOR_INVALID, { args: [source.file, checked.problems.length], problems: [...checked.problems] })
    return { ...checked.data, file: source.file }
  }

  // ─── Rendering ─────────────────────────────────────────────────────────────

  /**
   * The one way to render for a harness: its profile resolved (the catalogue,
   * `[use]`, and the project's own rules read from `projectDir`), then
   * rendered. Nothing is written. `own` are hooks of omh's own that go with the
   * user's (a launch's state hooks): rendered where the harness can express
   * them, and never reported, dropped or translated, as the user's items are.
   */
  async renderHarness(adapter: Adapter, projectDir: string | undefined, own: readonly Hook[] = []): Promise<HarnessRender> {
    const profile = await resolveProfile(profileSourcesFor(this, adapter, projectDir))
    return { ...(await this.render(adapter, profile, own)), profile }
  }

  /**
   * How a harness's own documents of one class read back into canonical
   * items, through the renderer of the adapter's binding: what
   * `omh config … import` does. IMPORT_UNSUPPORTED when the adapter binds no
   * such class or its renderer cannot read; a renderer that throws while
   * reading is PLUGIN_ERROR.
   */
  reader(adapter: Adapter, capability: CapabilityClass): NativeReader {
    return readerOf({ rendererFor: (format) => this.rendererFor(format), hooks: this.hooks }, adapter, capability, this.options.env)
  }

  /** Renders every bound capability of an adapter. Pure: nothing is written. */
  render(adapter: Adapter, profile: ProfileItems, own: readonly Hook[] = []): Promise<RenderReport> {
    return renderAdapter({ rendererFor: (format) => this.rendererFor(format), hooks: this.hooks }, adapter, profile, own)
  }

  // ─── Runtimes ──────────────────────────────────────────────────────────────

  /**
   * The runtime to use. `wanted` is `auto` or an engine name; absent, the
   * `runtime` setting decides (default `auto`). `origin` names where an
   * explicit `wanted` came from, for the error when no plugin drives it.
   * With a `probe`, each runtime is asked it instead of `detect`
   * (`RuntimeRequest.probe`), and the answer comes back with the runtime.
   */
  resolveRuntime(wanted: string | undefined, context: RuntimeContext, origin?: string): Promise<ResolvedRuntime>
  resolveRuntime<T>(wanted: string | undefined, context: RuntimeContext, ask: RuntimeAsk<T>): Promise<ReachedRuntime<T>>
  resolveRuntime<T>(wanted: string | undefined, context: RuntimeContext, how: string | RuntimeAsk<T> = '--runtime'): Promise<ResolvedRuntime | ReachedRuntime<T>> {
    const setting = this.settings.runtime
    const runtimes = { hook: this.hooks.resolveRuntime, engines: this.#runtimes.map((r) => r.plugin.engine), ...(setting ? { setting } : {}) }
    return resolveWith(runtimes, wanted, context, how)
  }
}

const rank = (p: LoadedPlugin) => LAYERS.indexOf(p.namedBy.layer)

/** The nearest directory at or above `cwd` holding `.git` (a directory, or a worktree's file). */
export function findRepoRoot(cwd: string): string | undefined {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, '.git'))) return dir
    if (path.dirname(dir) === dir) return undefined
  }
}
