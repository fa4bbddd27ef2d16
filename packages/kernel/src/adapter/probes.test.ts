import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { testdir } from '@omh/test-utils'
import { checkAdapterFile } from './load.js'

const check = async (...lines: string[]) => {
  const dir = testdir({
    'a.toml': ['name = "x"', 'bin = "x"', 'install = "i"', '[capabilities.skills]', 'path = "$HOME/s"', 'render = "dir"', ...lines].join('\n'),
  })
  return checkAdapterFile(path.join(dir, 'a.toml'))
}

const problems = async (...lines: string[]) => (await check(...lines)).problems.map((p) => `${p.line} ${p.path}: ${p.message}`)

describe('adapter probes', () => {
  it('accept a probe with a protocol on stdin and evidence of both kinds', async () => {
    const { problems, data } = await check(
      '[[capabilities.skills.expect]]',
      'probe = "list"',
      'json = "result.data[*].skills[*]"',
      'match = { name = "{{name}}", path = "{{path}}/{{name}}/SKILL.md" }',
      '[probes.list]',
      'run = "x app-server"',
      "send = [{ line = '{\"id\":1}', until = '\"id\":1,' }, { line = 'bye' }]",
      'timeout = 20',
      'exit = [0, 1]',
      'env = { X_OFFLINE = "1" }',
      '[probes.valid]',
      'run = "x check"',
      'expect = [{ line = "Invalid*", absent = true }]',
    )
    expect(problems).toEqual([])
    expect(data?.probes?.['list']?.send).toHaveLength(2)
  })

  it('refuse evidence naming a probe that is not declared, with the declared ones', async () => {
    expect(await problems('expect = [{ probe = "lst", line = "{{name}}" }]', '[probes.list]', 'run = "x"')).toEqual([
      '7 capabilities.skills.expect[0].probe: no probe is called "lst" (declared: list)',
    ])
  })

  it('refuse a placeholder the capability does not have, and any outside a capability', async () => {
    expect(
      await problems(
        'expect = [{ probe = "p", line = "{{origin}} {{nam}}" }]',
        '[probes.p]',
        'run = "x"',
        'expect = [{ line = "{{name}}" }]',
      ),
    ).toEqual([
      '7 capabilities.skills.expect[0].line: {{origin}} is not a placeholder here (known: {{name}}, {{path}})',
      '7 capabilities.skills.expect[0].line: {{nam}} is not a placeholder here (known: {{name}}, {{path}})',
      '10 probes.p.expect[0].line: {{name}} is not a placeholder here (none is known outside a capability)',
    ])
  })

  it('need exactly one of line and json, match only with json, and a selector that parses', async () => {
    expect(
      await problems(
        '[[capabilities.skills.expect]]',
        'probe = "p"',
        'line = "a"',
        'json = "a"',
        '[[capabilities.skills.expect]]',
        'probe = "p"',
        'line = "a"',
        'match = "b"',
        '[[capabilities.skills.expect]]',
        'probe = "p"',
        'json = "a..b"',
        '[probes.p]',
        'run = "x"',
      ),
    ).toEqual([
      '7 capabilities.skills.expect[0]: needs exactly one of `line` and `json`',
      '14 capabilities.skills.expect[1].match: `match` applies to what `json` finds, so it needs `json`',
      '17 capabilities.skills.expect[2].json: an empty step (two dots in a row, or a leading or trailing dot)',
    ])
  })

  it('refuse unknown keys in a probe and in its stdin steps', async () => {
    expect(await problems('[probes.p]', 'run = "x"', 'sned = []', "send = [{ line = 'a', untill = 'b' }]")).toEqual([
      '9 probes.p.sned: unknown key',
      '10 probes.p.send[0].untill: unknown key',
    ])
  })
})
