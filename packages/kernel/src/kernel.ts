/**
 * The kernel: plugin loading, lookup, rendering and the runtime's choice,
 * behind one frozen table of tapable hooks.
 *
 * Longer than 400 lines: those four jobs share the loaded plugins and the
 * hooks; they become a facade over plugins/, render/ and runtime/ folders.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import * as z from 'zod/mini'
import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, HookMap, SyncBailHook, SyncHook } from 'tapable'
import { checkAdapterFile, checkEditorFile, findAdapters, toAdapter, type Adapter, type AdapterSource, type ResolvedBinding } from './adapter/load.js'
import type { EditorFile } from './adapter/schema.js'
import { profileSourcesFor, resolveProfile, type ResolvedProfile } from './profile/resolve.js'
import {
  ADAPTER_INVALID,
  ADAPTER_NOT_FOUND,
  COMBINE_CONFLICT,
  EDITOR_INVALID,
  EDITOR_NOT_FOUND,
  IMPORT_UNSUPPORTED,
  OmhError,
  PLUGIN_API_UNSUPPORTED,
  PLUGIN_ERROR,
  PLUGIN_INVALID,
  PLUGIN_LOAD_FAILED,
  PLUGIN_NOT_FOUND,
  RENDER_COLLISION,
  RENDER_REFUSED,
  REQUIRED_DROPPED,
  RUNTIME_NOT_FOUND,
  RUNTIME_UNKNOWN,
  SETTINGS_INVALID,
  isOmhError,
  CAPABILITY_CLASSES,
  CLASS_NOUN,
  GUEST_HOME,
  GUEST_WORK,
  SUPPORTED_API_VERSIONS,
  type Problem,
  type CapabilityClass,
  type ProfileItems,
  type AdapterFacts,
  type CombinePart,
  type CombineResult,
  type DroppedItem,
  type TranslatedItem,
  type ExtensionHooks,
  type ExtensionPlugin,
  type LaunchPlan,
  type ParseDocument,
  type ParseResult,
  type Plugin,
  type PluginMeta,
  type RefusedValue,
  type RenderContext,
  type RenderInput,
  type RenderOutput,
  type RenderedHarness,
  type RendererPlugin,
  type RuntimeContext,
  type RuntimeInfo,
  type RuntimePlugin,
  type RuntimeUnavailable,
  type StagedEntry,
  type StagedFile,
} from '@omh/plugin-api'
import { byText, closest, dotted, problemsFromIssues } from '@omh/plugin-kit'
import { redactRefused } from './profile/redact.js'
import { pluginHeaderSchema, pluginSchema } from './plugins/shape.js'
import { resolvePluginModule } from './plugins/resolve.js'
import { LAYERS, loadSettings, type EffectiveSettings, type LayerName } from './settings/load.js'
import { runtimeOptions } from './settings/runtime-options.js'
import { omhHomeOf, omhStateOf } from './locations.js'

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

/** Asked of `resolveRuntime`; taps add to `tried` when their engine cannot serve. */
export interface RuntimeRequest {
  /** `auto`, or an engine name. */
  readonly engine: string
  readonly context: RuntimeContext
  readonly tried: RuntimeUnavailable[]
  /**
   * A question the caller needs answered anyway ("the session's container?"), asked of each
   * runtime instead of `detect`: an answer proves the engine usable. A runtime whose probe fails,
   * or that cannot be probed (undefined instead of a promise), is detected, so the pick and every
   * reason given for passing a runtime over are the same either way.
   */
  readonly probe?: (runtime: RuntimePlugin) => Promise<unknown> | undefined
}

export interface ResolvedRuntime {
  readonly runtime: RuntimePlugin
  readonly info: RuntimeInfo
}

/**
 * What `resolveRuntime` found when asked with a probe: the runtime, with the
 * probe's answer when the probe stood in for `detect`, or with what `detect`
 * said when it did not.
 */
