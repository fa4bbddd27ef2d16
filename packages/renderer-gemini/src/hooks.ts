import { MOMENTS, type Binding, type DroppedItem, type Hook, type RenderOutput, type StagedFile, type ToolWord } from '@omh/plugin-api'
import { FIELD_VARIABLE, doubleQuoted, fill, singleQuoted, unexpressible } from '@omh/plugin-kit'
import { toolNames, type Tools } from './tool-names.js'

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|]/g

/**
 * Gemini tests a tool matcher as an unanchored regular expression (`replace` would also match an
 * MCP tool `mcp_x_replace_all`), so the names are escaped and anchored as one exact alternation.
 */
const matcher = (words: readonly ToolWord[], tools: Tools) =>
  `^(?:${words
    .flatMap((word) => toolNames(tools, word))
    .map((n) => n.replace(REGEX_SPECIAL, '\\$&'))
    .join('|')})$`

/**
 * One hook as the shell script Gemini runs with the event's JSON payload on stdin: its name,
 * the trace line `omh doctor` reads, the payload fields the hook mentions, `when`, then the action.
 * Gemini reads a hook's stdout as JSON instructions and, when stdout is empty, tries its stderr
 * instead; so `when` and `run` send their output to stderr and every way out that is not the
 * adapter's template prints `{}`, which instructs nothing. A failing `run` exits 1, which Gemini
 * reports as a warning and otherwise ignores.
 */
function hookScript(hook: Hook, binding: Binding, event: string): string {
  const lines = [`# omh: ${hook.name}`, `[ -z "$OMH_HOOK_TRACE" ] || printf '%s\\n' ${singleQuoted(hook.name)} >> "$OMH_HOOK_TRACE"`]
  if (hook.fields.length) {
    lines.push('p=$(cat)')
    for (const field of hook.fields) {
      lines.push(`export ${FIELD_VARIABLE[field]}="$(printf '%s' "$p" | jq -r ${singleQuoted(`(${binding.fields![field]!}) // empty`)} 2>/dev/null)"`)
    }
  }
  // OMH_HOOK_WHEN_MET (set by omh doctor --turn alone) goes on as if `when` passed: it can only make a hook act.
  if (hook.when !== undefined) lines.push(`[ -n "$OMH_HOOK_WHEN_MET" ] || sh -c -- ${singleQuoted(hook.when)} </dev/null >&2 || { echo '{}'; exit 0; }`)
  const { action } = hook
  if (action.kind === 'run') lines.push(`sh -c -- ${singleQuoted(action.command)} </dev/null >&2 || { echo '{}'; exit 1; }`, `echo '{}'`)
  else lines.push(fill(binding[action.kind]!.template, doubleQuoted(action.text), event))
  return `${lines.join('\n')}\n`
}

interface MatcherGroup {
  readonly matcher?: string
  readonly hooks: readonly { readonly name: string; readonly type: 'command'; readonly command: string }[]
}

/**
 * `hooks` in settings.json: per event one matcher group per hook, in omh's moment order. Gemini
 * substitutes `$NAME` and `${NAME}` in every string of settings.json from its own environment
 * when it loads the file, with no way to escape a dollar sign, so a script written there would
 * lose its variables before it ran. Each hook's script is a file of its own beside the settings
 * (`omh-hooks/<name>.sh`), and the settings name it with no `$` at all.
 */
export function renderHooks(hooks: readonly Hook[], binding: Binding, tools: Tools): RenderOutput {
  const folder = `${binding.path.slice(0, binding.path.lastIndexOf('/'))}/omh-hooks`
  const document: Record<string, MatcherGroup[]> = {}
  const scripts: StagedFile[] = []
  const dropped: DroppedItem[] = []
  for (const hook of MOMENTS.flatMap((moment) => hooks.filter((h) => h.on === moment))) {
    const reason = unexpressible(hook, binding, tools)
    if (reason) {
      dropped.push({ capability: 'hooks', name: hook.name, reason })
      continue
    }
    const event = binding.events![hook.on]!
    const script = `${folder}/${hook.name}.sh`
    scripts.push({ kind: 'file', guest: script, content: hookScript(hook, binding, event), syntax: 'sh' })
    ;(document[event] ??= []).push({
      ...(hook.tools ? { matcher: matcher(hook.tools, tools) } : {}),
      hooks: [{ name: hook.name, type: 'command', command: `sh ${singleQuoted(script)}` }],
    })
  }
  dropped.sort((a, b) => hooks.findIndex((h) => h.name === a.name) - hooks.findIndex((h) => h.name === b.name))
  // The MCP binding writes the rest of the same settings.json; omh joins the two JSON objects
  // (their top-level keys are disjoint). With no hook, this binding adds nothing.
  if (!scripts.length) return { files: [], dropped }
  return { files: [{ kind: 'file', guest: binding.path, content: json({ hooks: document }), syntax: 'json' }, ...scripts], dropped }
}
