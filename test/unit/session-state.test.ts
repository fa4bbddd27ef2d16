import { stripVTControlCharacters } from 'node:util'
import { describe, expect, it } from 'vitest'
import type { SessionRow } from '@omh/sandbox'
import { fit, sessionsTable, watchFrame, type BoardRepository } from '../../src/lib/session-state.js'
import { createStyle } from '../../src/lib/style.js'

const NOW = 1_800_000_000
const row = (more: Partial<SessionRow>): SessionRow => ({
  id: 's01',
  branch: 'omh/s01',
  container: 'running',
  harness: 'claude',
  inUse: false,
  ahead: 0,
  uncommitted: 0,
  changed: 0,
  worktree: '/w',
  shared: [],
  state: null,
  ...more,
})

const ROWS: SessionRow[] = [
  row({ state: { harness: 'claude', state: 'working', from: 'hooks', lastActive: NOW - 12 } }),
  row({ id: 's02', state: { harness: 'claude', state: 'waiting', from: 'hooks', lastActive: NOW - 240 }, inUse: true }),
  row({ id: 's10', harness: 'copilot', state: { harness: 'copilot', state: 'finished', exit: 130, from: 'process', lastActive: NOW - 7200 }, ahead: 123, uncommitted: 'unknown', inUse: true }),
  row({ id: 's11', harness: 'opencode', state: { harness: 'opencode', state: 'running', from: 'process', lastActive: NOW - 5 } }),
  row({ id: 's12', state: { harness: 'claude', state: 'unknown', from: 'hooks' } }),
  row({ id: 's13', container: 'stopped' }),
  row({ id: 's14', container: 'unknown', harness: null }),
]

describe('omh sessions ls, as a table', () => {
  it('shows STATE and LAST ACTIVE in words of its own, within 80 columns', () => {
    const shown = sessionsTable(ROWS, createStyle(false), NOW)
    const lines = shown.split('\n')
    expect(lines[0]).toMatch(/^SESSION +HARNESS +STATE +LAST ACTIVE +AHEAD +UNCOMMITTED$/)
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80)
    expect(lines[1]).toMatch(/^s01 +claude +working +12s ago +0 +0$/)
    expect(lines[2]).toMatch(/^s02 +claude +waiting +4m ago +0 +0 +in use$/)
    expect(lines[3]).toMatch(/^s10 +copilot +finished \(exit 130\) +2h ago +123 +unknown +in use$/)
    expect(lines[4]).toMatch(/^s11 +opencode +running \(process\) +5s ago/)
    expect(lines[5]).toMatch(/^s12 +claude +unknown +0/)
    expect(lines[6]).toMatch(/^s13 +claude +stopped +0/)
    expect(lines[7]).toMatch(/^s14 +unknown +0/)
  })

  it('colours only when asked, and NO_COLOR leaves plain text', () => {
    const coloured = sessionsTable(ROWS, createStyle(true), NOW)
    expect(coloured).toContain('\u001b[')
    expect(stripVTControlCharacters(coloured)).toBe(sessionsTable(ROWS, createStyle(false), NOW))
    expect(sessionsTable(ROWS, createStyle(false), NOW)).not.toContain('\u001b')
  })
})

describe('omh sessions watch, a frame', () => {
  const BOARD: BoardRepository[] = [
    {
      repository: '/home/u/src/api',
      base: { name: 'main', commit: 'c0ffee' },
      sessions: [
        row({ id: 's02', branch: 'omh/s02', state: { harness: 'claude', state: 'waiting', from: 'hooks', lastActive: NOW - 12 }, changed: 3, shared: [{ path: 'a.ts', with: ['s03'] }] }),
        row({ id: 's03', branch: 'omh/s03', harness: 'codex', state: { harness: 'codex', state: 'working', from: 'hooks', lastActive: NOW - 4 }, ahead: 1, changed: 2, shared: [{ path: 'a.ts', with: ['s02'] }] }),
      ],
    },
    {
      repository: '/home/u/src/\u001b]0;x\u0007web',
      base: null,
      sessions: [row({ id: 's04', branch: 'omh/s04', harness: 'opencode', state: { harness: 'opencode', state: 'finished', exit: 0, from: 'process', lastActive: NOW - 240 }, ahead: 2, changed: 1 })],
    },
  ]

  it('is one line per session of every repository, within 80 columns, with totals above', () => {
    const lines = watchFrame(BOARD, createStyle(false), NOW, 80)
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80)
    expect(lines[0]).toMatch(/^omh sessions watch {2}3 sessions, 1 working, 1 waiting {2}\d\d:\d\d:\d\d$/)
    expect(lines[2]).toMatch(/^REPO +BRANCH +HARNESS +STATE +ACTIVE +AHEAD +FILES +SHARED$/)
    expect(lines[3]).toMatch(/^api +omh\/s02 +claude +waiting +12s +0 +3 +s03$/)
    expect(lines[4]).toMatch(/^api +omh\/s03 +codex +working +4s +1 +2 +s02$/)
    expect(lines[5]).toMatch(/^\\x1b\]0;x\\x0… +omh\/s04 +opencode +finished \(exit 0\) +4m +2 +1$/)
    expect(lines).toHaveLength(6)
  })

  it('cuts a name that would push the others off the line, and a line still too long ends in an ellipsis', () => {
    const long = row({ id: 'fix-the-login-form', branch: 'omh/fix-the-login-form', state: { harness: 'opencode', state: 'finished', exit: 130, from: 'process' }, ahead: 'unknown', changed: 'unknown', shared: null })
    const lines = watchFrame([{ repository: '/src/a-repository-with-a-long-name', base: null, sessions: [long] }], createStyle(false), NOW, 80)
    expect(lines[3]).toMatch(/^a-repositor… +omh\/fix-the-log… +opencode +finished \(exit 130\) +unknown/)
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80)
  })

  it('cuts long lines to the terminal, keeping colours whole, and NO_COLOR writes no escape', () => {
    const coloured = watchFrame(BOARD, createStyle(true), NOW, 40)
    for (const line of coloured) expect(stripVTControlCharacters(line).length, line).toBeLessThanOrEqual(40)
    expect(coloured.join('\n')).not.toContain('\u0007')
    expect(watchFrame(BOARD, createStyle(false), NOW, 40).join('\n')).not.toContain('\u001b')
  })

  it('says how to start when there are no sessions', () => {
    expect(watchFrame([], createStyle(false), NOW, 80).join('\n')).toContain('No sessions yet')
  })

  it('fits a line by visible width, not by bytes of colour', () => {
    const s = createStyle(true)
    expect(fit(s.red('abcdef'), 10)).toBe(s.red('abcdef'))
    expect(stripVTControlCharacters(fit(`${s.red('abcdef')}${s.green('ghijkl')}`, 8))).toBe('abcdefg…')
  })
})
