import { describe, expect, it } from 'vitest'
import { parseSelector, type Selector } from '@omh/kernel'
import { compilePattern, fillPattern, scalarAt, select } from './evidence.js'

describe('probe patterns', () => {
  it('match a whole string: `*` is any run of characters, newlines included', () => {
    const p = compilePattern('# omh: {{name}}\n*', { name: 'guard' })
    expect(p.test('# omh: guard\nsh -c true\nexit 1')).toBe(true)
    expect(p.test('# omh: guard-two\nsh')).toBe(false)
    expect(p.test('x # omh: guard\n')).toBe(false)
  })

  it('fill placeholders literally, so a value holding regex characters stays text', () => {
    const p = compilePattern('Instructions from: {{path}}', { path: '/work/a+b(1).md' })
    expect(p.test('Instructions from: /work/a+b(1).md')).toBe(true)
    expect(p.test('Instructions from: /work/aab1.md')).toBe(false)
  })

  it('read everything but `*` and placeholders literally: table pipes, dots, question marks', () => {
    expect(compilePattern('| {{name}} | User |*', { name: 'x' }).test('| x | User | < 20 |')).toBe(true)
    expect(compilePattern('a.b?', {}).test('a.b?')).toBe(true)
    expect(compilePattern('a.b?', {}).test('axb')).toBe(false)
  })

  it('fill placeholders for messages', () => {
    expect(fillPattern('{{name}} at {{path}}', { name: 'n' })).toBe('n at {{path}}')
  })

  it('refuse to compile with a placeholder left unfilled', () => {
    expect(() => compilePattern('{{origin}}', { name: 'x' })).toThrow(/names \{\{origin\}\}/)
  })
})

const sel = (text: string) => parseSelector(text) as Selector

describe('probe selectors', () => {
  const doc = {
    result: { data: [{ hooks: [{ command: 'a' }, { command: 'b' }] }, { hooks: [{ command: 'c' }] }] },
    command: { review: { template: 't' }, fix: { template: 'u' } },
  }

  it('walk keys and visit array elements', () => {
    expect(select(doc, sel('result.data[*].hooks[*].command'))).toEqual(['a', 'b', 'c'])
  })

  it('visit the values or the keys of an object', () => {
    expect(select(doc, sel('command.*~'))).toEqual(['review', 'fix'])
    expect(select(doc, sel('command.*'))).toEqual([{ template: 't' }, { template: 'u' }])
  })

  it('start at a document that is itself an array', () => {
    expect(select([{ name: 'x' }, { name: 'y' }], sel('[*]'))).toHaveLength(2)
    expect(select([[1, 2], [3]], sel('[*][*]'))).toEqual([1, 2, 3])
  })

  it('yield nothing where a step does not apply, instead of failing', () => {
    expect(select({ result: 3 }, sel('result.data[*]'))).toEqual([])
    expect(select('text', sel('a.*~'))).toEqual([])
    expect(select(null, sel('[*]'))).toEqual([])
  })

  it('say what is wrong with a malformed selector', () => {
    expect(parseSelector('a..b')).toEqual({ error: 'an empty step (two dots in a row, or a leading or trailing dot)' })
    expect(parseSelector('a.*~.b')).toEqual({ error: '`*~` (the keys of an object) must be the last step' })
    expect(parseSelector('a[0]')).toMatchObject({ error: expect.stringContaining('"a[0]"') })
  })

  it('read a scalar at a dotted path, and nothing from null, objects or missing keys', () => {
    const v = { serverInfo: { name: 'echo' }, tools: {}, toolsError: null, n: 2, ok: true }
    expect(scalarAt(v, 'serverInfo.name')).toBe('echo')
    expect(scalarAt(v, 'n')).toBe('2')
    expect(scalarAt(v, 'ok')).toBe('true')
    expect(scalarAt(v, 'toolsError')).toBeUndefined()
    expect(scalarAt(v, 'tools')).toBeUndefined()
    expect(scalarAt(v, 'missing.deeper')).toBeUndefined()
  })
})
