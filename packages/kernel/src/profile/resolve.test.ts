import { execFileSync } from 'node:child_process'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { failure, testdir } from '@omh/test-utils'
import type { Decided } from '../settings/load.js'
import { resolveProfile } from './resolve.js'

const skill = (name: string, description = `Does ${name}.`) => `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n`

const catalogue = {
  'rules/b.md': '# B\n',
  'rules/a.md': '# A\n',
  'rules/blank.md': '\n',
  'skills/deploy/SKILL.md': skill('deploy'),
  'skills/deploy/scripts/run.sh': 'echo hi\n',
  'skills/lint/SKILL.md': skill('lint'),
  'commands/review.md': '---\ndescription: Review it\nargument-hint: "[x]"\n---\nReview $ARGUMENTS\n',
  'commands/plain.md': 'No frontmatter at all.\n',
  'subagents/reviewer.md': '---\nname: reviewer\ndescription: Reviews.\ntools: read, search\nmodel: sonnet\n---\nYou review.\n',
  'mcp.json': JSON.stringify({
    $schema: 'x',
    mcpServers: {
      docs: { command: 'npx', args: ['-y', 'srv'], env: { K: 'v' } },
      web: { type: 'sse', url: 'https://h/sse', headers: { A: 'b' } },
    },
  }),
}

const decided = (value: string[], file = '/repo/.omh/settings.toml'): Decided<readonly string[]> => ({ value, layer: 'shared', file })

