/**
 * A test kit for renderer authors, on vitest: `testRenderer(plugin, …)`
 * registers the contract checks, the golden cases of a folder, and round
 * trips. Import it from tests only: vitest and fast-check are peer
 * dependencies, not something omh loads.
 */
import { describe, it } from 'vitest'
import type { CapabilityClass, RendererPlugin } from '@omh/plugin-api'
import { checkRenders, checkShape, type ContractOptions } from './contract.js'
import { checkGolden, goldenCases } from './golden.js'
import { checkRoundTrip, type RoundTrip } from './round-trip.js'

export * from './arbitraries.js'
export { checkOutput, checkRenders, checkShape, comparable, sampleInputs, type ContractOptions } from './contract.js'
export { checkGolden, goldenCases, type GoldenInput } from './golden.js'
export { checkRoundTrip, type RoundTrip } from './round-trip.js'
export { withoutIo, type Reach } from './no-io.js'

/** A round trip for any one class, typed by its `capability`. */
export type AnyRoundTrip = { [C in CapabilityClass]: RoundTrip<C> }[CapabilityClass]

export interface RendererSuite extends ContractOptions {
  /** A folder of golden cases (`new URL('./golden', import.meta.url)`). */
  readonly golden?: string | URL
  /** `parse(render(x))` properties; only for a renderer with `parse`. */
  readonly roundTrips?: readonly AnyRoundTrip[]
}

/** Registers every check the kit has for `plugin`, under one `describe`. */
export function testRenderer(plugin: RendererPlugin<any>, suite: RendererSuite = {}): void {
  describe(`${plugin.meta?.name ?? 'renderer'}: the renderer contract`, () => {
    it('has the shape the kernel loads: kind, a supported apiVersion, meta, formats, classes, render', () => checkShape(plugin))
    it('renders every declared format and class purely: valid output, same input same bytes, no I/O, input untouched', () =>
      checkRenders(plugin, suite))
    if (suite.golden) {
      const cases = goldenCases(suite.golden)
      it('has golden cases', () => {
        if (!cases.length) throw new Error(`no case folder (with input.json) under ${String(suite.golden)}`)
      })
      for (const c of cases) it(`golden: ${c.name}`, () => checkGolden(plugin, c.dir))
    }
    for (const trip of suite.roundTrips ?? []) {
      it(`reads back what it renders: parse(render(x)) for ${trip.format} × ${trip.capability}`, () => checkRoundTrip(plugin, trip as RoundTrip), 120_000)
    }
  })
}
