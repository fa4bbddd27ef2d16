/**
 * The probe judge on what the real harnesses printed (Claude Code 2.1.332,
 * OpenCode 1.18.33, Codex 0.171.0), captured offline from a hand-made profile
 * with one item in every class, where the bundled adapters put it: `loaded/`
 * with everything in place, `broken/` with one fault per class. See
 * fixtures/probes/README.md.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { adapterSchema, toAdapter } from '@omh/kernel'
import { type CapabilityClass } from '@omh/plugin-api'
import { judgeProbes, probesNeeded, type CapabilityUnderTest, type ProbeRun } from '../src/judge.js'
import { parseToml } from '@omh/plugin-kit/toml'

const fixtures = path.join(import.meta.dirname, 'fixtures/probes')
/** The bundled adapters, whose probes these outputs answer. */
const adapters = path.resolve(import.meta.dirname, '../../../adapters')

/** The hand-made profile: one item per class (two hooks). */
const ITEMS: Record<CapabilityClass, { name: string; origin?: string }[]> = {
  rules: [{ name: 'omh-probe-rule', origin: 'rules/omh-probe-rule.md' }],
  skills: [{ name: 'omh-skill-probe' }],
  mcp: [{ name: 'omh-echo' }],
  commands: [{ name: 'omh-cmd-probe' }],
  subagents: [{ name: 'omh-agent-probe' }],
  hooks: [{ name: 'omh-hook-start' }, { name: 'omh-hook-guard' }],
}

function load(harness: string) {
  const file = path.join(adapters, `${harness}.toml`)
  const doc = parseToml(readFileSync(file, 'utf8'), file)
  const parsed = adapterSchema.safeParse(doc.data)
  if (!parsed.success) throw new Error(JSON.stringify(parsed.error.issues, null, 2))
  const adapter = toAdapter(file, parsed.data)
  const capabilities: CapabilityUnderTest[] = adapter.bindings.map((b) => ({
    capability: b.capability,
    path: b.path,
    expect: b.expect ?? [],
    // Captured before Codex took commands as skills: test/e2e/doctor.e2e.test.ts proves those.
    items: harness === 'codex' && b.capability === 'commands' ? [] : ITEMS[b.capability],
  }))
  return { adapter, capabilities }
}

function runs(harness: string, variant: string): Record<string, ProbeRun> {
  const dir = path.join(fixtures, harness, variant)
  return Object.fromEntries(
    readdirSync(dir).map((f) => [path.basename(f, '.json'), JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as ProbeRun]),
  )
}

function verdicts(harness: string, variant: string) {
  const { adapter, capabilities } = load(harness)
  return judgeProbes(adapter.probes, capabilities, runs(harness, variant))
}

const failed = (checks: ReturnType<typeof verdicts>) => checks.filter((c) => !c.ok).map((c) => c.name)
const warned = (checks: ReturnType<typeof verdicts>) => checks.filter((c) => c.warning).map((c) => `${c.name}: ${c.detail}`)

