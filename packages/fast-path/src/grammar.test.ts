import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { answerable, commandWords, grammarOf, type Manifest } from './grammar.js'

const manifest = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../../oclif.manifest.json'), 'utf8')) as Manifest
const grammar = grammarOf(manifest)

describe('the command grammar, from the manifest', () => {
  it('answers again the commands that declare it, and no other', () => {
    const yes = [['--help'], ['help', 'sessions'], ['render', 'claude'], ['render', 'claude', '--json'], ['plugins'], ['plugins', '--json'], ['adapters', 'ls'], ['adapters', 'show', 'codex'], ['adapters', 'validate'], ['sessions', 'ls'], ['config', 'mcp', 'ls']]
    const no = [['render', 'claude', '--content'], ['render', '--content=true', 'claude'], ['plugins', 'add', 'x'], ['plugins', 'rm', 'x'], ['sessions', 'rm', 's01'], ['sessions'], ['config', 'mcp', 'add', 'x'], ['doctor'], ['claude'], ['--json', 'sessions', 'ls'], ['launch', 'claude'], []]
    for (const argv of yes) expect(answerable(argv, grammar), argv.join(' ')).toBe(true)
    for (const argv of no) expect(answerable(argv, grammar), argv.join(' ')).toBe(false)
  })

  it("takes the launch's session and runtime spellings from its flags, and omh's first words from its commands", () => {
    expect(grammar.session).toEqual(['--session', '-s'])
    expect(grammar.runtime).toEqual(['--runtime'])
    expect([...commandWords(grammar)].sort()).toEqual(expect.arrayContaining(['adapters', 'help', 'launch', 'sessions', 'trust']))
    expect(grammarOf({ commands: { x: { answeredAgain: { unless: ['--secret'] } } } })).toEqual({ answered: { x: ['--secret'] }, commands: ['x'], session: [], runtime: [] })
  })
})
