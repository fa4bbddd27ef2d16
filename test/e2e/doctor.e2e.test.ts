/**
 * `omh doctor` as a user reads it when something is wrong, on the real Claude Code (every bundled
 * harness with a turn proves its classes in doctor-turn.e2e.test.ts, whose images this file reuses):
 * an adapter whose skills path the harness does not read must fail, naming the item and the path;
 * and a remote MCP server connects only on the session's network (`--network`). Amp, which has no
 * turn doctor can drive (its model is reached only through ampcode.com), proves here what it shows
 * offline.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { DoctorReport } from '@omh/doctor'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, RUN_LABELS, TEST_BASE, TEST_RUN, client, keepForRun, requireEngine, testNetwork } from '../helpers/engines.js'
import { DOCTOR_FIXTURE as FIXTURE, doctorReport, doctorScratch } from '../helpers/doctor.js'
import { ROOT, omhAsync } from '../helpers/run.js'

/** The run's engines; OMH_DOCTOR_ENGINES=docker (or podman) narrows them by hand. */
const ON = ENGINES.filter((e) => (process.env['OMH_DOCTOR_ENGINES'] ?? e).split(',').includes(e))

const omh = (args: readonly string[], cwd: string, env: Record<string, string>) => omhAsync(args, { cwd, env })

const reportOf = (ran: { stdout: string }): DoctorReport => doctorReport(ran.stdout)

