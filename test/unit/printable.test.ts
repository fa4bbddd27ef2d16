import { describe, expect, it } from 'vitest'
import { OmhError, PROFILE_INVALID, USE_UNKNOWN } from '../../packages/plugin-api/src/index.js'
import { formatError } from '../../src/lib/failure.js'
import { printable, outputAsText } from '../../src/lib/printable.js'
import { createStyle, STYLE_SEQUENCES } from '../../src/lib/style.js'
import { table } from '../../src/lib/table.js'

const ESC = '\u001b'
const CLEAR = `${ESC}[2J`
const TITLE = `${ESC}]0;pwned\u0007`
// Anything a terminal would act on: C0 but tab and newline, DEL, C1, and the controls that reorder a line.
// eslint-disable-next-line no-control-regex
const ACTS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/

describe('printable', () => {
  it('writes every control character a terminal acts on as an escape, and keeps tabs and line ends', () => {
    expect(printable(`a${CLEAR}b${TITLE}c\u009b31m\u202edcba\u0000`)).toBe('a\\x1b[2Jb\\x1b]0;pwned\\x07c\\x9b31m\\u202edcba\\x00')
    expect(printable('one\ttwo\nthree\r\nfour\rfive\u007f')).toBe('one\ttwo\nthree\r\nfour\\x0dfive\\x7f')
    expect(printable('naïve — ✓ 日本')).toBe('naïve — ✓ 日本')
  })

  it('keeps only the escapes it is told to keep', () => {
    expect(printable(`${ESC}[1mbold${ESC}[22m${CLEAR}`, [`${ESC}[1m`, `${ESC}[22m`])).toBe(`${ESC}[1mbold${ESC}[22m\\x1b[2J`)
  })
})

describe('outputAsText', () => {
  it("shows what a program wrote to its terminal as lines of text: its sequences gone, a redraw a line of its own, nothing left to act on", () => {
    const written = `${TITLE}${CLEAR}${ESC}[31mred${ESC}[0m\r\n50%\r100%\r\n${ESC}P1$r${ESC}\\${ESC}7x${ESC}8\u009b2Jy\u0000\u202e`
    const shown = outputAsText(written)
    expect(shown).toBe('red\n50%\n100%\nxy\\x00\\u202e')
    expect(shown).not.toMatch(ACTS)
  })
})

describe('human output', () => {
  const hostile = `/home/u/.omh/commands/x${CLEAR}${TITLE}.md`

  it('formats an error naming a hostile file, key and value as text, with or without colour', () => {
    const error = OmhError.of(PROFILE_INVALID, {
      args: [1],
      problems: [{ file: hostile, line: 2, path: `use.rules[0]${ESC}[8m`, message: `"${TITLE}" is not in rules`, suggestion: CLEAR }],
    })
    for (const enabled of [false, true]) {
      const text = formatError(error, createStyle(enabled), true)
      const rest = STYLE_SEQUENCES.reduce((t, own) => t.replaceAll(own, ''), text)
      expect(rest).not.toMatch(ACTS)
      expect(text).toContain('x\\x1b[2J\\x1b]0;pwned\\x07.md')
      if (enabled) expect(text).toContain(createStyle(true).red('!'))
    }
  })

  it('escapes the message and hint a catalogue entry builds from user words', () => {
    const error = OmhError.of(USE_UNKNOWN, { args: [`/repo/${TITLE}settings.toml`, 1] })
    expect(formatError(error, createStyle(false), false)).not.toMatch(ACTS)
  })

  it('measures and prints table cells as they will show, escapes written out', () => {
    const style = createStyle(true)
    const out = table([
      [style.bold('a'), `x${CLEAR}`, 'end'],
      ['bb', 'y', 'end'],
    ])
    expect(out).toBe(`${style.bold('a')}   x\\x1b[2J  end\nbb  y         end`)
  })

  it('styles user words as text', () => {
    expect(createStyle(true).bold(`x${CLEAR}`)).toBe(`${ESC}[1mx\\x1b[2J${ESC}[22m`)
    expect(createStyle(false).bold(`x${CLEAR}`)).toBe('x\\x1b[2J')
  })
})

describe('an error whose cause is not an Error', () => {
  it('shows what the cause says, never [object Object]', () => {
    const error = OmhError.of(PROFILE_INVALID, { args: [1], cause: { stderr: 'the engine said no', exitCode: 125 } })
    const text = formatError(error, createStyle(false), true)
    expect(text).not.toContain('[object Object]')
    expect(text).toContain('the engine said no')
  })
})
