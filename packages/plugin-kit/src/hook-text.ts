/**
 * The rules every hook renderer shares: what a hook's text may say, which
 * payload fields a hook reads, and why a harness cannot express a hook. Pure
 * functions over the canonical model; nothing here knows a harness or a
 * format, so renderers import it from `@omh/plugin-kit`.
 */
import { HOOK_FIELDS, type Hook, type HookField, type Moment, type ToolWord, type Binding } from '@omh/plugin-api'

/** The variables advisory and refusal text may name, and the payload field each one reads (if any). */
export const HOOK_VARIABLES = {
  OMH_TOOL_FILE: 'tool-file',
  OMH_TOOL_COMMAND: 'tool-command',
  OMH_SESSION: undefined,
} as const satisfies Record<string, HookField | undefined>
export type HookVariable = keyof typeof HOOK_VARIABLES

/** The environment variable a payload field is exposed as. */
export const FIELD_VARIABLE: Readonly<Record<HookField, HookVariable>> = {
  'tool-file': 'OMH_TOOL_FILE',
  'tool-command': 'OMH_TOOL_COMMAND',
}

/** A piece of hook text: words the agent reads as written, or a variable filled in when the hook fires. */
export type TextPiece =
  | { readonly kind: 'literal'; readonly text: string }
  | {
      readonly kind: 'variable'
      readonly name: HookVariable
      /** Written `${NAME}` rather than `$NAME`; kept so the text reads back as written. */
      readonly braced: boolean
      /** `${NAME:-fallback}`: said instead when the variable is empty. */
      readonly fallback?: string
    }

export type TextParse = { readonly ok: true; readonly pieces: readonly TextPiece[] } | { readonly ok: false; readonly problem: string }

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/
// A fallback is plain words: anything a shell or a JS string would treat
// specially is refused rather than escaped, so it means the same everywhere.
const FALLBACK = /^[^$}`"'\\]*$/
const KNOWN = Object.keys(HOOK_VARIABLES).map((n) => `$${n}`).join(', ')

/**
 * Splits advisory or refusal text into literal words and variables. `$$` is a
 * dollar sign; `$NAME`, `${NAME}` and `${NAME:-fallback}` name a variable omh
 * sets. Anything else after a `$` is refused, saying why: text the agent reads
 * must never run a command or expand something omh does not control.
 */
export function parseHookText(text: string): TextParse {
  const pieces: TextPiece[] = []
  let literal = ''
  const flush = () => {
    if (literal) pieces.push({ kind: 'literal', text: literal })
    literal = ''
  }
  for (let i = 0; i < text.length; ) {
    const c = text[i]!
    if (c !== '$') {
      literal += c
      i++
      continue
    }
    const rest = text.slice(i + 1)
    if (rest.startsWith('$')) {
      literal += '$'
      i += 2
      continue
    }
    if (rest.startsWith('(')) {
      return {
        ok: false,
        problem: '`$(…)` would run a command inside text the agent reads; omh refuses it. Compute it in `when`, or make this a `run` hook',
      }
    }
    if (rest.startsWith('{')) {
      const close = rest.indexOf('}')
      const inner = close === -1 ? undefined : rest.slice(1, close)
      const m = inner === undefined ? null : /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s.exec(inner)
      if (!m) {
        const shown = `$${close === -1 ? rest.slice(0, 12) : rest.slice(0, close + 1)}`
        return { ok: false, problem: `\`${shown}\` is not a variable: write \`\${NAME}\` or \`\${NAME:-fallback}\`, or \`$$\` for a dollar sign` }
      }
      const name = m[1]!
      if (!(name in HOOK_VARIABLES)) return { ok: false, problem: unknownVariable(name) }
      const fallback = m[2]
      if (fallback !== undefined && !FALLBACK.test(fallback)) {
        return { ok: false, problem: `the fallback in \`\${${inner}}\` is plain words: no \`$\`, \`}\`, quotes, backticks or backslashes` }
      }
      flush()
      pieces.push({ kind: 'variable', name: name as HookVariable, braced: true, ...(fallback !== undefined ? { fallback } : {}) })
      i += close + 2
      continue
    }
    const name = NAME.exec(rest)?.[0]
    if (!name) {
      const what = rest ? `\`$${[...rest][0]}\`` : 'a `$` at the end'
      return { ok: false, problem: `${what} names no variable; write \`$$\` for a dollar sign (text may name ${KNOWN})` }
    }
    if (!(name in HOOK_VARIABLES)) return { ok: false, problem: unknownVariable(name) }
    flush()
    pieces.push({ kind: 'variable', name: name as HookVariable, braced: false })
    i += 1 + name.length
  }
  flush()
  return { ok: true, pieces }
}

const unknownVariable = (name: string) =>
  `\`$${name}\` is not a variable omh sets, so the agent would read it empty or unexpanded; text may name ${KNOWN}, and \`$$\` is a dollar sign`

/** Writes pieces back as hook text: the inverse of `parseHookText`. */
export function hookText(pieces: readonly TextPiece[]): string {
  return pieces
    .map((p) =>
      p.kind === 'literal'
        ? p.text.replaceAll('$', '$$$$')
        : p.braced
          ? `\${${p.name}${p.fallback !== undefined ? `:-${p.fallback}` : ''}}`
          : `$${p.name}`,
    )
    .join('')
}

/**
 * The payload fields a shell command or a text mentions, in vocabulary order.
 * `$OMH_TOOL_FILE`, `${OMH_TOOL_FILE}` and `${OMH_TOOL_FILE:-…}` count;
 * `$OMH_TOOL_FILE_X` is another name and does not.
 */
export function fieldsMentioned(...texts: readonly (string | undefined)[]): HookField[] {
  const all = texts.filter((t): t is string => t !== undefined).join('\n')
  return HOOK_FIELDS.filter((field) => new RegExp(`\\$\\{?${FIELD_VARIABLE[field]}(?![A-Za-z0-9_])`).test(all))
}

/** The moments at which a tool is involved, so `tools` and payload fields mean something. */
export const TOOL_MOMENTS: readonly Moment[] = ['before-tool', 'after-tool']

/**
 * Why a harness cannot express a hook, in the words a drop report uses
 * (`no \`search\` tool`), or `undefined` when it can. Checked in the order a
 * reader would: the moment, each tool, each field, then the action. An action
 * is never substituted: a hook that wants to advise is not turned into one
 * that blocks, nor the reverse.
 */
export function unexpressible(hook: Hook, binding: Pick<Binding, 'events' | 'fields' | 'inject' | 'refuse'>, tools: Readonly<Partial<Record<ToolWord, string>>>): string | undefined {
  if (!binding.events?.[hook.on]) return `no \`${hook.on}\` moment`
  for (const tool of hook.tools ?? []) if (!tools[tool]) return `no \`${tool}\` tool`
  for (const field of hook.fields) if (!binding.fields?.[field]) return `no \`${field}\` field`
  const { kind } = hook.action
  if (kind === 'run') return undefined
  const protocol = binding[kind]
  const what = kind === 'inject' ? 'way to inject text' : 'way to refuse a call'
  if (!protocol) return `no ${what}`
  if (protocol.at && !protocol.at.includes(hook.on)) return `no ${what} at \`${hook.on}\``
  return undefined
}
