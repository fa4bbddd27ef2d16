import { readFileSync } from 'node:fs'
import { MOMENTS, PLUGIN_API_VERSION, defineRenderer, type Binding, type DroppedItem, type Hook, type RenderOutput, type ToolWord } from '@omh/plugin-api'
import { FIELD_VARIABLE, fill, hookModulePrelude, hookTextExpression, indentSource, jsLiteral, unexpressible } from '@omh/plugin-kit'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

/** The two plugin hooks that see a tool call; any other event word is a bus event type, dispatched from `event`. */
export const BEFORE = 'tool.execute.before'
export const AFTER = 'tool.execute.after'
/**
 * The plugin hook that edits the system prompt of every request a session
 * sends (`{sessionID, model}`, `{system}`), in OpenCode 1.18.33: advice at
 * session start is added there, so the model reads it from the first request on.
 */
export const SYSTEM = 'experimental.chat.system.transform'

const PRELUDE = hookModulePrelude(
  [
    '// With OMH_HOOK_TRACE naming a file, each hook appends its name there when the',
    '// plugin calls it for its tool (before `when`), so omh doctor --turn can tell a',
    '// hook OpenCode ran from one it never called. Unset, it does nothing.',
  ].join('\n'),
)

/** What this plugin's shape cannot say, whatever the adapter claims: only tool hooks see a tool, and only their outputs can advise or block. */
function unplaceable(hook: Hook, event: string): string | undefined {
  const tool = event === BEFORE || event === AFTER
  if (!tool && hook.tools) return `no way to narrow \`${hook.on}\` to a tool`
  if (!tool && hook.fields.length) return `no \`${hook.fields[0]}\` field at \`${hook.on}\``
  if (hook.action.kind === 'inject' && event !== AFTER && hook.on !== 'session-start') return `no way to inject text at \`${hook.on}\``
  if (hook.action.kind === 'refuse' && event !== BEFORE) return `no way to refuse a call at \`${hook.on}\``
  return undefined
}

function hookBody(hook: Hook, binding: Binding, tools: Readonly<Partial<Record<ToolWord, string>>>, event: string): string {
  const lines: string[] = []
  if (hook.tools) {
    const names = hook.tools.flatMap((t) => tools[t]!.split('|'))
    lines.push(`if (!${JSON.stringify(names)}.includes(input?.tool)) return`)
  }
  lines.push(`trace(${jsLiteral(hook.name)})`)
  // Before a tool runs its arguments are `output.args`; after, `input.args`.
  const args = event === BEFORE ? 'output?.args' : 'input?.args'
  const env = hook.fields.map((f) => `${jsLiteral(FIELD_VARIABLE[f])}: String(${args}?.[${jsLiteral(binding.fields![f]!)}] ?? "")`)
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
  } else if (action.kind === 'inject' && hook.on === 'session-start') {
    lines.push(`texts.push(${hookTextExpression(action.text)})`)
  } else {
    lines.push(fill(binding[action.kind]!.template, hookTextExpression(action.text), event))
  }
  const body = lines.map((l) => `        ${l}`).join('\n')
  // A refusal must escape to stop the call, once every hook of the call has run, as the other
  // harnesses run them all; anything else that fails is reported and the call goes on.
  if (action.kind === 'refuse') return `      // ${hook.name}\n      try {\n        await (async () => {\n${indentSource(body)}\n        })()\n      } catch (error) {\n        ${REFUSED}.push(error)\n      }`
  return `      // ${hook.name}\n      try {\n        await (async () => {\n${indentSource(body)}\n        })()\n      } catch (error) {\n        fault(${jsLiteral(hook.name)}, error)\n      }`
}

/** The plugin module for these hooks, and the hooks it could not express. */
/** The refusals a call's hooks made, thrown after every hook of the call has run. */
const REFUSED = 'refused'

export function pluginModule(hooks: readonly Hook[], binding: Binding, tools: Readonly<Partial<Record<ToolWord, string>>>): { source: string; dropped: DroppedItem[] } {
  const dropped: DroppedItem[] = []
  const byEvent = new Map<string, string[]>()
  const advice: string[] = []
  for (const hook of MOMENTS.flatMap((m) => hooks.filter((h) => h.on === m))) {
    const event = binding.events?.[hook.on]
    const reason = unexpressible(hook, binding, tools) ?? unplaceable(hook, event!)
    if (reason) {
      dropped.push({ capability: 'hooks', name: hook.name, reason })
      continue
    }
    if (hook.action.kind === 'inject' && hook.on === 'session-start') advice.push(hookBody(hook, binding, tools, event!))
    else byEvent.set(event!, [...(byEvent.get(event!) ?? []), hookBody(hook, binding, tools, event!)])
  }
  // Advice at session start is worked out once per session, when the session is created (or, should
  // a request come first, then), and added to the system prompt of each of its requests.
  const startEvent = binding.events?.['session-start']
  if (advice.length && startEvent) {
    byEvent.set(startEvent, [`      await adviceFor(event?.properties?.sessionID ?? event?.properties?.info?.id)`, ...(byEvent.get(startEvent) ?? [])])
  }
  dropped.sort((a, b) => hooks.findIndex((h) => h.name === a.name) - hooks.findIndex((h) => h.name === b.name))
  const handlers: string[] = []
  for (const event of [BEFORE, AFTER]) {
    const bodies = byEvent.get(event)
    if (!bodies) continue
    const refusing = bodies.some((b) => b.includes(`${REFUSED}.push(`))
    const lines = refusing ? [`      const ${REFUSED} = []`, ...bodies, `      if (${REFUSED}.length) throw ${REFUSED}[0]`] : bodies
    handlers.push(`    ${jsLiteral(event)}: async (input, output) => {\n${lines.join('\n')}\n    },`)
  }
  const bus = [...byEvent].filter(([event]) => event !== BEFORE && event !== AFTER)
  if (bus.length) {
    const branches = bus.map(([event, bodies]) => `      if (event?.type === ${jsLiteral(event)}) {\n${bodies.map(indentSource).join('\n')}\n      }`)
    handlers.push(`    event: async ({ event } = {}) => {\n${branches.join('\n')}\n    },`)
  }
  let setup = ''
  if (advice.length) {
    handlers.push(`    ${jsLiteral(SYSTEM)}: async (input, output) => {\n      if (!input?.sessionID || !Array.isArray(output?.system)) return\n      output.system.push(...(await adviceFor(input.sessionID)).filter(Boolean))\n    },`)
    setup = `  const advice = new Map()\n  const adviceFor = (session) => {\n    if (!advice.has(session)) {\n      advice.set(session, (async () => {\n        const texts = []\n${advice.map((b) => indentSource(indentSource(b))).join('\n')}\n        return texts\n      })())\n    }\n    return advice.get(session)\n  }\n`
  }
  const source = `${PRELUDE}\nexport default async function omh() {\n${setup}  return {\n${handlers.join('\n')}\n  }\n}\n`
  return { source, dropped }
}

export default defineRenderer({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: ['opencode-plugin'],
  classes: ['hooks'],
  render(input): RenderOutput {
    const hooks = input.capability === 'hooks' ? input.items : []
    const { source, dropped } = pluginModule(hooks, input.binding, input.adapter.tools)
    if (hooks.length === dropped.length) return { files: [], dropped }
    return { files: [{ kind: 'file', guest: input.binding.path, content: source, syntax: 'javascript' }], dropped }
  },
})
