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
import type { LaunchTaps } from './plugins/extensions.js'
import { wrap } from './plugins/guard.js'
import type { LoadedPlugin } from './plugins/load.js'
import { PluginRegistry } from './plugins/registry.js'
import { profileSourcesFor, resolveProfile } from './profile/resolve.js'
import { readerOf, renderAdapter, renderHooks, type Renderers, type HarnessRender, type NativeReader, type RenderReport } from './render/render.js'
import { resolveWith, runtimeHook, type ReachedRuntime, type ResolvedRuntime, type RuntimeAsk } from './runtime/resolve.js'
import { loadSettings, type EffectiveSettings } from './settings/load.js'

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
  #registry: PluginRegistry | undefined

  private constructor(options: KernelOptions) {
    this.options = options
    this.omhHome = omhHomeOf(options.env)
    this.omhState = omhStateOf(options.env)
    this.repoRoot = findRepoRoot(options.cwd)
  }

  /**
   * Loads settings and the plugins they name that declare nothing of what they provide, and lets
   * each extension among them tap its hooks. A plugin whose package declares it (`omh` in its
   * package.json) is imported when a command first needs what it declares.
   */
  static async create(options: KernelOptions): Promise<Kernel> {
    const kernel = new Kernel(options)
    const settings = (kernel.#settings = await kernel.rereadSettings())
    kernel.#registry = await PluginRegistry.load(settings, kernel.hooks, {
      fallbackDirs: options.fallbackDirs ?? [],
      settingsFile: path.join(kernel.omhHome, 'settings.toml'),
    })
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

  get #plugins(): PluginRegistry {
    if (!this.#registry) throw new Error('Kernel used before create() finished')
    return this.#registry
  }

  /** The plugins imported so far, in the order the settings name them. */
  get plugins(): readonly LoadedPlugin[] {
    return this.#plugins.plugins
  }

  /** Every plugin the settings name, each imported now if it was not yet: for what lists them all. */
  allPlugins(): Promise<readonly LoadedPlugin[]> {
    return this.#plugins.all()
  }

  /** Every render string some renderer answers, imported or declared, sorted. */
  formats(): string[] {
    return this.#plugins.formats()
  }

  /** The renderer asked first for a format, among those imported (`need` imports the rest). */
  rendererFor(format: string): LoadedPlugin<RendererPlugin> | undefined {
    return this.#plugins.rendererFor(format)
  }

  /** Imports every renderer that declares one of these formats or combines one of these syntaxes. */
  need(what: { formats?: readonly string[]; combines?: readonly string[] }): Promise<void> {
    return this.#plugins.need(what)
  }

  /** Runtime plugins imported so far, in the order `resolveRuntime` asks them: most specific layer first, then as named. */
  get runtimes(): readonly LoadedPlugin<RuntimePlugin>[] {
    return this.#plugins.runtimes
  }

  /** What extensions tap into a launch's hooks, for the launch to tap into the hooks it declares. */
  launchTaps(): Promise<LaunchTaps> {
    return this.#plugins.extensions(['beforeLaunch', 'launched'])
  }

  /**
   * Fires `failed` for an error about to be reported. Every tap runs, and a
   * tap's own fault never hides the error: it is returned, to be reported
   * beside it.
   */
  async notifyFailed(error: OmhError): Promise<readonly OmhError[]> {
    try {
      await this.#plugins.extensions(['failed'])
    } catch (fault) {
      // An extension that cannot load is told beside the failure, as a tap's fault is.
      return [fault instanceof OmhError ? fault : wrap('omh', 'Kernel.hooks.failed', fault)]
    }
    const faults = this.#plugins.failedFaults
    faults.length = 0
    this.hooks.failed.call(error)
    return [...faults]
  }

  // ─── Adapters ──────────────────────────────────────────────────────────────

  /** Every adapter file omh would find, bundled and personal. */
  adapterSources(): Promise<AdapterSource[]> {
    return findAdapters({ bundled: this.options.bundledAdapters, shipped: this.#plugins.shipped('adapters'), personal: path.join(this.omhHome, 'adapters') })
  }

  /** Every editor file omh would find, bundled and personal. */
  editorSources(): Promise<AdapterSource[]> {
    return findAdapters({
      bundled: this.options.bundledEditors ?? path.join(this.options.bundledAdapters, '..', 'editors'),
      shipped: this.#plugins.shipped('editors'),
      personal: path.join(this.omhHome, 'editors'),
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
    return readerOf(this.#renderersView(), adapter, capability, this.options.env)
  }

  /** Renders every bound capability of an adapter. Pure: nothing is written. */
  render(adapter: Adapter, profile: ProfileItems, own: readonly Hook[] = []): Promise<RenderReport> {
    return renderAdapter(this.#renderersView(), adapter, profile, own)
  }

  #renderersView(): Renderers {
    return { rendererFor: (format) => this.rendererFor(format), hooks: this.hooks, need: (what) => this.need(what) }
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
  async resolveRuntime<T>(wanted: string | undefined, context: RuntimeContext, how: string | RuntimeAsk<T> = '--runtime'): Promise<ResolvedRuntime | ReachedRuntime<T>> {
    const setting = this.settings.runtime
    await this.#plugins.needRuntime(wanted ?? setting?.value ?? 'auto')
    const runtimes = { hook: this.hooks.resolveRuntime, engines: this.#plugins.engines(), ...(setting ? { setting } : {}) }
    return resolveWith(runtimes, wanted, context, how)
  }
}

/** The nearest directory at or above `cwd` holding `.git` (a directory, or a worktree's file). */
export function findRepoRoot(cwd: string): string | undefined {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, '.git'))) return dir
    if (path.dirname(dir) === dir) return undefined
  }
}
