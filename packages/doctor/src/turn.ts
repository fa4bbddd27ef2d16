/**
 * `omh doctor --turn`, the pure part: the script that drives a harness through
 * a turn reaching every moment with every tool word the hooks name, and the
 * verdicts on what the turn left (the requests the scripted model received and
 * the hooks that recorded their invocation). No I/O and no harness name: the
 * calls come from the adapter's `[turn]` table.
 */
import type { Adapter } from '@omh/kernel'
import { TOOL_WORDS, type CapabilityClass, type DroppedItem, type Hook, type Moment, type ProfileItems, type ToolWord } from '@omh/plugin-api'
import { parseHookText } from '@omh/plugin-kit'
import type { DoctorCheck } from './checks.js'
import { compilePattern } from './evidence.js'
import type { TurnOutput } from './runner.js'
import { requestText, type RecordedRequest, type Script } from './scripted-model.js'

/** What one hook did in the turn. `delivered` is for `inject`/`refuse`: whether its text reached a request; `null` for `run`, or text with no words of its own. */
export interface TurnHook {
  readonly name: string
  readonly moment: Moment
  readonly invoked: boolean
  readonly delivered: boolean | null
}

/** Whether the model's first request carried an item. */
export interface TurnItem {
  readonly capability: Extract<CapabilityClass, 'rules' | 'skills' | 'subagents' | 'mcp'>
  readonly name: string
  /** In the first request, as the model starts with it. */
  readonly carried: boolean
  /** The first request (1-based) that carried it; `null`: none did. */
  readonly firstIn: number | null
}

export interface TurnReport {
  /** The harness's exit status, `null` when it was killed or never ran. */
  readonly exit: number | null
  /** Requests the model answered from the script (the conversation). */
  readonly requests: number
  readonly hooks: readonly TurnHook[]
  readonly items: readonly TurnItem[]
  /** Tool words the hooks name that the adapter's `[turn]` has no call for. */
  readonly unreached: readonly ToolWord[]
}

const TOOL_MOMENTS: readonly Moment[] = ['before-tool', 'after-tool']

/** The hooks the turn must reach: the profile's, less those the renderer dropped. */
export const hooksUnderTest = (profile: ProfileItems, dropped: readonly DroppedItem[]): Hook[] =>
  profile.hooks.filter((h) => !dropped.some((d) => d.capability === 'hooks' && d.name === h.name))

/** The tool words a turn calls: each word a tool hook names (a hook for every tool needs one call: the shell's, or the first the adapter has), in omh's order. */
export function wordsToCall(hooks: readonly Hook[], calls: NonNullable<Adapter['turn']>['calls'] = {}): { call: ToolWord[]; unreached: ToolWord[] } {
  const wanted = new Set<ToolWord>()
  const tool = hooks.filter((h) => TOOL_MOMENTS.includes(h.on))
  for (const h of tool) for (const w of h.tools ?? []) wanted.add(w)
  // The shell is the call every harness has; any other does when it has none.
  const any = calls.shell ? 'shell' : TOOL_WORDS.find((w) => calls[w])
  if (tool.some((h) => !h.tools) && any && ![...wanted].some((w) => calls[w])) wanted.add(any)
  const ordered = TOOL_WORDS.filter((w) => wanted.has(w))
  return { call: ordered.filter((w) => calls[w]), unreached: ordered.filter((w) => !calls[w]) }
}

/** The script of a doctor turn: one call per word, then the end of the turn. */
export function turnScript(adapter: Adapter, hooks: readonly Hook[]): Script {
  const calls = adapter.turn?.calls ?? {}
  const { call } = wordsToCall(hooks, calls)
  return { replies: [...call.map((w) => ({ call: calls[w]!.tool, input: calls[w]!.input })), { text: 'omh doctor: the turn is over.' }] }
}

/** The longest run of a hook text's own words, which must show in a request when the text reached the model. */
export function textMark(text: string): string | undefined {
  const parsed = parseHookText(text)
  if (!parsed.ok) return undefined
  const words = parsed.pieces.flatMap((p) => (p.kind === 'literal' ? p.text.split('\n').map((l) => l.trim()) : [])).sort((a, b) => b.length - a.length)[0]
  return words && words.length >= 4 ? words : undefined
}

const word = (s: string) => s.replace(/[^A-Za-z0-9]/g, '_')

/** The first line of a rules section long enough to be its own. */
const ruleMark = (text: string) => text.split('\n').map((l) => l.trim()).find((l) => l.length >= 8 && !l.startsWith('<!--'))

