/**
 * `omh doctor <harness> --turn` for every bundled harness, as a user runs it: the real harness
 * images built from npm at the adapters' pinned versions (once per run: doctor.e2e.test.ts reuses
 * them), the doctor's profile (test/fixtures/doctor, something in every class) with hooks at every
 * moment added (test/fixtures/turns). First the harness itself confirms each class through the
 * adapter's probes; then it is driven through one turn against the scripted model inside the
 * doctor's container. Every hook omh
 * expresses must be reported invoked (or not reached, where the adapter's
 * [turn] cannot call its tool), and every item carried by the first request,
 * but for the two MCP servers that cannot connect offline: a warning each, as
 * in the probes. Then a hook the harness never runs must fail doctor, named.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, keepForRun, type Engine } from '../helpers/engines.js'
import { doctorReport, doctorScratch } from '../helpers/doctor.js'
import { ROOT, omhAsync } from '../helpers/run.js'

const HARNESSES = ['claude', 'codex', 'opencode', 'gemini', 'copilot', 'pi', 'qwen', 'droid', 'continue', 'kilo'] as const
/**
 * Classes a harness cannot express: omh drops their items by name (pi has no subagents; Continue CLI
 * keeps MCP servers only in its login's file, has no subagent files and never runs hooks).
 */
const UNSUPPORTED: Partial<Record<(typeof HARNESSES)[number], readonly string[]>> = { pi: ['subagents'], continue: ['mcp', 'subagents', 'hooks'] }
/** The doctor profile's items of each class a harness may drop whole. */
const ITEMS: Record<string, readonly string[]> = { mcp: ['omh-echo', 'omh-missing', 'omh-remote'], subagents: ['omh-agent-probe', 'omh-agent-reader'] }
/** What a harness sees as something else: Codex has no commands and limits an agent's sandbox, not its tools; Copilot reads no commands of the user's, Droid none staged as links, Continue none at all. */
const TRANSLATED: Partial<Record<(typeof HARNESSES)[number], readonly string[]>> = {
  codex: ['commands omh-cmd-probe: a skill', 'subagents omh-agent-reader: an agent with sandbox_mode = "read-only"'],
  copilot: ['commands omh-cmd-probe: a skill'],
  droid: ['commands omh-cmd-probe: a skill'],
  continue: ['commands omh-cmd-probe: a skill'],
}
const ON = ENGINES.filter((e) => (process.env['OMH_TURN_ENGINES'] ?? e).split(',').includes(e))
/**
 * One harness: its image built from npm, its probes, then the turn. Kilo's `kilo run` idles for a
 * minute or more before its first step on a busy machine, and snapshots the worktree at each step.
 */
const HARNESS_TIMEOUT = 1_800_000

const reportOf = doctorReport

