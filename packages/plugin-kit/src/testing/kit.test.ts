import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { PLUGIN_API_VERSION, type McpServer, type RenderOutput, type RendererPlugin } from '@omh/plugin-api'
import { checkGolden, checkRenders, checkRoundTrip, checkShape, servers, withoutIo } from './index.js'

const base = (render: RendererPlugin['render'], over: Partial<RendererPlugin> = {}): RendererPlugin => ({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name: 'omh-renderer-test', version: '1.0.0' },
  formats: ['t'],
  classes: ['rules'],
  render,
  ...over,
})
const file = (content: string): RenderOutput => ({ files: [{ kind: 'file', guest: '/home/agent/T.md', content }], dropped: [] })
const good = base((input) => file(input.items.map((i) => i.name).join('\n')))

describe('the test kit catches a renderer that breaks the contract', () => {
  it('passes a pure renderer', async () => {
    checkShape(good)
    await checkRenders(good)
  })

  it('passes a renderer that declines a format and class it does not render (returns undefined)', async () => {
    await checkRenders(base((input) => (input.capability === 'rules' ? file('x') : undefined), { classes: ['rules', 'skills'] }))
  })

  it('refuses a wrong shape: unsupported apiVersion, no formats, an unknown class', () => {
    expect(() => checkShape({ ...good, apiVersion: 99 })).toThrow(/apiVersion/)
    expect(() => checkShape({ ...good, formats: [] })).toThrow(/formats/)
    expect(() => checkShape({ ...good, classes: ['rules', 'agents' as never] })).toThrow(/classes/)
  })

  it.each([
    ['reads a file through a named import', () => readFileSync('/etc/hostname', 'utf8'), /fs\.readFileSync/],
    ['spawns a process', () => execFileSync('true'), /child_process\.execFileSync/],
    ['reads the clock', () => String(Date.now()), /Date\.now/],
    ['builds a date of now', () => new Date().toISOString(), /new Date\(\)/],
    ['rolls dice', () => String(Math.random()), /Math\.random/],
  ])('reports one that %s, even when it catches the failure', async (_what, reach, pattern) => {
    const bad = base(() => {
      try {
        return file(String(reach()))
      } catch {
        return file('')
      }
    })
    await expect(checkRenders(bad)).rejects.toThrow(pattern)
  })

  it('reports async I/O: fs.promises and fetch', async () => {
    await expect(checkRenders(base(async () => file(await readFile('/etc/hostname', 'utf8'))))).rejects.toThrow(/fs\.promises\.readFile/)
    await expect(checkRenders(base(async () => file(await (await fetch('http://127.0.0.1:9/')).text())))).rejects.toThrow(/globalThis\.fetch/)
  })

  it('puts every route back afterwards', async () => {
    await withoutIo(() => Date.now())
    expect(typeof Date.now()).toBe('number')
    expect(readFileSync(path.join(import.meta.dirname, 'index.ts'), 'utf8')).toMatch(/testRenderer/)
  })

  it('reports different bytes for the same input, and an input changed in place', async () => {
    let n = 0
    await expect(checkRenders(base(() => file(String(n++))))).rejects.toThrow(/different bytes/)
    await expect(
      checkRenders(base((input) => ((input.items as unknown as unknown[]).pop(), file('x')))),
    ).rejects.toThrow(/frozen input/)
  })

  it('reports an item dropped under a name it was never given', async () => {
    const bad = base(() => ({ files: [], dropped: [{ capability: 'rules', name: 'ghost', reason: 'no' }] }))
    await expect(checkRenders(bad)).rejects.toThrow(/ghost/)
  })
})

describe('golden cases and round trips', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'omh-kit-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('writes a case with OMH_GOLDEN=update, then holds the renderer to every byte of it', async () => {
    const at = path.join(dir, 'one')
    mkdirSync(at)
    const items = [{ name: 'a', origin: 'o', source: '/a.md', text: 'x' }]
    writeFileSync(path.join(at, 'input.json'), JSON.stringify({ format: 't', capability: 'rules', items }))
    process.env['OMH_GOLDEN'] = 'update'
    try {
      await checkGolden(good, at)
    } finally {
      delete process.env['OMH_GOLDEN']
    }
    expect(readFileSync(path.join(at, 'files/home/agent/T.md'), 'utf8')).toBe('a')
    await checkGolden(good, at)
    await expect(checkGolden(base(() => file('b')), at)).rejects.toThrow(/T\.md/)
    await expect(checkGolden(base(() => ({ ...file('a'), dropped: [{ capability: 'rules', name: 'a', reason: 'r' }] })), at)).rejects.toThrow(/expected\.json/)
  })

  it('fails a parse that loses what render wrote', async () => {
    const json = base(
      (input) => ({ files: [{ kind: 'file', guest: input.binding.path, content: JSON.stringify(input.items) }], dropped: [] }),
      { classes: ['mcp'], parse: (docs) => ({ ok: true, items: { mcp: JSON.parse(docs[0]!.content) as McpServer[] }, left: [] }) },
    )
    await checkRoundTrip(json, { format: 't', capability: 'mcp', items: servers, numRuns: 50 })
    const lossy = { ...json, parse: () => ({ ok: true as const, items: { mcp: [] }, left: [] }) }
    await expect(checkRoundTrip(lossy, { format: 't', capability: 'mcp', items: fc.constant([{ name: 'x', transport: 'http', url: 'https://x', headers: {} }] as McpServer[]) })).rejects.toThrow()
  })
})
