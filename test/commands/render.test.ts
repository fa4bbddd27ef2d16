import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh, ROOT } from '../helpers/run.js'
import { gitRepo, testdir } from '../helpers/testdir.js'

describe('omh render', () => {
  it('shows every class of the example profile for claude', () => {
    const ran = omh(['render', 'claude', '--json'], { env: { OMH_HOME: path.join(ROOT, 'examples/profile') }, cwd: testdir() })
    expect(ran.status).toBe(0)
    const result = ran.json().result
    expect(result.capabilities.map((c: { capability: string; files: unknown[] }) => [c.capability, c.files.length > 0])).toEqual([
      ['rules', true],
      ['skills', true],
      ['mcp', true],
      ['commands', true],
      ['subagents', true],
      ['hooks', true],
    ])
    expect(result.selection.find((s: { capability: string }) => s.capability === 'rules').use).toMatchObject({
      value: ['testing', 'style'],
      layer: 'personal',
    })
  })

  it('refuses a value the harness would substitute, naming server, field and value, and stages it where none would', () => {
    const home = testdir({ 'mcp.json': JSON.stringify({ mcpServers: { docs: { command: 'srv', args: ['--root', '${HOME}/docs'] } } }) })
    const claude = omh(['render', 'claude'], { env: { OMH_HOME: home }, cwd: testdir() })
    expect(claude.status).toBe(2)
    expect(claude.stderr).toContain('claude would change 1 value of your profile before using it:')
    expect(claude.stderr).toContain('docs.args[1]: "${HOME}/docs": claude substitutes `${…}` in this file')
    expect(claude.stderr).toContain('Code: RENDER_REFUSED')
    expect(omh(['render', 'codex'], { env: { OMH_HOME: home }, cwd: testdir() }).status).toBe(0)
  })

  it("composes the project's CLAUDE.md for claude when it has no AGENTS.md, and says so", () => {
    const repo = gitRepo({ 'CLAUDE.md': '# Mine\n' })
    const ran = omh(['render', 'claude', '--content'], { env: { OMH_HOME: testdir() }, cwd: repo })
    expect(ran.status).toBe(0)
    expect(ran.stdout).toContain('<!-- omh: CLAUDE.md -->\n# Mine')
    expect(ran.stderr).toContain("composed the project's CLAUDE.md")
  })

  it('skips a command whose file name is not UTF-8, naming it in a notice, and renders the rest', () => {
    const home = testdir({ 'commands/ok.md': 'Do it.\n' })
    writeFileSync(Buffer.concat([Buffer.from(path.join(home, 'commands/bad')), Buffer.from([0xff]), Buffer.from('.md')]), 'x\n')
    const ran = omh(['render', 'claude', '--json'], { env: { OMH_HOME: home }, cwd: testdir() })
    expect(ran.stderr).toBe('')
    expect(ran.status).toBe(0)
    const result = ran.json().result
    expect(result.selection.find((s: { capability: string }) => s.capability === 'commands').selected).toEqual(['ok'])
    expect(result.notices).toEqual([
      `skipped ${path.join(home, 'commands')}/bad\\xff.md: its name is not UTF-8, so no harness could be given it; rename it`,
    ])
  })
})
