import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

/**
 * An engine that runs nothing: asked for the doctor's container, it measures
 * from the mounts' host side what the runner would measure inside, and finds
 * every staged file as staged, every binary on PATH, every token renamable.
 */
const FAKE_RUNTIME = `import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
const hostOf = (spec, guest) => spec.mounts.find((m) => m.guest === guest).host
const each = (keys, value) => Object.fromEntries(keys.map((k) => [k, value(k)]))
export default {
  kind: 'runtime', apiVersion: 1, meta: { name: 'fake-runtime', version: '0.0.0' }, engine: 'fake',
  async detect() { return { engine: 'fake', version: '1' } },
  async hasImage() { return true },
  async build() {},
  async up() { throw new Error('not used by doctor') },
  async exec() { throw new Error('not used by doctor') },
  async list() { return [] },
  async down() {},
  async run(spec) {
    const plan = JSON.parse(readFileSync(path.join(hostOf(spec, '/omh/doctor'), 'plan.json'), 'utf8'))
    const report = {
      digest: each(plan.digest, (p) => ({ sha256: createHash('sha256').update(readFileSync(hostOf(spec, p))).digest('hex'), kind: 'file' })),
      syntax: {},
      bins: each(plan.bins, (b) => ({ path: '/usr/local/bin/' + b })),
      renames: each(plan.renames, () => ({ ok: true, detail: 'renamed' })),
      probes: {},
    }
    return { exitCode: 0, stdout: JSON.stringify(report), stderr: '' }
  },
}
`

const BARE = 'install = "true"\n'
const RULES = '[capabilities.rules]\npath = "/work/AGENTS.md"\nrender = "concat"\n'
const TOKEN = '{"token":"real"}\n'

/**
 * Four of omh's harnesses replaced by bare adapters (rules only, and no rules
 * in the profile, so the fake engine's report passes them); codex and claude
 * keep a login. Claude and Amp name a probe checked on every run, which the
 * fake engine never runs.
 */
function setup(home: Record<string, string>) {
  const root = gitRepo({ 'README.md': 'hi\n' })
  const dir = testdir({
    'settings.toml': 'plugins = ["./fake-runtime.mjs"]\nruntime = "fake"\n',
    'fake-runtime.mjs': FAKE_RUNTIME,
    'adapters/claude.toml': `name = "claude"\nbin = "claude"\n${BARE}creds = ["$HOME/.claude/"]\ntoken = ["$HOME/.claude/token.json"]\n${RULES}`,
    'adapters/codex.toml': `name = "codex"\nbin = "codex"\n${BARE}creds = ["$HOME/.codex/"]\ntoken = ["$HOME/.codex/auth.json"]\n${RULES}`,
    'adapters/opencode.toml': `name = "opencode"\nbin = "opencode"\n${BARE}${RULES}`,
    'adapters/amp.toml': `name = "amp"\nbin = "amp"\n${BARE}creds = ["$HOME/.local/share/amp/"]\ntoken = ["$HOME/.local/share/amp/secrets.json"]\n${RULES}`,
    ...home,
  })
  return { root, env: { OMH_HOME: dir } }
}

interface Report {
  harness: string
  ok: boolean
  failed: number
  account?: string | null
  checks: { kind: string; ok: boolean; detail: string }[]
  error?: { code: string; message: string; hint?: string }
}

