/** One hook as the POSIX shell command a hooks document runs, and that command read back. */
import { type Binding, type Hook, type HookAction } from '@omh/plugin-api'
import { doubleQuoted, fill, readDoubleQuoted, readSingleQuoted, singleQuoted } from './hook-shell.js'
import { FIELD_VARIABLE, fieldsMentioned } from './hook-text.js'

const HEADER = '# omh: '
/**
 * The line after the header: with `OMH_HOOK_TRACE` naming a file, the hook
 * appends its name there before anything else, so `omh doctor --turn` can tell
 * a hook the harness ran from one it never called. Unset, it does nothing.
 */
const trace = (name: string) => `[ -z "$OMH_HOOK_TRACE" ] || printf '%s\\n' ${singleQuoted(name)} >> "$OMH_HOOK_TRACE"`
/**
 * Before `when`: with `OMH_HOOK_WHEN_MET` set (only `omh doctor --turn` sets it), the hook goes on
 * as if its `when` had passed, so the doctor sees every refusal and injection delivered. It can
 * only make a hook act, never keep one silent, so nothing in a session gains from setting it.
 */
const WHEN_MET = '[ -n "$OMH_HOOK_WHEN_MET" ] || '
const SILENT = ' </dev/null >&2 || exit 0'
const FAILED = ' </dev/null >&2 || exit 1'

/**
 * One hook as the shell command a harness runs with the event's JSON payload
 * on stdin. In order:
 *
 * 1. a comment naming the hook, so the document says where each entry came from,
 *    and the trace line (see `trace`);
 * 2. the payload, read once, and each field the hook reads exported through
 *    the adapter's jq path (absent or null reads as empty);
 * 3. `when`, in its own shell: a non-zero exit ends the hook silently (see `WHEN_MET`);
 * 4. the action. `run` goes to its own shell with stdout sent to stderr and a
 *    failure reported as exit 1: the harness reads stdout and exit 2 as
 *    instructions (advice, a block), and a command whose output omh promises
 *    to ignore must not be able to give either. `inject` and `refuse` fill the
 *    adapter's template, the text as one double-quoted word.
 *
 * `sh -c --` keeps a command that starts with `-` from being read as an option.
 */
export function hookCommand(hook: Hook, binding: Binding, event: string): string {
  const lines = [`${HEADER}${hook.name}`, trace(hook.name)]
  if (hook.fields.length) {
    lines.push('p=$(cat)')
    for (const field of hook.fields) {
      const jq = singleQuoted(`(${binding.fields![field]!}) // empty`)
      lines.push(`export ${FIELD_VARIABLE[field]}="$(printf '%s' "$p" | jq -r ${jq} 2>/dev/null)"`)
    }
  }
  if (hook.when !== undefined) lines.push(`${WHEN_MET}sh -c -- ${singleQuoted(hook.when)}${SILENT}`)
  const { action } = hook
  if (action.kind === 'run') lines.push(`sh -c -- ${singleQuoted(action.command)}${FAILED}`)
  else lines.push(fill(binding[action.kind]!.template, doubleQuoted(action.text), event))
  return lines.join('\n')
}

/** What a command omh wrote says about its hook; the moment and tools come from where it sits. */
export interface CommandParts {
  readonly name: string
  readonly when?: string
  readonly action: HookAction
  readonly fields: Hook['fields']
}

/**
 * Reads a command back into the parts of its hook, or `undefined` when it is
 * not one omh wrote with these templates. The caller renders the parts again
 * and compares, so a command edited by hand is never taken for omh's.
 */
export function readHookCommand(command: string, binding: Binding, event: string): CommandParts | undefined {
  if (!command.startsWith(HEADER)) return undefined
  const firstBreak = command.indexOf('\n')
  if (firstBreak === -1) return undefined
  const name = command.slice(HEADER.length, firstBreak)
  const traced = `${trace(name)}\n`
  if (!command.startsWith(traced, firstBreak + 1)) return undefined
  let i = firstBreak + 1 + traced.length
  while (command.startsWith('p=$(cat)\n', i) || command.startsWith('export OMH_', i)) {
    const next = command.indexOf('\n', i)
    if (next === -1) return undefined
    i = next + 1
  }
  let when: string | undefined
  if (command.startsWith(`${WHEN_MET}sh -c -- `, i)) {
    const word = readSingleQuoted(command, i + `${WHEN_MET}sh -c -- `.length)
    if (word && command.startsWith(`${SILENT}\n`, word.end)) {
      when = word.value
      i = word.end + SILENT.length + 1
    }
  }
  const rest = command.slice(i)
  const action = readAction(rest, binding, event)
  if (!action) return undefined
  const text = action.kind === 'run' ? action.command : action.text
  return { name, ...(when !== undefined ? { when } : {}), action, fields: fieldsMentioned(when, text) }
}

function readAction(rest: string, binding: Binding, event: string): HookAction | undefined {
  if (rest.startsWith('sh -c -- ')) {
    const word = readSingleQuoted(rest, 'sh -c -- '.length)
    if (word && rest.slice(word.end) === FAILED) return { kind: 'run', command: word.value }
  }
  for (const kind of ['inject', 'refuse'] as const) {
    const template = binding[kind]?.template
    if (!template || template.split('{{text}}').length !== 2) continue
    const [before, after] = fill(template, '\u0000', event).split('\u0000') as [string, string]
    if (!rest.startsWith(before) || !rest.endsWith(after)) continue
    const word = readDoubleQuoted(rest, before.length)
    if (word && word.end === rest.length - after.length) return { kind, text: word.value }
  }
  return undefined
}
