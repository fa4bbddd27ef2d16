/**
 * How the sessions commands show what a harness does: words and colours of omh's own, never a
 * byte of what the session holds, and a table that stays within 80 columns.
 */
import { ago, stateWords, type Count, type HarnessState, type SessionRow } from '@omh/sandbox'
import type { Style } from './style.js'
import { table } from './table.js'

/** A state in words, coloured by what it asks of the user: at work, waiting for them, done or failed. */
export function stateCell(state: Pick<HarnessState, 'state' | 'exit' | 'from'>, s: Style): string {
  const words = stateWords(state)
  if (state.state === 'working' || state.state === 'running') return s.green(words)
  if (state.state === 'waiting' || state.state === 'unknown') return s.yellow(words)
  return state.exit === 0 ? s.dim(words) : s.red(words)
}

/** A session's state, or what its container is when no harness said anything. */
export function sessionStateCell(row: Pick<SessionRow, 'state' | 'container'>, s: Style): string {
  if (row.state) return stateCell(row.state, s)
  if (row.container === 'running') return s.dim('up')
  return row.container === 'unknown' ? s.yellow('unknown') : s.dim(row.container)
}

const count = (n: Count, s: Style) => (n === 'unknown' ? s.yellow('unknown') : n === 0 ? s.dim('0') : String(n))

/** `omh sessions ls` as a table: one row per session under a header; `now` in unix seconds. */
export function sessionsTable(rows: readonly SessionRow[], s: Style, now: number): string {
  const head = ['SESSION', 'HARNESS', 'STATE', 'LAST ACTIVE', 'AHEAD', 'UNCOMMITTED'].map((h) => s.dim(h))
  return table([
    head,
    ...rows.map((r) => [
      s.bold(r.id),
      r.state?.harness ?? r.harness ?? '',
      sessionStateCell(r, s),
      r.state?.lastActive !== undefined ? ago(r.state.lastActive, now) : '',
      count(r.ahead, s),
      count(r.uncommitted, s),
      r.inUse ? s.cyan('in use') : '',
    ]),
  ])
}