describe('omh doctor, every harness', () => {
  const ambiguous = { 'creds/codex/a/.codex/auth.json': TOKEN, 'creds/codex/b/.codex/auth.json': TOKEN }

  it('checks every harness when one cannot be checked, reports each in one JSON document, and fails with exit 1', () => {
    const { root, env } = setup(ambiguous)
    const r = omh(['doctor', '--json'], { cwd: root, env })
    expect(r.status, r.stderr).toBe(1)
    const doc = r.json()
    expect(doc.error.code).toBe('DOCTOR_FAILED')
    expect(doc.error.message).toContain('codex')
    const reports: Report[] = doc.error.details.reports
    expect(reports.map((x) => [x.harness, x.ok])).toEqual([
      ['amp', true],
      ['claude', true],
      ['codex', false],
      ['continue', true],
      ['copilot', true],
      ['droid', true],
      ['gemini', true],
      ['kilo', true],
      ['opencode', true],
      ['pi', true],
      ['qwen', true],
    ])
    const codex = reports[2]!
    expect(codex.error).toMatchObject({ code: 'ACCOUNT_AMBIGUOUS', message: expect.stringContaining('several accounts') })
    expect(codex.failed).toBe(1)
    expect(codex.checks).toEqual([expect.objectContaining({ ok: false, detail: expect.stringContaining('ACCOUNT_AMBIGUOUS') })])
  })

  it('prints the checklist of every harness and what stopped the one it could not check', () => {
    const { root, env } = setup(ambiguous)
    const r = omh(['doctor'], { cwd: root, env })
    expect(r.status, r.stderr).toBe(1)
    expect(r.stdout).toMatch(/claude[^\n]*\n[\s\S]*all 2 checks passed/)
    expect(r.stdout).toMatch(/codex[\s\S]*codex has several accounts \(a, b\)[\s\S]*ACCOUNT_AMBIGUOUS/)
    expect(r.stdout).toMatch(/opencode[^\n]*\n[\s\S]*all 1 checks passed: opencode/)
    expect(r.stderr).toContain('Code: DOCTOR_FAILED')
    expect(r.stderr).not.toContain('Code: ACCOUNT_AMBIGUOUS')
  })

  it('with -a, fails the harnesses that lack that account and checks the one that has it', () => {
    const { root, env } = setup({ 'creds/claude/work/.claude/token.json': TOKEN })
    const r = omh(['doctor', '-a', 'work', '--json'], { cwd: root, env })
    expect(r.status, r.stderr).toBe(1)
    const reports: Report[] = r.json().error.details.reports
    expect(reports.map((x) => [x.harness, x.ok, x.error?.code])).toEqual([
      ['amp', false, 'ACCOUNT_NOT_FOUND'],
      ['claude', true, undefined],
      ['codex', false, 'ACCOUNT_NOT_FOUND'],
      ['continue', false, 'ACCOUNT_NOT_FOUND'],
      ['copilot', false, 'ACCOUNT_NOT_FOUND'],
      ['droid', false, 'ACCOUNT_NOT_FOUND'],
      ['gemini', false, 'ACCOUNT_NOT_FOUND'],
      ['kilo', false, 'ACCOUNT_NOT_FOUND'],
      ['opencode', false, 'ACCOUNT_NOT_FOUND'],
      ['pi', false, 'ACCOUNT_NOT_FOUND'],
      ['qwen', false, 'ACCOUNT_NOT_FOUND'],
    ])
    expect(reports[1]!.account).toBe('work')
  })

  it('passes when every harness passes', () => {
    const { root, env } = setup({})
    const r = omh(['doctor', '--json'], { cwd: root, env })
    expect(r.status, r.stderr).toBe(0)
    expect(r.json().result.reports.map((x: Report) => [x.harness, x.ok])).toEqual([
      ['amp', true],
      ['claude', true],
      ['codex', true],
      ['continue', true],
      ['copilot', true],
      ['droid', true],
      ['gemini', true],
      ['kilo', true],
      ['opencode', true],
      ['pi', true],
      ['qwen', true],
    ])
  })
})

describe('omh doctor <harness>', () => {
  it("fails with the harness's own error when it cannot be checked", () => {
    const { root, env } = setup({ 'creds/codex/a/.codex/auth.json': TOKEN, 'creds/codex/b/.codex/auth.json': TOKEN })
    const r = omh(['doctor', 'codex', '--json'], { cwd: root, env })
    expect(r.status).toBe(2)
    expect(r.json().error.code).toBe('ACCOUNT_AMBIGUOUS')
  })
})
