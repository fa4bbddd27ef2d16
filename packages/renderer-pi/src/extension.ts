import { MOMENTS, type Binding, type DroppedItem, type Hook, type RenderOutput, type ToolWord } from '@omh/plugin-api'
import { FIELD_VARIABLE, fill, hookModulePrelude, hookTextExpression, indentSource, jsLiteral, unexpressible } from '@omh/plugin-kit'

/** The two events that see a tool call, in pi 1.6.0: `tool_call` (may block) and `tool_result` (may change the result). */
export const TOOL_CALL = 'tool_call'
export const TOOL_RESULT = 'tool_result'
/**
 * Fires when a session starts (or is resumed, forked, reloaded), before its first prompt. Advice
 * worked out here reaches the model as a message of its own with the next prompt, through
 * `before_agent_start`, the one event that may add a message to a run.
 */
export const SESSION_START = 'session_start'
const BEFORE_AGENT_START = 'before_agent_start'

const PRELUDE = hookModulePrelude(
  [
    '// With OMH_HOOK_TRACE naming a file, each hook appends its name there when pi',
    '// calls it for its tool (before `when`), so omh doctor --turn can tell a hook',
    '// pi ran from one it never called. Unset, it does nothing.',
  ].join('\n'),
)

/**
 * What this module's shape cannot say, whatever the adapter claims: only the tool events see a
 * tool; advice is gathered (`texts`) only where pi takes it, after a tool and at session start;
 * refusals (`refused`) only where pi blocks, before a tool.
 */
function unplaceable(hook: Hook, event: string): string | undefined {
  const tool = event === TOOL_CALL || event === TOOL_RESULT
  if (!tool && hook.tools) return `no way to narrow \`${hook.on}\` to a tool`
  if (!tool && hook.fields.length) return `no \`${hook.fields[0]}\` field at \`${hook.on}\``
  if (hook.action.kind === 'inject' && event !== TOOL_RESULT && event !== SESSION_START) return `no way to inject text at \`${hook.on}\``
  if (hook.action.kind === 'refuse' && event !== TOOL_CALL) return `no way to refuse a call at \`${hook.on}\``
  return undefined
}

function hookBody(hook: Hook, binding: Binding, tools: Readonly<Partial<Record<ToolWord, string>>>, event: string): string {
  const lines: string[] = []
  if (hook.tools) {
    const names = hook.tools.flatMap((t) => tools[t]!.split('|'))
    lines.push(`if (!${JSON.stringify(names)}.includes(event?.toolName)) return`)
  }
  lines.push(`trace(${jsLiteral(hook.name)})`)
  // Both tool events carry the call's arguments as `event.input`.
  const env = hook.fields.map((f) => `${jsLiteral(FIELD_VARIABLE[f])}: String(event?.input?.[${jsLiteral(binding.fields![f]!)}] ?? "")`)
  lines.push(env.length ? `const env = { ${env.join(', ')} }` : 'const env = {}')
  if (hook.when !== undefined) {
    // OMH_HOOK_WHEN_MET (set by omh doctor --turn alone) goes on as if `when` passed: it can only make a hook act.
    lines.push(`const guard = process.env.OMH_HOOK_WHEN_MET ? { code: 0 } : await sh(${jsLiteral(hook.when)}, env)`)
    lines.push(`if (guard.code === null) warn(${jsLiteral(hook.name)}, "when", guard)`)
    lines.push('if (guard.code !== 0) return')
  }
  const { action } = hook
  if (action.kind === 'run') {
    lines.push(`const r = await sh(${jsLiteral(action.command)}, env)`)
    lines.push(`if (r.code !== 0) warn(${jsLiteral(hook.name)}, "run", r)`)
  } else {
    lines.push(fill(binding[action.kind]!.template, hookTextExpression(action.text), event))
  }
  const body = lines.map((l) => `        ${l}`).join('\n')
  return `    // ${hook.name}\n    try {\n      await (async () => {\n${body}\n      })()\n    } catch (error) {\n      fault(${jsLiteral(hook.name)}, error)\n    }`
}

/** The handler for one event: its hooks in order, then what pi takes back from that event. */
function handler(event: string, bodies: readonly string[]): string {
  const run = bodies.join('\n')
  if (event === TOOL_CALL) {
    // Every hook of the call runs, as the other harnesses run them all; the first refusal is the reason pi gives the model.
    return `  pi.on(${jsLiteral(event)}, async (event) => {\n    const refused = []\n${run}\n    if (refused.length) return { block: true, reason: refused[0] }\n  })`
  }
  if (event === TOOL_RESULT) {
    // A patch of `content` alone: structured content the tool returned is dropped with it, so
    // what the model reads is the text, advice included.
    return `  pi.on(${jsLiteral(event)}, async (event) => {\n    const texts = []\n${run}\n    if (texts.length) return { content: [...(Array.isArray(event?.content) ? event.content : []), ...texts.map((text) => ({ type: "text", text }))] }\n  })`
  }
  if (event === SESSION_START) {
    // Worked out once per start; the next run takes it (before_agent_start), so the model reads it from the session's first request on.
    return `  pi.on(${jsLiteral(event)}, async (event) => {\n    advice = (async () => {\n      const texts = []\n${indentSource(run)}\n      return texts\n    })()\n    await advice\n  })\n  pi.on(${jsLiteral(BEFORE_AGENT_START)}, async () => {\n    const texts = await advice\n    advice = Promise.resolve([])\n    if (texts.length) return { message: { customType: "omh", content: texts.join("\\n\\n"), display: false } }\n  })`
  }
  return `  pi.on(${jsLiteral(event)}, async (event) => {\n${run}\n  })`
}

/** The extension module for these hooks, and the hooks it could not express. */
export function extensionModule(hooks: readonly Hook[], binding: Binding, tools: Readonly<Partial<Record<ToolWord, string>>>): { source: string; dropped: DroppedItem[] } {
  const dropped: DroppedItem[] = []
  const byEvent = new Map<string, string[]>()
  for (const hook of MOMENTS.flatMap((m) => hooks.filter((h) => h.on === m))) {
    const event = binding.events?.[hook.on]
    const reason = unexpressible(hook, binding, tools) ?? unplaceable(hook, event!)
    if (reason) {
      dropped.push({ capability: 'hooks', name: hook.name, reason })
      continue
    }
    byEvent.set(event!, [...(byEvent.get(event!) ?? []), hookBody(hook, binding, tools, event!)])
  }
  dropped.sort((a, b) => hooks.findIndex((h) => h.name === a.name) - hooks.findIndex((h) => h.name === b.name))
  const handlers = [...byEvent].map(([event, bodies]) => handler(event, bodies))
  const state = byEvent.has(SESSION_START) ? '  let advice = Promise.resolve([])\n' : ''
  const source = `${PRELUDE}\nexport default function omh(pi) {\n${state}${handlers.join('\n')}\n}\n`
  return { source, dropped }
}

export function renderExtension(hooks: readonly Hook[], binding: Binding, tools: Readonly<Partial<Record<ToolWord, string>>>): RenderOutput {
  const { source, dropped } = extensionModule(hooks, binding, tools)
  if (hooks.length === dropped.length) return { files: [], dropped }
  return { files: [{ kind: 'file', guest: binding.path, content: source, syntax: 'javascript' }], dropped }
}