describe.each(ON)('omh doctor on %s, against the real harnesses', (engine) => {
  // The profile and the repository live as long as the file: every test reuses them.
  let scratch: string
  let home: string
  let repo: string
  const images = new Set<string>()
  const env = () => ({ OMH_HOME: home })

  beforeAll(async () => {
    await requireEngine(engine)
    ;({ scratch, home, repo } = doctorScratch(engine, 'omh-doctor-e2e-'))
  })

  afterAll(() => {
    // The other doctor file runs the same harness images: built once per run, removed when it ends.
    keepForRun(engine, images)
    rmSync(scratch, { recursive: true, force: true })
  })

  it('amp proves its skills, commands (as skills) and MCP servers from its own offline output, leaves its rules unproved, drops what it cannot express by name, and refuses --turn', async () => {
    const ran = await omh(['doctor', 'amp', '--json'], repo, env())
    const report = reportOf(ran)
    images.add(report.image)
    expect(report.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`), ran.stderr.split('\n').slice(-20).join('\n')).toEqual([])
    expect(ran.status).toBe(0)
    // Amp shows no rules without a turn against ampcode.com: staged and mounted (checked), not shown.
    expect(report.classes).toEqual({ rules: 'unproved', skills: 'proved', mcp: 'proved', commands: 'proved', subagents: 'dropped', hooks: 'dropped' })
    expect(report.checks.some((c) => c.kind === 'staged' && c.name === '/work/AGENTS.md' && c.ok)).toBe(true)
    for (const capability of ['skills', 'mcp', 'commands']) {
      expect(report.checks.some((c) => c.kind === 'harness' && c.capability === capability && c.ok && !c.warning), capability).toBe(true)
    }
    // Amp reads no commands, subagents or hooks of the user's: the command is a skill, the rest dropped by name.
    expect(report.translated.map((t) => `${t.capability} ${t.name}: ${t.to}`)).toEqual(['commands omh-cmd-probe: a skill'])
    expect(report.dropped.map((d) => `${d.capability} ${d.name}: ${d.reason}`).sort()).toEqual(
      [...['omh-agent-probe', 'omh-agent-reader'].map((n) => `subagents ${n}: unsupported`), ...['omh-hook-guard', 'omh-hook-search', 'omh-hook-start'].map((n) => `hooks ${n}: unsupported`)].sort(),
    )
    // Its settings parsed (no "Invalid JSON"), every server listed, the one that can connect offline connected.
    expect(report.checks.filter((c) => c.kind === 'harness' && c.capability === 'mcp' && c.ok && !c.warning).map((c) => c.name)).toEqual(['mcp: omh-echo', 'mcp: omh-remote', 'mcp: omh-missing', 'mcp connection: omh-echo'])
    expect(report.checks.filter((c) => c.warning).map((c) => `${c.name}: ${c.detail}`)).toEqual([
      "mcp connection: omh-remote: does not connect: doctor runs without network (`--network` runs it on the session's network)",
      'mcp connection: omh-missing: does not connect: its command `omh-no-such-server` is not found in the image',
    ])
    const turn = await omh(['doctor', 'amp', '--turn', '--json'], repo, env())
    expect(turn.status).toBe(2)
    expect(JSON.parse(turn.stdout).error.code).toBe('DOCTOR_NO_TURN')
  })

  it('prints a checklist, and fails with exit 1 naming the item and the path when the adapter puts skills (and MCP servers) where the harness does not look', async () => {
    const adapters = path.join(home, 'adapters')
    mkdirSync(adapters, { recursive: true })
    const bundled = readFileSync(path.join(ROOT, 'adapters/claude.toml'), 'utf8')
    const wrong = bundled
      .replace('path   = "$HOME/.claude/skills"', 'path   = "$HOME/.claude/skillz"')
      .replace('path   = "/work/.mcp.json"', 'path   = "/work/.mcp-elsewhere.json"')
    expect(wrong).not.toContain('/work/.mcp.json')
    writeFileSync(path.join(adapters, 'claude.toml'), wrong)
    try {
      const ran = await omh(['doctor', 'claude'], repo, env())
      expect(ran.status, ran.stderr).toBe(1)
      expect(ran.stdout).toMatch(/✗ +harness +skills: omh-skill-probe +does not show .*name = "omh-skill-probe", path = "\/home\/agent\/\.claude\/skillz\/omh-skill-probe\/SKILL\.md"/)
      expect(ran.stdout).toContain('skills failed')
      // A server the harness does not list is not loaded: a failure, whatever connecting would do.
      expect(ran.stdout).toMatch(/✗ +harness +mcp: omh-echo +shows no line "omh-echo: \* - \*"/)
      expect(ran.stdout).toContain('mcp failed')
      expect(ran.stderr).toContain('Code: DOCTOR_FAILED')
      const json = await omh(['doctor', 'claude', '--json'], repo, env())
      expect(json.status).toBe(1)
      const doc = JSON.parse(json.stdout)
      expect(doc.error.code).toBe('DOCTOR_FAILED')
      expect(doc.error.details.reports[0].checks.filter((c: { ok: boolean }) => !c.ok)).toMatchObject([
        { kind: 'harness', capability: 'skills', items: ['omh-skill-probe'], detail: expect.stringContaining('/home/agent/.claude/skillz/omh-skill-probe/SKILL.md') },
        ...['omh-echo', 'omh-remote', 'omh-missing'].map((name) => ({ kind: 'harness', capability: 'mcp', items: [name] })),
      ])
    } finally {
      writeFileSync(path.join(adapters, 'claude.toml'), bundled)
    }
  })

  it('with --network, a remote MCP server reachable on the session network connects; without, it is a warning', async () => {
    // A remote server in a container of its own, on a network of this run, which the session joins.
    const network = testNetwork(engine, 'doctor-net')
    const server = `omh-e2e-mcp-net-${TEST_RUN}`
    const settings = readFileSync(path.join(home, 'settings.toml'), 'utf8')
    const mcp = readFileSync(path.join(home, 'mcp.json'), 'utf8')
    try {
      const labels = Object.entries(RUN_LABELS).flatMap(([k, v]) => ['--label', `${k}=${v}`])
      const started = client(engine, ['run', '-d', '--name', server, ...labels, '--network', network, '-v', `${path.join(FIXTURE, 'mcp-http.mjs')}:/srv/mcp-http.mjs:ro`, TEST_BASE, 'node', '/srv/mcp-http.mjs', '8080'])
      expect(started.status, started.stderr).toBe(0)
      writeFileSync(path.join(home, 'settings.toml'), settings.replace('\n[image]', `\n[session]\nnetwork = "${network}"\n\n[image]`))
      writeFileSync(path.join(home, 'mcp.json'), JSON.stringify({ mcpServers: { 'omh-net': { type: 'http', url: `http://${server}:8080/mcp` } } }))
      const connected = await omh(['doctor', 'claude', '--network', '--json'], repo, env())
      const net = reportOf(connected)
      images.add(net.image)
      expect(net.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`), connected.stderr).toEqual([])
      expect(connected.status).toBe(0)
      expect(net.warnings).toBe(0)
      // Loaded and connected: both of Claude's pieces of evidence shown, neither a warning.
      expect(net.checks.filter((c) => c.kind === 'harness' && c.capability === 'mcp').map((c) => [c.name, c.ok, c.warning ?? false])).toEqual([
        ['mcp: omh-net', true, false],
        ['mcp connection: omh-net', true, false],
      ])
      const offline = await omh(['doctor', 'claude', '--json'], repo, env())
      const none = reportOf(offline)
      expect(offline.status, offline.stderr).toBe(0)
      expect(none.warnings).toBe(1)
      expect(none.checks.filter((c) => c.warning).map((c) => `${c.name}: ${c.detail}`)).toEqual([
        "mcp connection: omh-net: does not connect: doctor runs without network (`--network` runs it on the session's network)",
      ])
    } finally {
      writeFileSync(path.join(home, 'settings.toml'), settings)
      writeFileSync(path.join(home, 'mcp.json'), mcp)
      client(engine, ['rm', '-f', server])
      client(engine, ['network', 'rm', network])
    }
  })

})