export type ReachedRuntime<T> =
  | { readonly runtime: RuntimePlugin; readonly probed: true; readonly answer: T }
  | { readonly runtime: RuntimePlugin; readonly probed: false; readonly info?: RuntimeInfo }

/** One bound capability, rendered. */
export interface CapabilityRender {
  readonly capability: CapabilityClass
  readonly binding: ResolvedBinding
  readonly renderer: PluginMeta
  readonly files: readonly StagedEntry[]
  readonly dropped: readonly DroppedItem[]
  readonly translated: readonly TranslatedItem[]
}

/** Everything one harness would be given, before anything touches the disk. */
export interface RenderReport extends RenderedHarness {
  readonly adapterFile: string
  readonly capabilities: readonly CapabilityRender[]
}

/** A render for a harness, with the profile it was rendered from. */
export interface HarnessRender extends RenderReport {
  readonly profile: ResolvedProfile
}

/** Reads a harness's documents back through the renderer its adapter binds. */
export interface NativeReader {
  readonly binding: ResolvedBinding
  read(documents: readonly ParseDocument[]): ParseResult
}

/** An editor file, found and checked. */
export interface Editor extends EditorFile {
  readonly file: string
}

export const UNSUPPORTED = 'unsupported'

const bindingLabel = (b: ResolvedBinding) => `capabilities.${b.capability}`

/**
 * The kernel: loads settings and plugins, validates adapters, renders a
 * profile for a harness and resolves a container runtime. It knows the plugin
 * contracts and nothing about any concrete format or engine.
 */
export class Kernel {
  /**
   * Tapable hooks, each tapped by someone: renderers (`render`, `combine`)
   * and runtimes (`resolveRuntime`) are tapped by the kernel as they load;
   * extension plugins tap `beforeLaunch`, `launched` and `failed` through
   * `apply`. Errors thrown in a tap are PLUGIN_ERROR naming the plugin and
   * the hook.
   */
  readonly hooks = Object.freeze({
    /**
     * Keyed by render string. Each renderer plugin taps every format it
     * answers; the first tap that returns an output wins, and a tap returning
     * `undefined` declines. Taps of more specific settings layers run first,
     * so a user's plugin can override a built-in format.
     */
    render: new HookMap(
      () => new AsyncSeriesBailHook<[RenderInput, RenderContext], RenderOutput | undefined>(['input', 'context']),
    ),
    /**
     * Keyed by document syntax (`json`, `toml`, …). Fires when two bindings
     * write one guest path; the first tap that answers decides. No answer is
     * RENDER_COLLISION; an `ok: false` answer is COMBINE_CONFLICT.
     */
    combine: new HookMap(() => new SyncBailHook<[readonly CombinePart[]], CombineResult | undefined>(['parts'])),
    /**
     * Asked for a container engine. Each runtime plugin taps it; the first
     * whose engine matches the request and whose `detect()` answers wins.
     * Taps run most specific settings layer first, then in the order a
     * layer's `plugins` names them, so `auto` is deterministic.
     */
    resolveRuntime: new AsyncSeriesBailHook<[RuntimeRequest], ReachedRuntime<unknown> | undefined>(['request']),
    /**
     * Fired by the sandbox when a launch (or its `--dry-run`) is planned and
     * nothing has started. Waterfall: taps return the plan, changed or not.
     */
    beforeLaunch: new AsyncSeriesWaterfallHook<[LaunchPlan]>(['plan']),
    /** Fired by the sandbox when a launched harness exited, with its exit status. */
    launched: new AsyncSeriesHook<[LaunchPlan, number]>(['plan', 'status']),
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
      if (record.plugin.kind === 'extension') this.#apply(record.plugin)
    }
  }

