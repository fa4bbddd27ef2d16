import { isDeepStrictEqual } from 'node:util'
import { expect } from 'vitest'
import {
  CAPABILITY_CLASSES,
  SUPPORTED_API_VERSIONS,
  type AdapterFacts,
  type Binding,
  type CapabilityClass,
  type ProfileItems,
  type RenderContext,
  type RenderInput,
  type RenderOutput,
  type RendererPlugin,
} from '@omh/plugin-api'
import { renderContext, renderInput, sampleProfile } from './arbitraries.js'
import { withoutIo } from './no-io.js'

/** How the contract checks build the inputs they render. */
export interface ContractOptions {
  /** Binding facts per format beyond `path` and `render` (a hooks binding's `events`, `inject`, …). */
  readonly bindings?: Readonly<Record<string, Partial<Binding>>>
  /** The adapter facts every sample is rendered with. Default: a harness that spells every tool word as itself. */
  readonly adapter?: AdapterFacts
  /** Adapter facts per format, where formats belong to different harnesses; wins over `adapter`. */
  readonly adapters?: Readonly<Record<string, AdapterFacts>>
  /** Options per format, as an adapter would write them; checked against the renderer's `options` schema. */
  readonly options?: Readonly<Record<string, unknown>>
  /** The profile rendered through every declared format and class. Default: `sampleProfile`. */
  readonly profile?: ProfileItems
  readonly context?: RenderContext
}

/** Checks the plugin object itself: what the kernel checks when it loads it, and a little more. */
export function checkShape(plugin: RendererPlugin<any>): void {
  expect(plugin, 'a renderer is a plain object').toBeTypeOf('object')
  expect(plugin.kind, '`kind`').toBe('renderer')
  expect(SUPPORTED_API_VERSIONS.has(plugin.apiVersion), `\`apiVersion\` ${plugin.apiVersion} is one omh supports (${[...SUPPORTED_API_VERSIONS].join(', ')})`).toBe(true)
  expect(plugin.meta?.name, '`meta.name`').toMatch(/\S/)
  expect(plugin.meta?.version, '`meta.version`').toMatch(/\S/)
  expect(Array.isArray(plugin.formats) && plugin.formats.length > 0, '`formats` names at least one format').toBe(true)
  for (const format of plugin.formats) expect(format, 'a format is a word an adapter writes in `render = "…"`').toMatch(/^[a-z0-9][a-z0-9._-]*$/)
  expect(new Set(plugin.formats).size, '`formats` names each format once').toBe(plugin.formats.length)
  expect(Array.isArray(plugin.classes) && plugin.classes.length > 0, '`classes` names at least one capability class').toBe(true)
  for (const c of plugin.classes) expect(CAPABILITY_CLASSES, `\`classes\` holds "${c}"`).toContain(c)
  expect(new Set(plugin.classes).size, '`classes` names each class once').toBe(plugin.classes.length)
  expect(plugin.render, '`render`').toBeTypeOf('function')
  if (plugin.parse !== undefined) expect(plugin.parse, '`parse`').toBeTypeOf('function')
  if (plugin.options !== undefined) expect('_zod' in plugin.options && '~standard' in plugin.options, '`options` is a zod schema').toBe(true)
  for (const [syntax, join] of Object.entries(plugin.combine ?? {})) expect(join, `\`combine.${syntax}\``).toBeTypeOf('function')
}

/** Every input the contract renders: each declared format with each declared class. */
export function sampleInputs(plugin: RendererPlugin<any>, options: ContractOptions = {}): { label: string; input: RenderInput }[] {
  const profile = options.profile ?? sampleProfile
  return plugin.formats.flatMap((format) =>
    plugin.classes.map((capability: CapabilityClass) => ({
      label: `${format} × ${capability}`,
      input: renderInput(capability, format, profile[capability] as never, {
        binding: options.bindings?.[format] ?? {},
        ...((options.adapters?.[format] ?? options.adapter) ? { adapter: options.adapters?.[format] ?? options.adapter } : {}),
        options: options.options?.[format],
        profile,
      }),
    })),
  )
}

