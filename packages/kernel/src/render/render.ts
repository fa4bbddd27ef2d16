/**
 * The render pipeline: every bound capability of an adapter through the renderer its `render`
 * string names (the `render` hook), documents two bindings write combined (the `combine` hook),
 * and a harness's own documents read back through the same renderer.
 */
import * as z from 'zod/mini'
import { HookMap, AsyncSeriesBailHook, SyncBailHook } from 'tapable'
import {
  ADAPTER_INVALID,
  CAPABILITY_CLASSES,
  CLASS_NOUN,
  COMBINE_CONFLICT,
  GUEST_HOME,
  GUEST_WORK,
  IMPORT_UNSUPPORTED,
  OmhError,
  PLUGIN_ERROR,
  RENDER_COLLISION,
  RENDER_REFUSED,
  REQUIRED_DROPPED,
  type AdapterFacts,
  type CapabilityClass,
  type CombinePart,
  type CombineResult,
  type DroppedItem,
  type Hook,
  type ParseDocument,
  type ParseResult,
  type PluginMeta,
  type Problem,
  type ProfileItems,
  type RefusedValue,
  type RenderContext,
  type RenderInput,
  type RenderOutput,
  type RenderedHarness,
  type RendererPlugin,
  type StagedEntry,
  type StagedFile,
  type TranslatedItem,
} from '@omh/plugin-api'
import { byText } from '@omh/plugin-kit'
import type { Adapter, ResolvedBinding } from '../adapter/load.js'
import { guard, guardSync } from '../plugins/guard.js'
import type { LoadedPlugin } from '../plugins/load.js'
import type { ResolvedProfile } from '../profile/resolve.js'
import { redactRefused } from '../profile/redact.js'

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

/** Why an item is dropped when its harness has no binding for its class. */
export const UNSUPPORTED = 'unsupported'

const bindingLabel = (b: ResolvedBinding) => `capabilities.${b.capability}`

/** The environment a reader's renderer may consult, as the kernel was given it. */
export type RenderEnv = Readonly<Record<string, string | undefined>>

/** The hooks rendering fires, each tapped by the renderers as they load (`tapRenderer`). */
export interface RenderHooks {
  /**
   * Keyed by render string. Each renderer plugin taps every format it
   * answers; the first tap that returns an output wins, and a tap returning
   * `undefined` declines. Taps of more specific settings layers run first,
   * so a user's plugin can override a built-in format.
   */
  readonly render: HookMap<AsyncSeriesBailHook<[RenderInput, RenderContext], RenderOutput | undefined>>
  /**
   * Keyed by document syntax (`json`, `toml`, …). Fires when two bindings
   * write one guest path; the first tap that answers decides. No answer is
   * RENDER_COLLISION; an `ok: false` answer is COMBINE_CONFLICT.
   */
  readonly combine: HookMap<SyncBailHook<[readonly CombinePart[]], CombineResult | undefined>>
}

export function renderHooks(): RenderHooks {
  return {
    render: new HookMap(() => new AsyncSeriesBailHook<[RenderInput, RenderContext], RenderOutput | undefined>(['input', 'context'])),
    combine: new HookMap(() => new SyncBailHook<[readonly CombinePart[]], CombineResult | undefined>(['parts'])),
  }
}

/** What rendering needs of the loaded plugins: the renderer asked first for a format, and the hooks. */
export interface Renderers {
  rendererFor(format: string): LoadedPlugin<RendererPlugin> | undefined
  readonly hooks: RenderHooks
  /** Imports the renderers of these formats, or combiners of these syntaxes, that are declared and not imported yet. */
  need(what: { formats?: readonly string[]; combines?: readonly string[] }): Promise<void>
}

/** Taps a renderer into every format and syntax it answers, at its settings layer's stage. */
export function tapRenderer(hooks: RenderHooks, plugin: RendererPlugin, stage: number): void {
  for (const format of plugin.formats) {
    hooks.render
      .for(format)
      .tapPromise({ name: plugin.meta.name, stage }, (input, context) =>
        guard(plugin.meta.name, `Kernel.hooks.render[${format}]`, () => plugin.render(input, context)),
      )
  }
  for (const [syntax, combine] of Object.entries(plugin.combine ?? {})) {
    hooks.combine
      .for(syntax)
      .tap({ name: plugin.meta.name, stage }, (parts) =>
        guardSync(plugin.meta.name, `Kernel.hooks.combine[${syntax}]`, () => combine(parts)),
      )
  }
}

/**
 * How a harness's own documents of one class read back into canonical
 * items, through the renderer of the adapter's binding: what
 * `omh config … import` does. IMPORT_UNSUPPORTED when the adapter binds no
 * such class or its renderer cannot read; a renderer that throws while
 * reading is PLUGIN_ERROR.
 */
