import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import type { AdapterFacts, Binding, CapabilityClass, ProfileItems, RenderContext, RenderOutput, RendererPlugin } from '@omh/plugin-api'
import { renderContext, renderInput } from './arbitraries.js'
import { checkOutput } from './contract.js'

/**
 * One golden case, a folder:
 *
 * - `input.json`: `{format, capability, items, binding?, adapter?, options?, profile?}`: the profile
 *   slice in, and the binding it is rendered for;
 * - `expected.json`: the whole output, each file's `content` left out;
 * - `files/<guest path>`: each staged file's bytes, at its guest path under `files/`.
 *
 * With `OMH_GOLDEN=update` in the environment, the case's expected side is
 * written from what the renderer does now, to be read and committed.
 */
export interface GoldenInput {
  readonly format: string
  readonly capability: CapabilityClass
  readonly items: readonly unknown[]
  readonly binding?: Partial<Binding>
  readonly adapter?: AdapterFacts
  readonly options?: unknown
  readonly profile?: Partial<ProfileItems>
  readonly context?: RenderContext
}

/** The case folders under the folder given, by name. */
export function goldenCases(dir: string | URL): { name: string; dir: string }[] {
  const root = typeof dir === 'string' ? dir : fileURLToPath(dir)
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(path.join(root, e.name, 'input.json')))
    .map((e) => ({ name: e.name, dir: path.join(root, e.name) }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

const withoutContent = (out: RenderOutput) => ({
  ...out,
  files: out.files.map((f) => (f.kind === 'file' ? (({ content: _content, ...rest }) => rest)(f) : f)),
})

const filesUnder = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true, recursive: true })
        .filter((e) => e.isFile())
        .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
        .sort()
    : []

/** Renders one case and compares every byte with what the folder expects. */
export async function checkGolden(plugin: RendererPlugin<any>, caseDir: string): Promise<void> {
  const spec = JSON.parse(readFileSync(path.join(caseDir, 'input.json'), 'utf8')) as GoldenInput
  expect(plugin.formats, `${caseDir}: the case's format`).toContain(spec.format)
  expect(plugin.classes, `${caseDir}: the case's capability`).toContain(spec.capability)
  const input = renderInput(spec.capability, spec.format, spec.items as never, {
    ...(spec.binding ? { binding: spec.binding } : {}),
    ...(spec.adapter ? { adapter: spec.adapter } : {}),
    options: spec.options,
    ...(spec.profile ? { profile: spec.profile } : {}),
  })
  const out = (await plugin.render(input, spec.context ?? renderContext)) ?? { files: [], dropped: [] }
  checkOutput(plugin, input, out, path.basename(caseDir))
  const filesDir = path.join(caseDir, 'files')
  const staged = new Map(out.files.flatMap((f) => (f.kind === 'file' ? [[f.guest.replace(/^\/+/, ''), f.content] as const] : [])))
  if (process.env['OMH_GOLDEN'] === 'update') {
    rmSync(filesDir, { recursive: true, force: true })
    for (const [rel, content] of staged) {
      mkdirSync(path.dirname(path.join(filesDir, rel)), { recursive: true })
      writeFileSync(path.join(filesDir, rel), content)
    }
    writeFileSync(path.join(caseDir, 'expected.json'), `${JSON.stringify(withoutContent(out), null, 2)}\n`)
    return
  }
  const expected = JSON.parse(readFileSync(path.join(caseDir, 'expected.json'), 'utf8')) as unknown
  expect(withoutContent(out), `${caseDir}/expected.json`).toEqual(expected)
  expect([...staged.keys()].sort(), `${filesDir}: the files staged`).toEqual(filesUnder(filesDir))
  for (const [rel, content] of staged) {
    const want = readFileSync(path.join(filesDir, rel))
    const got = typeof content === 'string' ? content : Buffer.from(content).toString('utf8')
    expect(got, `${path.join(filesDir, rel)}`).toBe(want.toString('utf8'))
    expect(Buffer.from(content).equals(want), `${path.join(filesDir, rel)}: byte for byte`).toBe(true)
  }
}