/** An output in comparable form: bytes as base64, so equal means byte-equal. A declined render (`undefined`) stays itself. */
export function comparable(out: unknown): unknown {
  if (out === undefined) return undefined
  return JSON.parse(JSON.stringify(out, (_k, v: unknown) => (v instanceof Uint8Array ? { bytes: Buffer.from(v).toString('base64') } : v)))
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

/** Checks what `render` returned for one input against the contract's promises. */
export function checkOutput(plugin: RendererPlugin<any>, input: RenderInput, out: RenderOutput | undefined, label = ''): void {
  if (out === undefined) return
  const at = label ? `${label}: ` : ''
  expect(Array.isArray(out.files), `${at}\`files\` is a list`).toBe(true)
  expect(Array.isArray(out.dropped), `${at}\`dropped\` is a list`).toBe(true)
  const names = new Set(input.items.map((i) => i.name))
  for (const file of out.files) {
    expect(['file', 'tree'], `${at}an entry is a file or a tree`).toContain(file.kind)
    expect(file.guest, `${at}a staged entry's guest path is absolute`).toMatch(/^\//)
    if (file.kind === 'file') {
      expect(typeof file.content === 'string' || file.content instanceof Uint8Array, `${at}${file.guest}: content is text or bytes`).toBe(true)
      if (file.mode !== undefined) expect(Number.isInteger(file.mode) && file.mode >= 0 && file.mode <= 0o777, `${at}${file.guest}: mode`).toBe(true)
    } else {
      for (const entry of file.entries) {
        expect(entry.name, `${at}${file.guest}: an entry is a name, not a path`).toMatch(/^[^/\0]+$/)
        expect(entry.source, `${at}${file.guest}/${entry.name}: its source is an absolute host path`).toMatch(/^\//)
      }
    }
  }
  const guests = out.files.map((f) => f.guest)
  expect(new Set(guests).size, `${at}each guest path is staged once`).toBe(guests.length)
  for (const d of [...out.dropped, ...(out.refused ?? [])]) {
    expect(d.capability, `${at}a dropped or refused item is of the class rendered`).toBe(input.capability)
    expect(names.has(d.name), `${at}"${d.name}" is dropped or refused by the name of an item it was given`).toBe(true)
    expect(d.reason, `${at}"${d.name}" is dropped or refused with a reason in words`).toMatch(/\S/)
  }
  for (const [k, v] of Object.entries(out.env ?? {})) {
    expect(k, `${at}an environment variable's name`).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/)
    expect(v, `${at}${k} holds text`).toBeTypeOf('string')
  }
}

/**
 * Renders every sample three times: once with the file system open, for
 * what the renderer loads lazily (a `require` on first use), then twice with
 * it closed too, on frozen inputs. Nothing may reach the network, a process,
 * the clock or randomness, the last two nothing at all, and all three must
 * give the same bytes.
 */
export async function checkRenders(plugin: RendererPlugin<any>, options: ContractOptions = {}): Promise<void> {
  const context = options.context ?? renderContext
  for (const { label, input } of sampleInputs(plugin, options)) {
    let warm: RenderOutput | undefined
    for (let n = 0; n < 3; n++) {
      const run = await withoutIo(() => plugin.render(n ? deepFreeze(structuredClone(input)) : structuredClone(input), deepFreeze({ ...context })), {
        allowFiles: n === 0,
      })
      const reached = [...new Set(run.reaches.map((r) => r.what))]
      expect(reached, `${label}: render reached outside itself (${reached.join(', ')}); the kernel does all I/O`).toEqual([])
      if (run.error) {
        const why = n ? 'on a frozen input it must not change' : 'rendering the sample'
        throw new Error(`${label}: render threw ${why}: ${String(run.error)}`, { cause: run.error })
      }
      if (n === 0) {
        warm = run.value
        checkOutput(plugin, input, warm, label)
      } else expect(isDeepStrictEqual(comparable(run.value), comparable(warm)), `${label}: the same input gave different bytes`).toBe(true)
    }
  }
}