describe.each(ON)('omh doctor --turn on %s', (engine: Engine) => {
  let scratch: string
  let home: string
  let repo: string
  const images = new Set<string>()
  const omh = (args: readonly string[]) => omhAsync(args, { cwd: repo, env: { OMH_HOME: home } })

  beforeAll(() => {
    ;({ scratch, home, repo } = doctorScratch(engine, 'omh-doctor-turn-e2e-'))
    const hooks = path.join(ROOT, 'test/fixtures/turns/profile/hooks')
    // The same hooks as the session turns, their marks kept in the container's /tmp.
    for (const f of readdirSync(hooks)) writeFileSync(path.join(home, 'hooks', f), readFileSync(path.join(hooks, f), 'utf8').replaceAll('/work/.omh-turn/marks', '/tmp/omh-marks'))
  })

  afterAll(() => {
    // The other doctor file runs the same harness images: built once per run, removed when it ends.
    keepForRun(engine, images)
    rmSync(scratch, { recursive: true, force: true })
  })

  const matrix: Record<string, NonNullable<ReturnType<typeof reportOf>>['classes']> = {}

  afterAll(() => {
    // The harness × capability matrix this run proved, for the CI log (docs/doctor.md records it).
    const rows = Object.entries(matrix).map(([h, classes]) => `${h.padEnd(9)} ${Object.entries(classes).map(([c, v]) => `${c}=${v}`).join(' ')}`)
    if (rows.length) process.stderr.write(`\nomh doctor on ${engine}:\n${rows.join('\n')}\n`)
  })

  // One more try per harness: a harness connects its MCP servers beside its first request, and Droid
  // names only the connected servers' deferred tools, once, so a slow server start can miss the turn.
  it.each(HARNESSES)('%s proves every class it can express, runs every hook omh expresses in a scripted turn, and its first request carries the profile', { timeout: HARNESS_TIMEOUT, retry: 1 }, async (harness) => {
    const ran = await omh(['doctor', harness, '--turn', '--json'])
    const report = reportOf(ran.stdout)
    images.add(report.image)
    const turn = report.turn!
    process.stderr.write(`\ndoctor --turn ${harness} on ${engine}: ${JSON.stringify(turn)}\n`)
    expect(report.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`), ran.stderr.split('\n').slice(-20).join('\n')).toEqual([])
    expect(ran.status).toBe(0)
    expect(turn.exit).toBe(0)
    // The probes first: every class the harness expresses is proved by the harness itself, not only by a mount.
    const unsupported = UNSUPPORTED[harness] ?? []
    matrix[harness] = report.classes
    expect(report.classes).toEqual(Object.fromEntries(['rules', 'skills', 'mcp', 'commands', 'subagents', 'hooks'].map((c) => [c, unsupported.includes(c) ? 'dropped' : 'proved'])))
    for (const [capability, verdict] of Object.entries(report.classes)) {
      if (verdict === 'proved') expect(report.checks.some((c) => c.kind === 'harness' && c.capability === capability && c.ok), capability).toBe(true)
    }
    expect(report.dropped.filter((d) => d.capability !== 'hooks').map((d) => `${d.capability} ${d.name}: ${d.reason}`).sort()).toEqual(
      unsupported.flatMap((c) => (ITEMS[c] ?? []).map((name) => `${c} ${name}: unsupported`)),
    )
    expect(report.translated.map((t) => `${t.capability} ${t.name}: ${t.to}`)).toEqual(TRANSLATED[harness] ?? [])
    for (const item of ['omh-cmd-probe', ...(unsupported.includes('subagents') ? [] : ['omh-agent-reader'])]) {
      expect(report.checks.some((c) => c.kind === 'harness' && c.items?.includes(item) && c.ok && !c.warning), item).toBe(true)
    }
    // Loaded, not connected: one warning per server that cannot connect offline, with the reason.
    const servers = !unsupported.includes('mcp')
    expect(report.checks.filter((c) => c.kind !== 'turn' && c.warning).map((c) => `${c.name}: ${c.detail}`)).toEqual(servers ? [
      "mcp connection: omh-remote: does not connect: doctor runs without network (`--network` runs it on the session's network)",
      'mcp connection: omh-missing: does not connect: its command `omh-no-such-server` is not found in the image',
    ] : [])
    const dropped = report.dropped.filter((d) => d.capability === 'hooks').map((d) => d.name)
    // Every hook of the profile is either dropped (announced) or reported, never both, never neither.
    expect(turn.hooks.map((h) => h.name).sort()).toEqual(readdirSync(path.join(home, 'hooks')).map((f) => f.replace(/\.json$/, '')).filter((n) => !dropped.includes(n)).sort())
    const notInvoked = turn.hooks.filter((h) => !h.invoked).map((h) => h.name)
    // Claude's Grep (offered through the adapter's session arguments, which the turn passes as a
    // session does) and OpenCode's grep reach the hooks narrowed to `search` (Codex drops them: it has
    // no such tool); Codex's apply_patch reaches its edit hook, and Copilot's grep its Grep hooks.
    expect(notInvoked).toEqual([])
    expect(turn.unreached).toEqual([])
    expect(report.checks.find((c) => c.name === 'omh-hook-search (after-tool)')?.detail ?? 'dropped').toBe({ claude: 'invoked', codex: 'dropped', opencode: 'invoked', gemini: 'invoked', copilot: 'invoked', pi: 'invoked', qwen: 'invoked', droid: 'invoked', continue: 'dropped', kilo: 'invoked' }[harness])
    for (const h of turn.hooks) if (h.name.endsWith('-inject')) expect(h.delivered, h.name).toBe(true)
    // The turn runs every hook as if its `when` passed: the refusal meant for `git push` refuses the
    // turn's shell call, and the model reads it.
    if (!unsupported.includes('hooks')) {
      expect(turn.hooks.find((h) => h.name === 'no-push')).toMatchObject({ invoked: true, delivered: true })
      expect(report.checks.find((c) => c.name === 'no-push (before-tool)')?.detail).toBe('invoked, its refusal reached the next request')
    }
    // The two servers that cannot connect offline offer no tools: loaded, not connected, a warning
    // in the turn as in the probes, and the turn passes.
    const unconnected = servers ? ['omh-remote', 'omh-missing'] : []
    expect(turn.items.filter((i) => i.firstIn === null).map((i) => i.name)).toEqual(unconnected)
    expect(report.checks.filter((c) => c.kind === 'turn' && c.warning).map((c) => `${c.name}: ${c.detail}`)).toEqual(servers ? [
      "mcp: omh-remote: in no request: loaded, not connected (does not connect: doctor runs without network (`--network` runs it on the session's network))",
      'mcp: omh-missing: in no request: loaded, not connected (does not connect: its command `omh-no-such-server` is not found in the image)',
    ] : [])
    expect(report.warnings).toBe(servers ? 4 : 0)
    // Codex starts MCP servers beside its first request: its server's tools may come one request late.
    const late = turn.items.filter((i) => !i.carried && !unconnected.includes(i.name))
    expect(late.every((i) => harness === 'codex' && i.capability === 'mcp' && i.firstIn === 2), JSON.stringify(late)).toBe(true)
    // A class the harness cannot express is dropped, and no request can carry its items.
    expect(new Set(turn.items.map((i) => i.capability))).toEqual(new Set(['rules', 'skills', 'subagents', 'mcp'].filter((c) => !unsupported.includes(c))))
  })

  it('fails with exit 1 naming a hook the harness never runs', async () => {
    // Claude with its after-tool event misspelled: omh writes the hook, Claude never calls it.
    const adapters = path.join(home, 'adapters')
    mkdirSync(adapters, { recursive: true })
    const bundled = readFileSync(path.join(ROOT, 'adapters/claude.toml'), 'utf8')
    const wrong = bundled.replace('after-tool    = "PostToolUse"', 'after-tool    = "PostToolUsed"')
    expect(wrong).not.toBe(bundled)
    writeFileSync(path.join(adapters, 'claude.toml'), wrong)
    try {
      const ran = await omh(['doctor', 'claude', '--turn', '--json'])
      expect(ran.status, ran.stderr).toBe(1)
      const report = reportOf(ran.stdout)
      expect(report.turn!.hooks.filter((h) => !h.invoked).map((h) => h.name).sort()).toEqual(['after-inject', 'after-run', 'edit-run', 'omh-hook-search', 'read-run', 'search-run'])
      expect(report.checks.filter((c) => !c.ok && c.kind === 'turn').map((c) => c.name).sort()).toEqual([
        'after-inject (after-tool)',
        'after-run (after-tool)',
        'edit-run (after-tool)',
        'omh-hook-search (after-tool)',
        'read-run (after-tool)',
        'search-run (after-tool)',
      ])
      const human = await omh(['doctor', 'claude', '--turn'])
      expect(human.status).toBe(1)
      expect(human.stdout).toMatch(/✗ +turn +after-run \(after-tool\) +not invoked by the harness/)
    } finally {
      rmSync(path.join(adapters, 'claude.toml'))
    }
  })
})
