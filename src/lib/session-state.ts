/**
 * How the sessions commands show what a harness does: words and colours of omh's own, never a
 * byte of what the session holds, and a table that stays within 80 columns.
 */
import path from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { ago, stateWords, type Count, type HarnessState, type SessionRow, type SessionRows } from '@omh/sandbox'
import { printable } from './printable.js'
import type { Style } from './style.js'
import { plural, table } from './table.js'

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

/** One repository's sessions on the board `omh sessions watch` draws. */
export interface BoardRepository extends SessionRows {
  /** The checkout's path. */
  readonly repository: string
}

/**
 * The lines of one frame of `omh sessions watch`: a line of totals, then one line per session of
 * every repository, each cut to `width` columns (an ellipsis says where) so nothing wraps and the
 * frame redraws in place. `now` in unix seconds.
 */
export function watchFrame(board: readonly BoardRepository[], s: Style, now: number, width: number): string[] {
  const rows = board.flatMap((b) => b.sessions.map((r) => ({ repo: path.basename(b.repository), r })))
  const waiting = rows.filter(({ r }) => r.state?.state === 'waiting').length
  const working = rows.filter(({ r }) => r.state?.state === 'working' || r.state?.state === 'running').length
  const totals = [plural(rows.length, 'session'), `${working} working`, waiting ? s.yellow(`${waiting} waiting`) : '0 waiting'].join(', ')
  const head = `${s.bold('omh sessions watch')}  ${totals}  ${s.dim(new Date(now * 1000).toTimeString().slice(0, 8))}`
  if (!rows.length) return [head, '', s.dim('No sessions yet; start one with `omh <harness>`, or in the background with `omh --detach <harness>`.')].map((l) => fit(l, width))
  const shares = (r: SessionRow) => [...new Set((r.shared ?? []).flatMap((f) => f.with))].sort()
  const lines = table([
    ['REPO', 'BRANCH', 'HARNESS', 'STATE', 'ACTIVE', 'AHEAD', 'FILES', 'SHARED'].map((h) => s.dim(h)),
    ...rows.map(({ repo, r }) => [
      clip(repo, 12),
      s.bold(clip(r.branch, 16)),
      r.state?.harness ?? r.harness ?? '',
      sessionStateCell(r, s),
      r.state?.lastActive !== undefined ? ago(r.state.lastActive, now).replace(/ ago$/, '') : '',
      count(r.ahead, s),
      count(r.changed, s),
      r.shared === null ? s.yellow('unknown') : shares(r).length ? s.yellow(shares(r).join(' ')) : '',
    ]),
  ]).split('\n')
  return [head, '', ...lines].map((l) => fit(l, width))
}

/** Words of one cell cut to `max` characters, so one long name does not push every row off the screen. */
const clip = (words: string, max: number) => {
  const text = printable(words)
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

/** A line cut to `width` visible columns, its styles kept whole and closed. */
export function fit(line: string, width: number): string {
  if (stripVTControlCharacters(line).length <= width) return line
  let out = ''
  let shown = 0
  // eslint-disable-next-line no-control-regex -- the style sequences are what is measured around
  for (const part of line.split(/(\u001b\[[0-9;]*m)/)) {
    if (part.startsWith('\u001b[')) {
      out += part
      continue
    }
    const room = width - 1 - shown
    if (room <= 0) break
    out += part.slice(0, room)
    shown += Math.min(part.length, room)
  }
  // Closed with the ends of bold, dim and colour: the only sequences a style writes (STYLE_SEQUENCES).
  return line.includes('\u001b[') ? `${out}\u001b[22m\u001b[39m…` : `${out}…`
}