describe.each(['claude', 'opencode', 'codex'])('%s testifies', (harness) => {
  it('with every item of every class it can express when each is where it reads it', () => {
    const checks = verdicts(harness, 'loaded')
    expect(checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`)).toEqual([])
    const { adapter } = load(harness)
    const proved = new Set(checks.filter((c) => c.capability).map((c) => c.capability))
    expect([...proved].sort()).toEqual(adapter.bindings.map((b) => b.capability).filter((c) => harness !== 'codex' || c !== 'commands').sort())
  })

  it('runs each probe it needs once, and only those', () => {
    const { adapter, capabilities } = load(harness)
    expect(probesNeeded(adapter.probes, capabilities).sort()).toEqual(Object.keys(runs(harness, 'loaded')).sort())
  })
})

describe('a harness that did not load an item says so, and doctor names it', () => {
  it('claude: rules missing, a skill in the wrong directory, a subagent without a name, an unapproved server, a bad hook event', () => {
    const checks = verdicts('claude', 'broken')
    expect(failed(checks)).toEqual([
      'settings: no line "Invalid settings*"',
      'rules: omh-probe-rule',
      'skills: omh-skill-probe',
      'subagents: omh-agent-probe',
    ])
    const detail = (name: string) => checks.find((c) => c.name === name)!.detail
    expect(detail('settings: no line "Invalid settings*"')).toMatch(/^shows "Invalid settings"/)
    expect(detail('rules: omh-probe-rule')).toBe(
      'does not show response.response.memoryFiles[*] with path = "/work/CLAUDE.md" (response.response.memoryFiles[*] found nothing)',
    )
    // Listed, so loaded; not connected, which is a warning saying what the harness said.
    expect(warned(checks)).toEqual([expect.stringMatching(/^mcp connection: omh-echo: does not connect: it says "omh-echo: node \/work\/mcp-echo\.js - .+"$/)])
  })

  it('opencode: no AGENTS.md, a skill in the wrong directory, a server that fails, a plugin that throws', () => {
    const checks = verdicts('opencode', 'broken')
    expect(failed(checks)).toEqual(['rules: omh-probe-rule', 'skills: omh-skill-probe', 'hooks: omh-hook-start, omh-hook-guard'])
    expect(warned(checks)).toEqual([expect.stringMatching(/^mcp connection: omh-echo: does not connect: it says ".*omh-echo failed"$/)])
    const hooks = checks.filter((c) => c.capability === 'hooks')
    expect(hooks.map((c) => c.ok)).toEqual([true, false])
    expect(hooks[1]!.detail).toMatch(/^shows ".*failed to load plugin.*omh\.js/)
  })

  it('codex: other rules, a skill in the wrong directory, a subagent with an unknown key, a failing server, untrusted hooks, a Claude-ism in the config', () => {
    const checks = verdicts('codex', 'broken')
    expect(failed(checks)).toEqual([
      'strict',
      'rules: omh-probe-rule',
      'skills: omh-skill-probe',
      'subagents: omh-agent-probe',
      'hooks: omh-hook-start',
      'hooks: omh-hook-guard',
    ])
    const detail = (name: string) => checks.find((c) => c.name === name)!.detail
    expect(detail('strict')).toContain('exited 1 (expected 0)')
    expect(detail('hooks: omh-hook-guard')).toMatch(/with trustStatus = "untrusted"$/)
    expect(warned(checks)).toEqual([expect.stringMatching(/^mcp connection: omh-echo: does not connect: it says toolsError = "MCP startup failed/)])
  })
})

describe('a probe that cannot be believed fails every check that reads it', () => {
  const { adapter, capabilities } = load('claude')
  const loaded = runs('claude', 'loaded')

  it('when it printed nothing', () => {
    const checks = judgeProbes(adapter.probes, capabilities, { ...loaded, mcp: { exit: 0, stdout: '', stderr: '  \n' } })
    expect(checks.find((c) => c.name === 'mcp' && !c.capability)).toMatchObject({ ok: false, detail: '`claude mcp list` printed nothing, and a silent probe is never a pass' })
    expect(checks.find((c) => c.name === 'mcp: omh-echo')).toMatchObject({ ok: false, detail: expect.stringMatching(/^cannot tell: probe mcp printed nothing/) })
  })

  it('when it exited with an unexpected status, timed out or was never run', () => {
    const bad = judgeProbes(adapter.probes, capabilities, {
      settings: { exit: 2, stdout: 'x', stderr: 'boom\n' },
      mcp: { exit: null, stdout: '', stderr: '', timedOut: true },
    })
    const detail = (name: string) => bad.find((c) => c.name === name)!.detail
    expect(detail('settings')).toBe('`claude doctor` exited 2 (expected 0): boom | x')
    expect(detail('mcp')).toBe('`claude mcp list` did not finish within 60 s')
    expect(detail('session')).toMatch(/was not run$/)
  })
})

describe('items', () => {
  it('whose evidence is the same text share one check', () => {
    const { adapter, capabilities } = load('claude')
    const rules = capabilities.map((c) =>
      c.capability === 'rules' ? { ...c, items: [{ name: 'style', origin: 'style' }, { name: 'AGENTS.md', origin: 'AGENTS.md' }] } : c,
    )
    const checks = judgeProbes(adapter.probes, rules, runs('claude', 'loaded')).filter((c) => c.capability === 'rules')
    expect(checks).toMatchObject([{ ok: true, items: ['style', 'AGENTS.md'], name: 'rules: style, AGENTS.md' }])
  })

  it('of a class with nothing staged ask no probe', () => {
    const { adapter, capabilities } = load('codex')
    const onlyRules = capabilities.map((c) => (c.capability === 'rules' ? c : { ...c, items: [] }))
    expect(probesNeeded(adapter.probes, onlyRules)).toEqual(['prompt', 'strict'])
  })
})
