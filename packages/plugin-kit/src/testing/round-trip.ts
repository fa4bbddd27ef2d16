import fc from 'fast-check'
import { expect } from 'vitest'
import type { AdapterFacts, Binding, CapabilityClass, ItemOf, ParseDocument, RenderOutput, RendererPlugin } from '@omh/plugin-api'
import { parseContext, renderContext, renderInput } from './arbitraries.js'

/** A property: whatever `items` generates, `parse(render(items))` gives back every item not dropped. */
export interface RoundTrip<C extends CapabilityClass = CapabilityClass> {
  readonly format: string
  readonly capability: C
  /** Item lists to render, with unique names; leave out what the renderer refuses. */
  readonly items: fc.Arbitrary<readonly ItemOf<C>[]>
  readonly binding?: Partial<Binding>
  readonly adapter?: AdapterFacts
  readonly options?: unknown
  /** How an item reads back when the format cannot tell everything apart (a transport it guesses). Default: as written. */
  readonly asRead?: (item: ItemOf<C>) => unknown
  /** Puts a list in a comparable order, when the format keeps another. Default: as it comes. */
  readonly order?: (items: readonly unknown[]) => unknown[]
  /** The names `render` must drop from a list, when the author knows them. Default: not checked. */
  readonly dropped?: (items: readonly ItemOf<C>[]) => readonly string[]
  /** Host environment at parse time, beside what `render` put in `env`. */
  readonly env?: Readonly<Record<string, string>>
  readonly numRuns?: number
}

/**
 * Renders each generated list, hands the staged documents at the binding's
 * path to `parse` with the rendered `env`, and expects every item not dropped
 * back, nothing left over, and no item both dropped and read.
 */
export async function checkRoundTrip<C extends CapabilityClass>(plugin: RendererPlugin<any>, trip: RoundTrip<C>): Promise<void> {
  if (!plugin.parse) throw new Error(`${plugin.meta.name} has no \`parse\`: there is nothing to round-trip`)
  const parse = plugin.parse.bind(plugin)
  const asRead = trip.asRead ?? ((item: ItemOf<C>) => item)
  const order = trip.order ?? ((items: readonly unknown[]) => [...items])
  await fc.assert(
    fc.asyncProperty(trip.items, async (items) => {
      const input = renderInput(trip.capability, trip.format, items, {
        ...(trip.binding ? { binding: trip.binding } : {}),
        ...(trip.adapter ? { adapter: trip.adapter } : {}),
        options: trip.options,
      })
      const out = ((await plugin.render(input, renderContext)) ?? { files: [], dropped: [] }) as RenderOutput
      expect(out.refused ?? [], 'the generated items hold values this renderer refuses: leave them out of the arbitrary').toEqual([])
      if (trip.dropped) expect(out.dropped.map((d) => d.name), 'the items dropped').toEqual(trip.dropped(items))
      const dropped = new Set(out.dropped.map((d) => d.name))
      const kept = items.filter((i) => !dropped.has(i.name))
      const documents: ParseDocument[] = out.files.flatMap((f) =>
        f.kind === 'file' && f.guest === input.binding.path
          ? [{ file: f.guest, content: typeof f.content === 'string' ? f.content : Buffer.from(f.content).toString('utf8') }]
          : [],
      )
      if (!documents.length) {
        expect(kept, 'nothing was staged, so every item must have been dropped').toEqual([])
        return
      }
      const parsed = parse(documents, parseContext(trip.capability, trip.format, { ...input, env: { ...trip.env, ...out.env } }))
      expect(parsed.ok ? parsed.left : parsed.problems, 'parse read back the rendered documents whole').toEqual([])
      const read = parsed.ok ? ((parsed.items[trip.capability] ?? []) as readonly unknown[]) : []
      expect(order(read)).toEqual(order(kept.map(asRead)))
    }),
    { numRuns: trip.numRuns ?? 200 },
  )
}