describe('resolveProfile', () => {
  it('reads every class of the catalogue, in catalogue order, when [use] says nothing', async () => {
    const home = testdir(catalogue)
    const profile = await resolveProfile({ omhHome: home, use: {} })
    expect(profile.rules.map((r) => r.name)).toEqual(['a', 'b', 'blank'])
    expect(profile.skills).toEqual([
      { name: 'deploy', description: 'Does deploy.', source: path.join(home, 'skills/deploy') },
      { name: 'lint', description: 'Does lint.', source: path.join(home, 'skills/lint') },
    ])
    expect(profile.commands).toEqual([
      { name: 'plain', source: path.join(home, 'commands/plain.md'), frontmatter: {}, body: 'No frontmatter at all.\n' },
      {
        name: 'review',
        description: 'Review it',
        source: path.join(home, 'commands/review.md'),
        frontmatter: { 'argument-hint': '[x]' },
        body: 'Review $ARGUMENTS\n',
      },
    ])
    expect(profile.subagents).toEqual([
      { name: 'reviewer', description: 'Reviews.', tools: ['read', 'search'], model: 'sonnet', source: path.join(home, 'subagents/reviewer.md'), body: 'You review.\n' },
    ])
    const source = path.join(home, 'mcp.json')
    expect(profile.mcp).toEqual([
      { name: 'docs', transport: 'stdio', command: 'npx', args: ['-y', 'srv'], env: { K: 'v' }, source },
      { name: 'web', transport: 'sse', url: 'https://h/sse', headers: { A: 'b' }, source },
    ])
    expect(profile.selection.skills).toEqual({
      capability: 'skills',
      where: path.join(home, 'skills'),
      available: ['deploy', 'lint'],
      selected: ['deploy', 'lint'],
    })
  })

  it('selects by [use]: the list is the order, [] is nothing, ["*"] is everything, and says who decided', async () => {
    const home = testdir(catalogue)
    const profile = await resolveProfile({
      omhHome: home,
      use: { rules: decided(['b', 'a']), skills: decided([]), mcp: decided(['*']) },
    })
    expect(profile.rules.map((r) => r.name)).toEqual(['b', 'a'])
    expect(profile.skills).toEqual([])
    expect(profile.mcp.map((s) => s.name)).toEqual(['docs', 'web'])
    expect(profile.selection.rules.use).toEqual(decided(['b', 'a']))
    expect(profile.selection.skills.selected).toEqual([])
  })

  it('refuses a [use] name the catalogue lacks, with the settings file, the key and the nearest name', async () => {
    const home = testdir(catalogue)
    const error = await failure(() => resolveProfile({ omhHome: home, use: { skills: decided(['deploy', 'lnit']) } }))
    expect(error.code).toBe('USE_UNKNOWN')
    expect(error.exit).toBe(2)
    expect(error.problems).toEqual([
      { file: '/repo/.omh/settings.toml', path: 'use.skills[1]', message: `"lnit" is not in ${path.join(home, 'skills')}`, suggestion: 'lint' },
    ])
  })

  it('reports every bad file at once, with file, line and key, and reads no unselected entry', async () => {
    const home = testdir({
      'skills/nofm/SKILL.md': '# no frontmatter\n',
      'skills/other/SKILL.md': skill('another'),
      'skills/unselected/SKILL.md': 'broken\n',
      'subagents/bad.md': '---\nname: bad\ndescription: x\ntools: [read, grep]\ncolour: red\n---\nPrompt.\n',
      'mcp.json': '{\n  "mcpServers": {\n    "both": { "command": "x", "url": "https://h" },\n    "ok": { "command": "y", "argz": [] }\n  }\n}\n',
    })
    const error = await failure(() => resolveProfile({ omhHome: home, use: { skills: decided(['nofm', 'other']) } }))
    expect(error.code).toBe('PROFILE_INVALID')
    expect(error.exit).toBe(2)
    const mcp = path.join(home, 'mcp.json')
    const sub = path.join(home, 'subagents/bad.md')
    expect(error.problems).toEqual([
      { file: mcp, line: 3, column: 5, path: 'mcpServers.both', message: 'has both `command` and `url`; a server is either started (`command`) or reached (`url`), not both' },
      { file: mcp, line: 4, column: 29, path: 'mcpServers.ok.argz', message: 'unknown key', suggestion: 'args' },
      { file: path.join(home, 'skills/nofm/SKILL.md'), line: 1, message: 'has no frontmatter; a skill starts with `---`, then `name:` and `description:`' },
      { file: path.join(home, 'skills/other/SKILL.md'), line: 2, path: 'name', message: 'is "another", but the folder is "other"; harnesses skip a skill whose name differs' },
      { file: sub, line: 4, path: 'tools', message: '"grep" is not an omh tool word (edit, read, shell, search)' },
      { file: sub, line: 5, path: 'colour', message: 'unknown key; a subagent has name, description, tools, model and required' },
    ])
  })

  it('reports a malformed mcp.json with its line', async () => {
    const home = testdir({ 'mcp.json': '{\n  "mcpServers": {\n    "a": { "command": "x" },\n  }\n}\n' })
    const error = await failure(() => resolveProfile({ omhHome: home, use: {} }))
    expect(error.code).toBe('PROFILE_INVALID')
    expect(error.problems).toEqual([{ file: path.join(home, 'mcp.json'), line: 4, column: 3, message: expect.stringMatching(/^not valid JSON: /) }])
  })

  it("composes the project's AGENTS.md after the catalogue's rules, else the binding's own file with a notice", async () => {
    const home = testdir({ 'rules/a.md': '# A\n' })
    const project = testdir({ 'AGENTS.md': '# Project\n', 'CLAUDE.md': '# Other\n' })
    const profile = await resolveProfile({ omhHome: home, projectDir: project, projectRules: ['CLAUDE.md'], use: {} })
    expect(profile.rules.map((r) => [r.name, r.origin])).toEqual([
      ['a', 'a'],
      ['AGENTS.md', 'AGENTS.md'],
    ])
    expect(profile.notices).toEqual(["the project's CLAUDE.md differs from its AGENTS.md and was not composed"])
    const claudeOnly = testdir({ 'CLAUDE.md': '# Only\n', 'AGENTS.md': '  \n' })
    const fallback = await resolveProfile({ omhHome: home, projectDir: claudeOnly, projectRules: ['CLAUDE.md'], use: {} })
    expect(fallback.rules.map((r) => r.name)).toEqual(['a', 'CLAUDE.md'])
    expect(fallback.notices).toEqual(["composed the project's CLAUDE.md; name it AGENTS.md and every harness reads it first"])
  })

  it('refuses a rule, command or mcp.json whose bytes are not UTF-8, at the first bad byte', async () => {
    const home = testdir({ 'rules/ok.md': '# ok\n' })
    mkdirSync(path.join(home, 'commands'))
    writeFileSync(path.join(home, 'rules/latin1.md'), Buffer.from('# Caf\xe9\n\nline two \xff\n', 'latin1'))
    writeFileSync(path.join(home, 'commands/x.md'), Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xc3, 0x28]))
    writeFileSync(path.join(home, 'mcp.json'), Buffer.from([0x7b, 0x0a, 0x80, 0x7d]))
    const error = await failure(() => resolveProfile({ omhHome: home, use: {} }))
    expect(error.code).toBe('PROFILE_INVALID')
    expect(error.problems).toEqual([
      { file: path.join(home, 'commands/x.md'), line: 2, column: 1, message: 'is not UTF-8 text (byte 0xc3); save it as UTF-8' },
      { file: path.join(home, 'mcp.json'), line: 2, column: 1, message: 'is not UTF-8 text (byte 0x80); save it as UTF-8' },
      { file: path.join(home, 'rules/latin1.md'), line: 1, column: 6, message: 'is not UTF-8 text (byte 0xe9); save it as UTF-8' },
    ])
  })

  it('refuses a FIFO or a dangling link where a catalogue file belongs, by name, without waiting on it', async () => {
    const home = testdir({ 'rules/ok.md': '# ok\n', 'commands/ok.md': 'hi\n' })
    execFileSync('mkfifo', [path.join(home, 'rules/pipe.md')])
    const fifo = await failure(() => resolveProfile({ omhHome: home, use: {} }))
    expect([fifo.code, fifo.exit]).toEqual(['FILE_NOT_REGULAR', 2])
    expect(fifo.message).toContain(`${path.join(home, 'rules/pipe.md')} is a FIFO, not a regular file`)
    const dangling = testdir({ 'commands/ok.md': 'hi\n' })
    symlinkSync(path.join(dangling, 'elsewhere.md'), path.join(dangling, 'commands/gone.md'))
    const link = await failure(() => resolveProfile({ omhHome: dangling, use: {} }))
    expect([link.code, link.message]).toEqual([
      'NOT_A_FILE',
      `${path.join(dangling, 'commands/gone.md')} is a link to ${path.join(dangling, 'elsewhere.md')}, which does not exist.`,
    ])
  })

  it('skips a rule, command, subagent, skill or hook whose file name is not UTF-8, with a notice naming it', async () => {
    const home = testdir({ 'rules/a.md': '# A\n', 'commands/ok.md': 'hi\n', 'subagents/.keep': '', 'hooks/.keep': '', 'skills/.keep': '' })
    const bad = (dir: string, suffix: string) => Buffer.concat([Buffer.from(path.join(home, dir, 'b')), Buffer.from([0xe9]), Buffer.from(suffix)])
    for (const dir of ['rules', 'commands', 'subagents']) writeFileSync(bad(dir, '.md'), 'x\n')
    writeFileSync(bad('hooks', '.json'), '{}')
    mkdirSync(bad('skills', ''))
    const profile = await resolveProfile({ omhHome: home, use: {} })
    expect([profile.rules, profile.commands, profile.subagents, profile.skills, profile.hooks].map((items) => items.map((i) => i.name))).toEqual([
      ['a'],
      ['ok'],
      [],
      [],
      [],
    ])
    const skipped = (dir: string, name: string) => `skipped ${path.join(home, dir)}/${name}: its name is not UTF-8, so no harness could be given it; rename it`
    expect(profile.notices).toEqual([
      skipped('rules', 'b\\xe9.md'),
      skipped('skills', 'b\\xe9'),
      skipped('commands', 'b\\xe9.md'),
      skipped('subagents', 'b\\xe9.md'),
      skipped('hooks', 'b\\xe9.json'),
    ])
  })

  it('refuses a rule, command or subagent whose name holds a line break, a control or bidi character or `-->`, by file', async () => {
    const home = testdir({
      'rules/two\nlines.md': '# x\n',
      'rules/a-->b.md': '# x\n',
      'commands/clear\u001b[2J.md': 'x\n',
      'subagents/csi\u009bm.md': '---\nname: "csi\\x9Bm"\ndescription: d\n---\nbody\n',
      'rules/fine name.md': '# ok\n',
      'rules/flip\u202etxt.md': '# x\n',
    })
    const error = await failure(() => resolveProfile({ omhHome: home, use: {} }))
    expect(error.code).toBe('PROFILE_INVALID')
    expect(error.problems.map((p) => [path.relative(home, p.file!), p.message])).toEqual([
      ['commands/clear\u001b[2J.md', 'cannot name an entry: a name holds no line break, control character or direction mark'],
      ['rules/a-->b.md', 'cannot name an entry: a name holds no `-->`, which ends the comment that marks a section'],
      ['rules/flip\u202etxt.md', 'cannot name an entry: a name holds no line break, control character or direction mark'],
      ['rules/two\nlines.md', 'cannot name an entry: a name holds no line break, control character or direction mark'],
      ['subagents/csi\u009bm.md', 'cannot name an entry: a name holds no line break, control character or direction mark'],
    ])
  })

  it('locates a frontmatter key named like what every object has, never reading it from a prototype', async () => {
    const home = testdir({ 'subagents/s.md': '---\nname: s\ndescription: d\nconstructor: x\ntoString: y\n---\nbody\n' })
    const error = await failure(() => resolveProfile({ omhHome: home, use: {} }))
    expect(error.problems.map((p) => [p.line, p.path, p.message])).toEqual([
      [4, 'constructor', 'unknown key; a subagent has name, description, tools, model and required'],
      [5, 'toString', 'unknown key; a subagent has name, description, tools, model and required'],
    ])
  })
})
