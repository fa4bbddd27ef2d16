import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh, ROOT } from '../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

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

  it('names a profile file with a line break in its name on one line, the break shown as \\n', () => {
    const home = testdir({ 'rules/style.md': 'Be brief.\n' })
    writeFileSync(path.join(home, 'rules/bad\nname.md'), 'x\n')
    const ran = omh(['render', 'claude'], { env: { OMH_HOME: home }, cwd: testdir() })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain(`${path.join(home, 'rules')}/bad\\nname.md  cannot name an entry`)
  })

  it('lists each harness with the release its adapter was checked against and whether doctor drives a turn', () => {
    const ran = omh(['adapters', 'ls', '--json'], { env: { OMH_HOME: testdir() }, cwd: testdir() })
    expect(ran.status, ran.stderr).toBe(0)
    const bundled = (ran.json().result.adapters as { name: string; version?: string; turn: boolean; origin: string }[]).filter((a) => a.origin === 'bundled')
    expect(bundled.find((a) => a.name === 'claude')).toMatchObject({ version: '2.1.332', turn: true })
    for (const a of bundled) expect(a.version, a.name).toMatch(/^\d+\.\d+\.\d+/)
    const text = omh(['adapters', 'ls'], { env: { OMH_HOME: testdir(), NO_COLOR: '1' }, cwd: testdir() }).stdout
    expect(text).toMatch(/^claude +2\.1\.332 +rules skills mcp commands subagents hooks +turn +bundled$/m)
  })

  it('lists no adapter for a dot file in the adapters folder, as editors and tools leave there', () => {
    const home = testdir({ 'adapters/.hidden.toml': 'name = "hidden"\n', 'adapters/.h.toml.swp': 'x' })
    const ran = omh(['adapters', 'ls'], { env: { OMH_HOME: home }, cwd: testdir() })
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stdout + ran.stderr).not.toContain('hidden')
  })

  it('says per item whether each harness takes it natively, translated (to what) or drops it (why)', () => {
    const home = testdir({
      'commands/review.md': '---\ndescription: Reviews.\n---\nReview $ARGUMENTS.\n',
      'subagents/reader.md': '---\nname: reader\ndescription: Reads.\ntools: read, search\n---\nYou read.\n',
      'subagents/fixer.md': '---\nname: fixer\ndescription: Fixes.\ntools: read, edit\n---\nYou fix.\n',
      'hooks/find.json': '{ "on": "after-tool", "tools": ["search"], "run": "true" }\n',
    })
    const codex = omh(['render', 'codex', '--json'], { env: { OMH_HOME: home }, cwd: testdir() })
    expect(codex.status, codex.stderr).toBe(0)
    const result = codex.json().result
    expect(result.items).toEqual([
      { capability: 'commands', name: 'review', status: 'translated', to: 'a skill' },
      { capability: 'subagents', name: 'fixer', status: 'dropped', reason: 'no way to limit a subagent’s tools to read, edit (only to reading, as a read-only sandbox)' },
      { capability: 'subagents', name: 'reader', status: 'translated', to: 'an agent with sandbox_mode = "read-only"' },
      { capability: 'hooks', name: 'find', status: 'dropped', reason: 'no `search` tool' },
    ])
    const skill = result.capabilities.find((c: { capability: string }) => c.capability === 'commands')
    expect(skill.files.map((f: { guest: string }) => f.guest)).toEqual(['/home/agent/.agents/skills/review/SKILL.md'])
    const text = omh(['render', 'codex'], { env: { OMH_HOME: home }, cwd: testdir() })
    expect(text.stderr).toContain('omh: codex — translated 1 command (to a skill), 1 subagent (to an agent with sandbox_mode = "read-only"); dropped 1 subagent (no way to limit')
    const opencode = omh(['render', 'opencode', '--json'], { env: { OMH_HOME: home }, cwd: testdir() }).json().result
    expect(opencode.items.map((i: { name: string; status: string }) => `${i.name} ${i.status}`)).toEqual(['review native', 'fixer native', 'reader native', 'find native'])
  })

  it('refuses with exit 2, naming item, harness and reason, when a harness would drop a required item; the launch too, creating nothing', () => {
    const home = testdir({
      'settings.toml': '[image]\nbase = "omh-test/base:1"\n',
      'subagents/fixer.md': '---\nname: fixer\ndescription: Fixes.\ntools: read, edit\nrequired: true\n---\nYou fix.\n',
      'hooks/find.json': '{ "on": "after-tool", "tools": ["search"], "run": "true", "required": true }\n',
    })
    const ran = omh(['render', 'codex'], { env: { OMH_HOME: home }, cwd: testdir() })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain('codex cannot express 2 items your profile marks `required: true`, so nothing was started:')
    expect(ran.stderr).toContain('subagents.fixer: no way to limit a subagent’s tools to read, edit')
    expect(ran.stderr).toContain('hooks.find: no `search` tool')
    expect(ran.stderr).toContain(path.join(home, 'hooks/find.json'))
    expect(ran.stderr).toContain('Code: REQUIRED_DROPPED')
    // Claude expresses both: required changes nothing there.
    expect(omh(['render', 'claude'], { env: { OMH_HOME: home }, cwd: testdir() }).status).toBe(0)
    const repo = gitRepo({ 'README.md': 'hi\n' })
    const launch = omh(['--dry-run', 'codex'], { env: { OMH_HOME: home }, cwd: repo })
    expect(launch.status).toBe(2)
    expect(launch.stderr).toContain('Code: REQUIRED_DROPPED')
  })

  it('reads `required` wherever an item can carry it, refuses anything but true or false, and passes it to no harness file', () => {
    const home = testdir({
      'skills/look/SKILL.md': '---\nname: look\ndescription: Looks.\nrequired: true\n---\nLook.\n',
      'commands/review.md': '---\ndescription: Reviews.\nrequired: true\n---\nReview.\n',
      'mcp.json': JSON.stringify({ mcpServers: { docs: { command: 'srv', required: true }, web: { url: 'https://x.example/mcp', required: false } } }),
    })
    for (const harness of ['claude', 'opencode', 'codex']) {
      const ran = omh(['render', harness, '--content'], { env: { OMH_HOME: home }, cwd: testdir() })
      expect(ran.status, ran.stderr).toBe(0)
      expect(ran.stdout).not.toContain('required')
    }
    const bad = testdir({ 'commands/review.md': '---\nrequired: yes please\n---\nReview.\n', 'mcp.json': JSON.stringify({ mcpServers: { docs: { command: 'srv', required: 'yes' } } }) })
    const refused = omh(['render', 'claude'], { env: { OMH_HOME: bad }, cwd: testdir() })
    expect(refused.status).toBe(2)
    expect(refused.stderr).toContain('expected true or false')
  })
})
