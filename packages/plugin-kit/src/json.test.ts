import { describe, expect, it } from 'vitest'
import { parseJson, readJson } from './json.js'

describe('readJson', () => {
  it('says where a syntax error is, in words of its own', () => {
    expect(readJson('{\n  "a": 1,\n}', '/f.json')).toEqual({
      ok: false,
      problem: { file: '/f.json', line: 3, column: 1, message: 'not valid JSON: Expected double-quoted property name' },
    })
  })

  it('never repeats the text it could not read, whatever its length', () => {
    const secret = 'SECRET_TOKEN=0123456789abcdefghijklmnopqrstuvwxyz'
    for (const text of ['SECRET', secret, `{"a": ${secret}}`, `{"a": 1, "b": ${secret}}`, `${secret}\n${secret}`]) {
      const read = readJson(text, '/f.json')
      expect(read.ok).toBe(false)
      if (!read.ok) expect(read.problem.message).not.toMatch(/ECRET|0123/)
    }
  })

  it('names an unexpected character by its code point when printing it would print a control character', () => {
    const said = (text: string) => {
      const parsed = parseJson(text, '/f.json')
      return parsed.ok ? undefined : parsed.error.message
    }
    expect(said('\u0000\u0001')).toBe('Unexpected character U+0000')
    expect(said('\u001b[31m')).toBe('Unexpected character U+001B')
    expect(said('{"a": x}')).toBe("Unexpected token 'x'")
  })

  it('locates keys and array items by line and column', () => {
    const read = readJson('{\n  "a": {\n    "b": [1, {"c": 2}]\n  }\n}\n', '/x.json')
    if (!read.ok) throw new Error('expected a document')
    expect(read.doc.locate(['a'])).toEqual({ line: 2, column: 3 })
    expect(read.doc.locate(['a', 'b', 1, 'c'])).toEqual({ line: 3, column: 15 })
    expect(read.doc.locate(['a', 'nope'])).toEqual({ line: 2, column: 3 })
  })

  it('locates a document nested thousands deep in linear time, at its nearest shallow key', () => {
    const depth = 6000
    const read = readJson(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`, '/deep.json')
    if (!read.ok) throw new Error('expected a document')
    const started = performance.now()
    const at = read.doc.locate(Array.from({ length: depth }, () => 'a'))
    // Quadratic, this took seconds; the bound leaves room for a busy machine.
    expect(performance.now() - started).toBeLessThan(250)
    expect(at?.line).toBe(1)
  })
})
