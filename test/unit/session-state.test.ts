import { stripVTControlCharacters } from 'node:util'
import { describe, expect, it } from 'vitest'
import type { SessionRow } from '@omh/sandbox'
import { sessionsTable } from '../../src/lib/session-state.js'
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