  /** Hands an extension its hooks, each tap wrapped so its faults name the plugin and the hook. */
  #apply(plugin: ExtensionPlugin): void {
    const name = plugin.meta.name
    const hooks: ExtensionHooks = {
      beforeLaunch: {
        tap: (tap, fn) =>
          this.hooks.beforeLaunch.tapPromise(tap || name, (plan) => guard(name, 'Kernel.hooks.beforeLaunch', () => fn(plan))),
      },
      launched: {
        tap: (tap, fn) =>
          this.hooks.launched.tapPromise(tap || name, (plan, status) => guard(name, 'Kernel.hooks.launched', () => fn(plan, status))),
      },
      failed: {
        tap: (tap, fn) =>
          this.hooks.failed.tap(tap || name, (error) => {
            try {
              fn(error)
            } catch (fault) {
              this.#failedTaps.push(wrap(name, 'Kernel.hooks.failed', fault))
            }
          }),
      },
    }
    guardSync(name, 'ExtensionPlugin.apply', () => plugin.apply(hooks))
  }

  /**
   * Fires `failed` for an error about to be reported. Every tap runs, and a
   * tap's own fault never hides the error: it is returned, to be reported
   * beside it.
   */
  notifyFailed(error: OmhError): readonly OmhError[] {
    this.#failedTaps = []
    this.hooks.failed.call(error)
    return this.#failedTaps
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
      const renderer = record as LoadedPlugin<RendererPlugin>
      for (const format of plugin.formats) {
        const list = this.#renderers.get(format) ?? []
        list.push(renderer)
        this.#renderers.set(format, list)
        this.hooks.render
          .for(format)
          .tapPromise({ name: plugin.meta.name, stage }, (input, context) =>
            guard(plugin.meta.name, `Kernel.hooks.render[${format}]`, () => plugin.render(input, context)),
          )
      }
      for (const [syntax, combine] of Object.entries(plugin.combine ?? {})) {
        this.hooks.combine
          .for(syntax)
          .tap({ name: plugin.meta.name, stage }, (parts) =>
            guardSync(plugin.meta.name, `Kernel.hooks.combine[${syntax}]`, () => combine(parts)),
          )
      }
    } else if (plugin.kind === 'runtime') {
      this.#runtimes.push(record as LoadedPlugin<RuntimePlugin>)
      this.hooks.resolveRuntime.tapPromise({ name: plugin.meta.name, stage }, async (request) => {
        if (request.engine !== 'auto' && request.engine !== plugin.engine) return undefined
        const asking = request.probe?.(plugin)
        if (asking) {
          try {
            return { runtime: plugin, probed: true, answer: await asking }
          } catch {
            // Not an answer; detect says whether the engine is usable all the same, and why not.
          }
        }
        const found = await detectWith(plugin, request.context)
        if ('version' in found) return { runtime: plugin, probed: false, info: found }
        request.tried.push(found)
        return undefined
      })
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
  async checkAdapter(file: string, expectName?: string): Promise<{ adapter?: Adapter; problems: Problem[] }> {
    const check = await checkAdapterFile(file, expectName, this.settings.fileBytes?.value)
    const problems = [...check.problems]
    const raw = (check.doc?.data ?? {}) as { capabilities?: Record<string, { render?: unknown; options?: unknown }> }
    for (const [capability, b] of Object.entries(raw.capabilities ?? {})) {
      if (!CAPABILITY_CLASSES.includes(capability as CapabilityClass) || typeof b?.render !== 'string') continue
      const where = (p: (string | number)[]) => {
        const at = check.doc?.locate(['capabilities', capability, ...p])
        return { file, ...(at ? { line: at.line, column: at.column } : {}), path: dotted(['capabilities', capability, ...p]) }
      }
      const renderer = this.rendererFor(b.render)?.plugin
      if (!renderer) {
        const near = closest(b.render, this.formats())
        problems.push({
          ...where(['render']),
          message: `"${b.render}" matches no installed renderer (installed: ${this.formats().join(', ') || 'none'})`,
          ...(near ? { suggestion: near } : {}),
        })
        continue
      }
      if (!renderer.classes.includes(capability as CapabilityClass)) {
        problems.push({
          ...where(['render']),
          message: `"${b.render}" (${renderer.meta.name}) renders ${renderer.classes.join(', ')}, not ${capability}`,
        })
      }
      if (b.options !== undefined) {
        if (!renderer.options) {
          problems.push({ ...where(['options']), message: `"${b.render}" (${renderer.meta.name}) takes no options` })
        } else {
          const parsed = z.safeParse(renderer.options, b.options)
          if (!parsed.success) {
            problems.push(
              ...problemsFromIssues(parsed.error.issues, {
                file,
                data: b.options,
                schema: renderer.options,
                locate: (p) => check.doc?.locate(['capabilities', capability, 'options', ...p]),
              }).map((pr) => ({ ...pr, path: `capabilities.${capability}.options${pr.path ? `.${pr.path}` : ''}` })),
            )
          }
        }
      }
    }
    problems.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? 0) - (b.column ?? 0))
    if (problems.length || !check.data) return { problems }
    return { adapter: toAdapter(file, check.data), problems }
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
   * rendered. Nothing is written.
   */
  async renderHarness(adapter: Adapter, projectDir: string | undefined): Promise<HarnessRender> {
    const profile = await resolveProfile(profileSourcesFor(this, adapter, projectDir))
    return { ...(await this.render(adapter, profile)), profile }
  }

  /**
   * How a harness's own documents of one class read back into canonical
   * items, through the renderer of the adapter's binding: what
   * `omh config … import` does. IMPORT_UNSUPPORTED when the adapter binds no
   * such class or its renderer cannot read; a renderer that throws while
   * reading is PLUGIN_ERROR.
   */
  reader(adapter: Adapter, capability: CapabilityClass): NativeReader {
    const binding = adapter.bindings.find((b) => b.capability === capability)
    const unsupported = (why: string) => OmhError.of(IMPORT_UNSUPPORTED, { args: [adapter.name, why], hintArgs: [adapter.file] })
    if (!binding) throw unsupported(`its adapter binds no ${CLASS_NOUN[capability][1]}`)
    const renderer = this.rendererFor(binding.render)?.plugin
    if (!renderer?.parse) throw unsupported(`its renderer "${binding.render}" cannot read that format back`)
    const parse = renderer.parse.bind(renderer)
    const context = { capability, binding, adapter: factsOf(adapter), env: this.options.env }
    return {
      binding,
      read: (documents) => guardSync(renderer.meta.name, `RendererPlugin.parse[${binding.render}]`, () => parse(documents, context)),
    }
  }

  /** Renders every bound capability of an adapter. Pure: nothing is written. */
  async render(adapter: Adapter, profile: ProfileItems): Promise<RenderReport> {
    const context: RenderContext = { guestHome: GUEST_HOME, guestWork: GUEST_WORK }
    const facts = factsOf(adapter)
    const capabilities: CapabilityRender[] = []
    const dropped: DroppedItem[] = []
    const env: Record<string, string> = {}
    const refused: RefusedValue[] = []
    for (const capability of CAPABILITY_CLASSES) {
      const items = profile[capability]
      const binding = adapter.bindings.find((b) => b.capability === capability)
      if (!binding) {
        for (const item of items) dropped.push({ capability, name: item.name, reason: UNSUPPORTED })
        continue
      }
      const renderer = this.rendererFor(binding.render)
      if (!renderer) {
        // checkAdapter refuses this; an adapter changed by a tap may still get here.
        throw OmhError.of(ADAPTER_INVALID, {
          args: [adapter.file, 1],
          hintArgs: [adapter.file],
          problems: [{ file: adapter.file, path: `${bindingLabel(binding)}.render`, message: `"${binding.render}" matches no installed renderer` }],
        })
      }
      const options = renderer.plugin.options ? z.parse(renderer.plugin.options, binding.options ?? {}) : undefined
      const input = { capability, items, binding, adapter: facts, options, profile } as RenderInput
      const output = await this.hooks.render.get(binding.render)!.promise(input, context)
      if (!output) {
        throw OmhError.of(PLUGIN_ERROR, {
          args: [renderer.plugin.meta.name, `Kernel.hooks.render[${binding.render}]`, `every renderer declined ${capability}`],
          hintArgs: [renderer.plugin.meta.name],
        })
      }
      capabilities.push({ capability, binding, renderer: renderer.plugin.meta, files: output.files, dropped: output.dropped, translated: output.translated ?? [] })
      dropped.push(...output.dropped)
      refused.push(...(output.refused ?? []))
      Object.assign(env, output.env)
    }
    if (refused.length) throw refusal(adapter.name, refused, profile)
    const required = dropped.flatMap((d) => {
      const item = (profile[d.capability] as readonly { name: string; source?: string; required?: boolean }[]).find((i) => i.name === d.name)
      return item?.required ? [{ ...(item.source ? { file: item.source } : {}), path: `${d.capability}.${d.name}`, message: d.reason }] : []
    })
    if (required.length) throw OmhError.of(REQUIRED_DROPPED, { args: [adapter.name, required.length], hintArgs: [adapter.name], problems: required })
    const files = this.#combine(capabilities)
    return { harness: adapter.name, adapterFile: adapter.file, capabilities, files, dropped, translated: capabilities.flatMap((c) => c.translated), env }
  }

  #combine(capabilities: readonly CapabilityRender[]): StagedEntry[] {
    const byGuest = new Map<string, { entry: StagedEntry; binding: ResolvedBinding }[]>()
    for (const c of capabilities) {
      for (const entry of c.files) {
        const list = byGuest.get(entry.guest) ?? []
        list.push({ entry, binding: c.binding })
        byGuest.set(entry.guest, list)
      }
    }
    const out: StagedEntry[] = []
    for (const [guest, parts] of byGuest) {
      if (parts.length === 1) {
        out.push(parts[0]!.entry)
        continue
      }
      const [first, second] = [bindingLabel(parts[0]!.binding), bindingLabel(parts[1]!.binding)]
      const files = parts.map((p) => p.entry).filter((e): e is StagedFile => e.kind === 'file')
      const syntax = files[0]?.syntax
      if (files.length !== parts.length || !syntax || files.some((f) => f.syntax !== syntax)) {
        throw OmhError.of(RENDER_COLLISION, { args: [guest, first, second] })
      }
      const answer = this.hooks.combine
        .get(syntax)
        ?.call(parts.map((p) => ({ binding: bindingLabel(p.binding), content: (p.entry as StagedFile).content })))
      if (!answer) throw OmhError.of(RENDER_COLLISION, { args: [guest, first, second] })
      if (!answer.ok) throw OmhError.of(COMBINE_CONFLICT, { args: [guest, first, second, answer.reason] })
      out.push({ ...files[0]!, content: answer.content })
    }
    return out.sort((a, b) => byText(a.guest, b.guest))
  }

  // ─── Runtimes ──────────────────────────────────────────────────────────────

  /**
   * The runtime to use. `wanted` is `auto` or an engine name; absent, the
   * `runtime` setting decides (default `auto`). `origin` names where an
   * explicit `wanted` came from, for the error when no plugin drives it.
   * With a `probe`, each runtime is asked it instead of `detect`
   * (`RuntimeRequest.probe`), and the answer comes back with the runtime.
   */
  async resolveRuntime(wanted: string | undefined, context: RuntimeContext, origin?: string): Promise<ResolvedRuntime>
  async resolveRuntime<T>(wanted: string | undefined, context: RuntimeContext, options: { readonly origin?: string; readonly probe: (runtime: RuntimePlugin) => Promise<T> | undefined }): Promise<ReachedRuntime<T>>
  async resolveRuntime<T>(
    wanted: string | undefined,
    context: RuntimeContext,
    how: string | { readonly origin?: string; readonly probe: (runtime: RuntimePlugin) => Promise<T> | undefined } = '--runtime',
  ): Promise<ResolvedRuntime | ReachedRuntime<T>> {
    const { origin = '--runtime', probe } = typeof how === 'string' ? { origin: how, probe: undefined } : how
    const engine = this.#wantedEngine(wanted, origin)
    const request: RuntimeRequest = { engine, context, tried: [], ...(probe ? { probe } : {}) }
    const found = await this.hooks.resolveRuntime.promise(request)
    if (!found) throw this.#notFound(engine, request.tried)
    if (probe) return found as ReachedRuntime<T>
    return { runtime: found.runtime, info: (found as { info: RuntimeInfo }).info }
  }

  /** `auto` or an engine some runtime drives, from `wanted` or the `runtime` setting. */
  #wantedEngine(wanted: string | undefined, origin: string): string {
    const setting = this.settings.runtime
    const engine = wanted ?? setting?.value ?? 'auto'
    const engines = this.#runtimes.map((r) => r.plugin.engine)
    if (engine !== 'auto' && !engines.includes(engine)) {
      throw OmhError.of(RUNTIME_UNKNOWN, {
        args: [engine, wanted === undefined && setting ? `${setting.file} (runtime)` : origin],
        hintArgs: [engines, closest(engine, engines)],
      })
    }
    return engine
  }

  #notFound(engine: string, tried: readonly RuntimeUnavailable[]): OmhError {
    const engines = this.#runtimes.map((r) => r.plugin.engine)
    return OmhError.of(RUNTIME_NOT_FOUND, {
      args: [engine, tried.map((t) => t.engine)],
      hintArgs: [engine, engines],
      problems: tried.map((t) => ({ path: t.engine, message: `${t.reason}.${t.hint ? ` ${t.hint.replace(/\.?$/, '.')}` : ''}` })),
      details: { tried },
    })
  }
}

