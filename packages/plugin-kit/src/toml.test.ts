import { describe, expect, it } from 'vitest'
import { isOmhError } from '@omh/plugin-api'
import { parseToml } from './toml.js'

describe('parseToml', () => {
  it('locates keys in tables, dotted keys, arrays and inline tables', () => {
    const doc = parseToml(
      [
        'name = "x"', // 1
        '# comment', // 2
        '[capabilities.rules]', // 3
        'path = "/work/AGENTS.md"', // 4
        '  also = [', // 5
        '    "/a",', // 6
        '    "/b" ]', // 7
        '[capabilities.hooks.events]', // 8
        "turn-end = 'Stop'", // 9
        'inline = { a = 1, "b c" = 2 }', // 10
        'text = """', // 11
        'multi', // 12
        'line"""', // 13
        'after = true', // 14
      ].join('\n'),
      'x.toml',
    )
    expect(doc.locate(['name'])).toEqual({ line: 1, column: 1 })
    expect(doc.locate(['capabilities', 'rules'])).toEqual({ line: 3, column: 1 })
    expect(doc.locate(['capabilities', 'rules', 'path'])).toEqual({ line: 4, column: 1 })
    expect(doc.locate(['capabilities', 'rules', 'also'])).toEqual({ line: 5, column: 3 })
    expect(doc.locate(['capabilities', 'rules', 'also', 1])).toEqual({ line: 7, column: 5 })
    expect(doc.locate(['capabilities', 'hooks', 'events', 'turn-end'])).toEqual({ line: 9, column: 1 })
    expect(doc.locate(['capabilities', 'hooks', 'events', 'inline', 'b c'])?.line).toBe(10)
    expect(doc.locate(['capabilities', 'hooks', 'events', 'after'])).toEqual({ line: 14, column: 1 })
    // A key that is not written falls back to its nearest written ancestor.
    expect(doc.locate(['capabilities', 'rules', 'render'])).toEqual({ line: 3, column: 1 })
  })

  it('locates keys in an inline table written over several lines, with comments, as TOML 1.1 allows', () => {
    const doc = parseToml('a = { k = {},\n  # why\n  j = [1,\n 2]\n}\nb = [ {\n} ]\nc = 1\n', 'x.toml')
    expect(doc.data).toEqual({ a: { k: {}, j: [1, 2] }, b: [{}], c: 1 })
    expect(doc.locate(['a', 'j'])).toEqual({ line: 3, column: 3 })
    expect(doc.locate(['c'])).toEqual({ line: 8, column: 1 })
  })

  it('indexes array-of-tables entries by position', () => {
    const doc = parseToml('[[entry]]\nname = "a"\n[[entry]]\nname = "b"\n[entry.sub]\nk = 1\n', 'x.toml')
    expect(doc.locate(['entry', 1, 'name'])).toEqual({ line: 4, column: 1 })
    expect(doc.locate(['entry', 1, 'sub', 'k'])).toEqual({ line: 6, column: 1 })
  })

  it('reports a syntax error with line and column', () => {
    let caught: unknown
    try {
      parseToml('a = 1\nb = "unterminated\n', '/x/bad.toml')
    } catch (error) {
      caught = error
    }
    expect(isOmhError(caught)).toBe(true)
    const error = caught as { code: string; message: string; exit: number }
    expect(error.code).toBe('TOML_SYNTAX')
    expect(error.exit).toBe(2)
    expect(error.message).toMatch(/^\/x\/bad\.toml:2:\d+ is not valid TOML: /)
  })
})
