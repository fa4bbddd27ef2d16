import { execFileSync } from 'node:child_process'
import { symlinkSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh, ROOT } from '../../helpers/run.js'
import { testdir } from '@omh/test-utils'

const BAD = ['name = "bad"', 'bin = 42', 'install = "true"', '[capabilities.rules]', 'path = "/work/AGENTS.md"', 'rendr = "concat"', ''].join('\n')

describe('omh adapters validate', () => {
  it('reports a typo, a wrong type and a missing render with lines, exit 2', () => {
    const dir = testdir({ 'bad.toml': BAD })
    const ran = omh(['adapters', 'validate', 'bad.toml'], { cwd: dir })
    expect(ran.status).toBe(2)
    expect(ran.stdout).toBe('')
    expect(ran.stderr).toBe(
      [
        `Error: ${path.join(dir, 'bad.toml')} has 3 problems:`,
        '  ! line 2, col 1  bin: expected a string, found the number 42',
        '  ! line 4, col 1  capabilities.rules.render: required, but missing',
        '  ! line 6, col 1  capabilities.rules.rendr: unknown key — did you mean "render"?',
        `Try this: Fix the keys above, then check again with \`omh adapters validate ${path.join(dir, 'bad.toml')}\`.`,
        'Code: ADAPTER_INVALID',
        '',
      ].join('\n'),
    )
  })

  it('carries the same problems in one JSON document', () => {
    const dir = testdir({ 'bad.toml': BAD })
    const ran = omh(['adapters', 'validate', 'bad.toml', '--json'], { cwd: dir })
    expect(ran.status).toBe(2)
    const doc = ran.json()
    expect(doc.status).toBe(2)
    expect(doc.error.code).toBe('ADAPTER_INVALID')
    expect(doc.error.problems.map((p: { line: number; path: string }) => `${p.line} ${p.path}`)).toEqual([
      '2 bin',
      '4 capabilities.rules.render',
      '6 capabilities.rules.rendr',
    ])
  })

  it('shows the line and column of a TOML syntax error', () => {
    const dir = testdir({ 'syntax.toml': 'name = "x"\nbin = "unterminated\n' })
    const ran = omh(['adapters', 'validate', 'syntax.toml'], { cwd: dir })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toMatch(/! line 2, col \d+ {2}not valid TOML: /)
  })

  it('accepts every bundled adapter', () => {
    const ran = omh(['adapters', 'validate', ...['claude'].map((n) => path.join(ROOT, 'adapters', `${n}.toml`))])
    expect(ran.stderr).toBe('')
    expect(ran.status).toBe(0)
  })

  it('names a file that is missing, a folder, a dangling link or a FIFO, exit 2', () => {
    const dir = testdir({ 'folder.toml/x': '' })
    symlinkSync(path.join(dir, 'gone.toml'), path.join(dir, 'dangling.toml'))
    execFileSync('mkfifo', [path.join(dir, 'pipe.toml')])
    // Nothing there is NOT_A_FILE; something there that is not a regular file is FILE_NOT_REGULAR.
    const missing = (why: string) => [`${why}.`, 'Try this: Give the path of a regular file, or of a link to one.', 'Code: NOT_A_FILE']
    const irregular = (kind: string) => [
      `is ${kind}, not a regular file: omh reads only regular files, so it never waits on a pipe or reads a device without end.`,
      'Try this: Put a regular file there, or remove it.',
      'Code: FILE_NOT_REGULAR',
    ]
    const cases: [string, string[]][] = [
      ['nope.toml', missing('does not exist')],
      ['folder.toml', irregular('a directory')],
      ['dangling.toml', missing(`is a link to ${path.join(dir, 'gone.toml')}, which does not exist`)],
      ['pipe.toml', irregular('a FIFO')],
    ]
    for (const [name, [why, ...rest]] of cases) {
      const ran = omh(['adapters', 'validate', name], { cwd: dir })
      expect(ran.stderr).toBe([`Error: ${path.join(dir, name)} ${why}`, ...rest, ''].join('\n'))
      expect(ran.status).toBe(2)
    }
  })
})
