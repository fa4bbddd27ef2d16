import { readdirSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { Kernel, type Adapter } from '@omh/kernel'
import { emptyProfile, type Hook, type StagedEntry } from '@omh/plugin-api'
import { stateHooks } from '@omh/sandbox'
import { ROOT } from '../helpers/run.js'
import { testdir } from '@omh/test-utils'

const HARNESSES = readdirSync(path.join(ROOT, 'adapters')).filter((f) => f.endsWith('.toml')).map((f) => f.slice(0, -'.toml'.length))

async function kernel(): Promise<Kernel> {
  return Kernel.create({ cwd: testdir(), env: { OMH_HOME: testdir(), HOME: testdir() }, defaultsFile: path.join(ROOT, 'defaults/settings.toml'), bundledAdapters: path.join(ROOT, 'adapters'), fallbackDirs: [ROOT] })
}

const text = (files: readonly StagedEntry[]) => files.map((f) => (f.kind === 'file' ? f.content.toString() : '')).join('\n')
const events = (adapter: Adapter) => adapter.bindings.find((b) => b.capability === 'hooks')?.events ?? {}

describe("omh's state hooks", () => {
  it.each(HARNESSES)('%s: one per moment its adapter binds, each rendered and none reported', async (harness) => {
    const k = await kernel()
    const adapter = await k.adapter(harness)
    const own = stateHooks(adapter)
    expect(own.map((h) => h.on).sort()).toEqual(Object.keys(events(adapter)).sort())
    const report = await k.render(adapter, emptyProfile(), own)
    expect(report.dropped).toEqual([])
    expect(report.translated).toEqual([])
    const written = text(report.files)
    for (const hook of own) expect(written, hook.name).toContain(hook.name)
    if (own.length) expect(written).toContain(`/omh/sock/${harness}.state`)
  })

  it('binds waiting where it was verified: Claude Code, as Notification', async () => {
    const k = await kernel()
    const bound = await Promise.all(HARNESSES.map(async (h) => [h, events(await k.adapter(h)).waiting] as const))
    expect(Object.fromEntries(bound.filter(([, e]) => e))).toEqual({ claude: 'Notification' })
    const claude = await k.adapter('claude')
    expect(stateHooks(claude).find((h) => h.on === 'waiting')?.action).toMatchObject({ kind: 'run', command: expect.stringContaining('"state":"waiting"') })
  })

  it('are none for an adapter without hooks', () => {
    const adapter = { name: 'plain', file: '/a/plain.toml', bindings: [] } as unknown as Adapter
    expect(stateHooks(adapter)).toEqual([])
  })

  it("are never reported, where the user's hook at the same moment is", async () => {
    const k = await kernel()
    const codex = await k.adapter('codex')
    const mine: Hook = { name: 'ping', on: 'waiting', action: { kind: 'run', command: 'true' }, fields: [], source: '/home/u/.omh/hooks/ping.json' }
    const own: Hook = { ...mine, name: '.omh-state-waiting', source: codex.file }
    const report = await k.render(codex, { ...emptyProfile(), hooks: [mine] }, [own])
    expect(report.dropped).toEqual([{ capability: 'hooks', name: 'ping', reason: 'no `waiting` moment' }])
    expect(report.capabilities.flatMap((c) => c.dropped)).toEqual(report.dropped)
  })
})