/** What the turn showed, per hook and per item. */
export function judgeTurn(hooks: readonly Hook[], profile: ProfileItems, dropped: readonly DroppedItem[], out: TurnOutput, unreached: readonly ToolWord[], mcpNamed?: string): TurnReport {
  const requests = (out.requests as RecordedRequest[]).filter((r) => r.reply !== null)
  const texts = requests.map((r) => requestText(r.body))
  const turnHooks = hooks.map((h): TurnHook => {
    const mark = h.action.kind === 'run' ? undefined : textMark(h.action.text)
    return { name: h.name, moment: h.on, invoked: out.trace.includes(h.name), delivered: mark === undefined ? null : texts.some((t) => t.includes(mark)) }
  })
  const kept = <T extends { name: string }>(capability: CapabilityClass, items: readonly T[]) => items.filter((i) => !dropped.some((d) => d.capability === capability && d.name === i.name))
  const item = (capability: TurnItem['capability'], name: string, has: (n: number) => boolean): TurnItem => {
    const at = requests.findIndex((_, n) => has(n))
    return { capability, name, carried: at === 0, firstIn: at === -1 ? null : at + 1 }
  }
  const items: TurnItem[] = [
    ...kept('rules', profile.rules).map((r) => {
      const mark = ruleMark(r.text)
      return item('rules', r.name, (n) => mark !== undefined && texts[n]!.includes(mark))
    }),
    ...kept('skills', profile.skills).map((x) => item('skills', x.name, (n) => texts[n]!.includes(x.name))),
    ...kept('subagents', profile.subagents).map((x) => item('subagents', x.name, (n) => texts[n]!.includes(x.name))),
    // Harnesses spell a server's name in tool names their own way (Codex turns `-` into `_`).
    ...kept('mcp', profile.mcp).map((m) => {
      // A harness that defers MCP tools names them in its text instead, one a line.
      const named = mcpNamed === undefined ? undefined : compilePattern(mcpNamed, { name: m.name })
      return item('mcp', m.name, (n) => requests[n]!.tools.some((t) => word(t).includes(word(m.name))) || (named !== undefined && texts[n]!.split('\n').some((l) => named.test(l))))
    }),
  ]
  return { exit: out.output.exit, requests: requests.length, hooks: turnHooks, items, unreached }
}

/**
 * The checks a turn adds to the doctor's list: the turn itself, each hook
 * invoked, each item carried. `unconnected` holds the MCP servers doctor's
 * probes found loaded but not connected, each with why: their tools cannot
 * reach a request, which is the same warning again, not a failure.
 */
export function turnChecks(report: TurnReport, out: TurnOutput, hooks: readonly Hook[], unconnected: ReadonlyMap<string, string> = new Map()): DoctorCheck[] {
  const said = `${out.output.stderr}\n${out.output.stdout}`.trim().split('\n').slice(-3).join(' | ')
  const checks: DoctorCheck[] = [
    {
      kind: 'turn',
      name: 'turn',
      ok: !out.error && report.exit === 0 && report.requests > 0,
      detail:
        out.error ??
        (report.exit === 0
          ? `${report.requests} requests answered from the script (${(out.requests as RecordedRequest[]).filter((r) => r.reply !== null).map((r) => r.answered).join('; ')})`
          : `exited ${report.exit ?? 'without a status'}${said ? `: ${said}` : ''}`),
    },
  ]
  for (const h of report.hooks) {
    const hook = hooks.find((x) => x.name === h.name)!
    const missing = (hook.tools ?? []).filter((w) => report.unreached.includes(w))
    // The turn runs every hook as if its `when` passed (OMH_HOOK_WHEN_MET), so text that reaches no
    // request was lost by the harness: a refusal the agent never reads does not refuse.
    const what = hook.action.kind === 'refuse' ? 'its refusal' : 'its text'
    const delivered = h.delivered === null ? '' : h.delivered ? `, ${what} reached the next request` : `, ${what} reached no request the model received`
    // A hook only the adapter's missing calls could reach is not reached, which is said, not failed;
    // nor is one at `waiting`: a turn without a terminal, every call allowed, never waits for anyone.
    const waits = hook.on === 'waiting'
    const reachable = !waits && (!hook.tools || hook.tools.some((w) => !report.unreached.includes(w)))
    checks.push({
      kind: 'turn',
      name: `${h.name} (${h.moment})`,
      ok: (h.invoked && h.delivered !== false) || !reachable,
      capability: 'hooks',
      items: [h.name],
      detail: h.invoked
        ? `invoked${delivered}`
        : reachable
          ? `not invoked by the harness${missing.length ? ` (the adapter's [turn] has no call for ${missing.join(', ')})` : ''}`
          : waits
            ? 'not reached: the scripted turn never waits for the user'
            : `not reached: the adapter's [turn] has no call for ${missing.join(', ')}`,
    })
  }
  for (const i of report.items) {
    const why = i.capability === 'mcp' && i.firstIn === null ? unconnected.get(i.name) : undefined
    if (why !== undefined) {
      checks.push({ kind: 'turn', name: `${i.capability}: ${i.name}`, ok: true, warning: true, capability: i.capability, items: [i.name], detail: `in no request: loaded, not connected (${why})` })
      continue
    }
    // Late is reported, not failed: a harness may start a server beside its first request.
    const detail = i.carried ? 'in the first request' : i.firstIn ? `not in the first request; first in request ${i.firstIn}` : 'in no request of the turn'
    checks.push({ kind: 'turn', name: `${i.capability}: ${i.name}`, ok: i.firstIn !== null, capability: i.capability, items: [i.name], detail })
  }
  return checks
}
