import { describe, expect, it } from 'vitest'
import { compilePattern, fillPattern, placeholdersOf } from './pattern.js'

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

  it('name their placeholders and fill them for messages', () => {
    expect(placeholdersOf('{{name}}: * {{path}}/{{name}}')).toEqual(['name', 'path', 'name'])
    expect(fillPattern('{{name}} at {{path}}', { name: 'n' })).toBe('n at {{path}}')
  })

  it('refuse to compile with a placeholder left unfilled', () => {
    expect(() => compilePattern('{{origin}}', { name: 'x' })).toThrow(/names \{\{origin\}\}/)
  })
})
