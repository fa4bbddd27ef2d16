/**
 * A fourth harness from outside: the Gemini CLI package in examples/plugins,
 * installed with `omh plugins add` from a temporary folder (no change to omh),
 * then `omh doctor gemini` on each engine with the real Gemini CLI from npm
 * and the profile of test/fixtures/doctor. Gemini itself must show every item
 * of every class: rules, subagents and commands in what it sends a scripted
 * model, skills and MCP servers in its own listings, and every hook by running
 * it in that model's turn.
 */
import { cpSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, removeBuiltImages, requireEngine } from '../helpers/engines.js'
import { doctorScratch, doctorReport } from '../helpers/doctor.js'
import { ROOT, omh, omhAsync } from '../helpers/run.js'

const PACKAGE = 'examples/plugins/omh-plugin-gemini'
/** The run's engines; OMH_DOCTOR_ENGINES=docker (or podman) narrows them by hand. */
const ON = ENGINES.filter((e) => (process.env['OMH_DOCTOR_ENGINES'] ?? e).split(',').includes(e))

describe.each(ON)('Gemini CLI as a plugin, on %s', (engine) => {
  let scratch: string
  let home: string
  let repo: string
  const images = new Set<string>()

  beforeAll(async () => {
    await requireEngine(engine)
    ;({ scratch, home, repo } = doctorScratch(engine, 'omh-gemini-e2e-'))
    cpSync(path.join(ROOT, PACKAGE), path.join(scratch, PACKAGE), { recursive: true })
    // Gemini puts a session-start injection before the prompt, where a `/command` is no longer first.
    writeFileSync(path.join(home, 'hooks', 'omh-hook-orient.json'), '{ "on": "session-start", "inject": "Read the README first." }\n')
  })

  afterAll(() => {
    removeBuiltImages(engine, images)
    rmSync(scratch, { recursive: true, force: true })
  })

  it('installs with `omh plugins add`, lists gemini, and Gemini confirms every class, running every hook', async () => {
    const env = { OMH_HOME: home }
    const added = omh(['plugins', 'add', `./${PACKAGE}`, '--json'], { cwd: scratch, env })
    expect(added.status, added.stderr).toBe(0)
    expect(added.json().result).toMatchObject({ name: 'omh-plugin-gemini', adapters: ['gemini'] })
    const adapters = omh(['adapters', 'ls', '--json'], { cwd: scratch, env }).json().result.adapters
    expect(adapters).toContainEqual(expect.objectContaining({ name: 'gemini', origin: 'plugin', plugin: 'omh-plugin-gemini', valid: true }))

    const ran = await omhAsync(['doctor', 'gemini', '--json'], { cwd: repo, env })
    const report = doctorReport(ran.stdout)
    images.add(report.image)
    expect(
      report.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`),
      ran.stderr.split('\n').slice(-20).join('\n'),
    ).toEqual([])
    expect(ran.status).toBe(0)
    expect(report.engine).toBe(engine)
    expect(report.classes).toEqual({ rules: 'proved', skills: 'proved', mcp: 'proved', commands: 'proved', subagents: 'proved', hooks: 'proved' })
    expect(report.dropped).toEqual([])
    for (const capability of Object.keys(report.classes)) {
      expect(report.checks.some((c) => c.kind === 'harness' && c.capability === capability && c.ok), capability).toBe(true)
    }
    // Each hook ran in the probe's turn (the session-start one, the shell guard, the search one).
    for (const hook of ['omh-hook-start', 'omh-hook-orient', 'omh-hook-guard', 'omh-hook-search']) {
      expect(report.checks.some((c) => c.kind === 'harness' && c.capability === 'hooks' && c.items?.includes(hook) && c.ok), hook).toBe(true)
    }
    // Loaded, not connected: one warning per server that cannot connect offline, with the reason.
    expect(report.warnings).toBe(2)
    expect(report.checks.filter((c) => c.warning).map((c) => `${c.name}: ${c.detail}`)).toEqual([
      "mcp connection: omh-remote: does not connect: doctor runs without network (`--network` runs it on the session's network)",
      'mcp connection: omh-missing: does not connect: its command `omh-no-such-server` is not found in the image',
    ])
  })
})