const rank = (p: LoadedPlugin) => LAYERS.indexOf(p.namedBy.layer)

const factsOf = (adapter: Adapter): AdapterFacts => ({
  name: adapter.name,
  tools: adapter.tools,
  paths: Object.fromEntries(adapter.bindings.map((b) => [b.capability, b.path])),
})

/** Every refused value of a render as one error, each located in the file its item came from. */
function refusal(harness: string, values: readonly RefusedValue[], profile: ProfileItems): OmhError {
  const refused = values.map((r) => redactRefused(r, profile))
  const problems: Problem[] = refused.map((r) => {
    const item = (profile[r.capability] as readonly { name: string; source?: string }[]).find((i) => i.name === r.name)
    return {
      ...(item?.source ? { file: item.source } : {}),
      path: `${r.name}.${r.field}`,
      message: `${JSON.stringify(r.value)}: ${r.reason}`,
    }
  })
  return OmhError.of(RENDER_REFUSED, { args: [harness, refused.length], problems, details: { refused } })
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
function packageRootOf(module: string): string | undefined {
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

const detectWith = (runtime: RuntimePlugin, context: RuntimeContext) =>
  guard(runtime.meta.name, 'Kernel.hooks.resolveRuntime', () => runtime.detect(context))

/** Runs plugin code, wrapping anything it throws with the plugin's and the hook's names. */
async function guard<T>(plugin: string, hook: string, run: () => Promise<T> | T): Promise<T> {
  try {
    return await run()
  } catch (error) {
    throw wrap(plugin, hook, error)
  }
}

function guardSync<T>(plugin: string, hook: string, run: () => T): T {
  try {
    return run()
  } catch (error) {
    throw wrap(plugin, hook, error)
  }
}

function wrap(plugin: string, hook: string, error: unknown): OmhError {
  if (isOmhError(error) && error.code === 'PLUGIN_ERROR') return error
  const what = error instanceof Error ? error.message : String(error)
  return OmhError.of(PLUGIN_ERROR, { args: [plugin, hook, what], hintArgs: [plugin], cause: error, details: { plugin, hook } })
}

/** The nearest directory at or above `cwd` holding `.git` (a directory, or a worktree's file). */
export function findRepoRoot(cwd: string): string | undefined {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, '.git'))) return dir
    if (path.dirname(dir) === dir) return undefined
  }
}