export function readerOf(renderers: Renderers, adapter: Adapter, capability: CapabilityClass, env: RenderEnv): NativeReader {
  const binding = adapter.bindings.find((b) => b.capability === capability)
  const unsupported = (why: string) => OmhError.of(IMPORT_UNSUPPORTED, { args: [adapter.name, why], hintArgs: [adapter.file] })
  if (!binding) throw unsupported(`its adapter binds no ${CLASS_NOUN[capability][1]}`)
  const renderer = renderers.rendererFor(binding.render)?.plugin
  if (!renderer?.parse) throw unsupported(`its renderer "${binding.render}" cannot read that format back`)
  const parse = renderer.parse.bind(renderer)
  const options = renderer.options ? z.parse(renderer.options, binding.options ?? {}) : undefined
  const context = { capability, binding, adapter: factsOf(adapter), options, env }
  return {
    binding,
    read: (documents) => guardSync(renderer.meta.name, `RendererPlugin.parse[${binding.render}]`, () => parse(documents, context)),
  }
}

/** Renders every bound capability of an adapter. Pure: nothing is written. */
export async function renderAdapter(renderers: Renderers, adapter: Adapter, user: ProfileItems, own: readonly Hook[] = []): Promise<RenderReport> {
  // omh's own hooks go after the user's, and only the user's items are ever reported.
  const profile: ProfileItems = own.length ? { ...user, hooks: [...user.hooks, ...own] } : user
  const owned = new Set(own.map((h) => h.name))
  const mine = <T extends { capability: CapabilityClass; name: string }>(item: T) => !(item.capability === 'hooks' && owned.has(item.name))
  const context: RenderContext = { guestHome: GUEST_HOME, guestWork: GUEST_WORK }
  const facts = factsOf(adapter)
  const capabilities: CapabilityRender[] = []
  const dropped: DroppedItem[] = []
  const env: Record<string, string> = {}
  const refused: RefusedValue[] = []
  await renderers.need({ formats: adapter.bindings.map((b) => b.render) })
  for (const capability of CAPABILITY_CLASSES) {
    const items = profile[capability]
    const binding = adapter.bindings.find((b) => b.capability === capability)
    if (!binding) {
      for (const item of items) if (mine({ capability, name: item.name })) dropped.push({ capability, name: item.name, reason: UNSUPPORTED })
      continue
    }
    const renderer = renderers.rendererFor(binding.render)
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
    const output = await renderers.hooks.render.get(binding.render)!.promise(input, context)
    if (!output) {
      throw OmhError.of(PLUGIN_ERROR, {
        args: [renderer.plugin.meta.name, `Kernel.hooks.render[${binding.render}]`, `every renderer declined ${capability}`],
        hintArgs: [renderer.plugin.meta.name],
      })
    }
    const lost = output.dropped.filter(mine)
    capabilities.push({ capability, binding, renderer: renderer.plugin.meta, files: output.files, dropped: lost, translated: (output.translated ?? []).filter(mine) })
    dropped.push(...lost)
    refused.push(...(output.refused ?? []))
    Object.assign(env, output.env)
  }
  if (refused.length) throw refusal(adapter.name, refused, profile)
  const required = dropped.flatMap((d) => {
    const item = (profile[d.capability] as readonly { name: string; source?: string; required?: boolean }[]).find((i) => i.name === d.name)
    return item?.required ? [{ ...(item.source ? { file: item.source } : {}), path: `${d.capability}.${d.name}`, message: d.reason }] : []
  })
  if (required.length) throw OmhError.of(REQUIRED_DROPPED, { args: [adapter.name, required.length], hintArgs: [adapter.name], problems: required })
  const byGuest = entriesByGuest(capabilities)
  // Only a file two bindings write is combined: only its syntax's combiners are needed.
  const shared = [...byGuest.values()].filter((parts) => parts.length > 1)
  await renderers.need({ combines: [...new Set(shared.flatMap((parts) => parts.flatMap(({ entry }) => (entry.kind === 'file' && entry.syntax ? [entry.syntax] : []))))] })
  const files = combine(renderers.hooks.combine, byGuest)
  return { harness: adapter.name, adapterFile: adapter.file, capabilities, files, dropped, translated: capabilities.flatMap((c) => c.translated), env }
}

/** Every staged entry of every binding, by the guest path it is written to. */
function entriesByGuest(capabilities: readonly CapabilityRender[]): Map<string, { entry: StagedEntry; binding: ResolvedBinding }[]> {
  const byGuest = new Map<string, { entry: StagedEntry; binding: ResolvedBinding }[]>()
  for (const c of capabilities) {
    for (const entry of c.files) {
      const list = byGuest.get(entry.guest) ?? []
      list.push({ entry, binding: c.binding })
      byGuest.set(entry.guest, list)
    }
  }
  return byGuest
}

function combine(hook: RenderHooks['combine'], byGuest: ReadonlyMap<string, readonly { entry: StagedEntry; binding: ResolvedBinding }[]>): StagedEntry[] {
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
    const answer = hook
      .get(syntax)
      ?.call(parts.map((p) => ({ binding: bindingLabel(p.binding), content: (p.entry as StagedFile).content })))
    if (!answer) throw OmhError.of(RENDER_COLLISION, { args: [guest, first, second] })
    if (!answer.ok) throw OmhError.of(COMBINE_CONFLICT, { args: [guest, first, second, answer.reason] })
    out.push({ ...files[0]!, content: answer.content })
  }
  return out.sort((a, b) => byText(a.guest, b.guest))
}

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
