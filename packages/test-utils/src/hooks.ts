import path from 'node:path'
import fc from 'fast-check'
import { emptyProfile, type Hook, type ProfileItems, type RenderInput } from '@omh/plugin-api'
import { parseHookText } from '@omh/plugin-kit'
import { checkAdapterFile, parseHookFile, toAdapter, type ResolvedBinding } from '@omh/kernel'
import { ROOT } from './root.js'

/** A bundled adapter's hooks binding and tool names, as a renderer receives them. */
export async function bundledHooks(harness: 'claude' | 'codex' | 'opencode') {
  const file = path.join(ROOT, 'adapters', `${harness}.toml`)
  const check = await checkAdapterFile(file, harness)
  if (!check.data) throw new Error(`${file}: ${JSON.stringify(check.problems)}`)
  const adapter = toAdapter(file, check.data)
  const binding = adapter.bindings.find((b) => b.capability === 'hooks')!
  return { adapter, binding, tools: adapter.tools }
}

/** A render input for hooks, as the kernel builds it. */
export function hooksInput(
  hooks: readonly Hook[],
  at: { adapter: ReturnType<typeof toAdapter>; binding: ResolvedBinding },
  profile: Partial<ProfileItems> = {},
): RenderInput<undefined> {
  return {
    capability: 'hooks',
    items: hooks,
    binding: at.binding,
    adapter: {
      name: at.adapter.name,
      tools: at.adapter.tools,
      paths: Object.fromEntries(at.adapter.bindings.map((b) => [b.capability, b.path])),
    },
    options: undefined,
    profile: { ...emptyProfile(), hooks, ...profile },
  }
}

/** A hook, parsed from its file's JSON exactly as a user's file would be. */
export function hook(name: string, file: Record<string, unknown>): Hook {
  const parsed = parseHookFile(name, `/home/u/.omh/hooks/${name}.json`, JSON.stringify(file))
  if (!parsed.ok) throw new Error(`${name}: ${parsed.problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`)
  return parsed.hook
}

/** Words that break naive quoting in a shell, in JSON and in JS. */
export const AWKWARD = `it's "quoted" — \`make help\`, costs $$5, back\\slash, {{event}}
second line ✓ 日本語 😀`

/** What the agent should read for hook text, given the variables: omh's own reading of the text. */
export function expectedText(text: string, env: Readonly<Record<string, string>>): string {
  const parsed = parseHookText(text)
  if (!parsed.ok) throw new Error(parsed.problem)
  return parsed.pieces
    .map((p) => (p.kind === 'literal' ? p.text : p.fallback !== undefined ? env[p.name] || p.fallback : (env[p.name] ?? '')))
    .join('')
}

/** Arbitrary valid hook text: any characters, variables in every form, dollars written `$$`. */
export const hookTextArbitrary: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).map((s) => s.replaceAll('\0', '').replaceAll('$', '$$$$')) },
      { weight: 1, arbitrary: fc.constantFrom('$OMH_TOOL_FILE ', '${OMH_TOOL_COMMAND}', '${OMH_SESSION:-no session}', '$$', '"', "'", '`', '\\', '\n') },
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((parts) => parts.join(''))
  .filter((text) => text.trim() !== '' && parseHookText(text).ok)

/** A hook file's fields as a user writes them, every moment, action and narrowing a hooks document can hold. */
export const hookFileArbitrary = fc
  .record({
    on: fc.constantFrom('session-start', 'turn-end', 'before-tool', 'after-tool', 'waiting'),
    tools: fc.option(fc.uniqueArray(fc.constantFrom('edit', 'read', 'shell', 'search'), { minLength: 1 }), { nil: undefined }),
    when: fc.option(fc.string({ unit: 'grapheme', minLength: 1 }).filter((s) => s.trim() !== '' && !s.includes('\0')), { nil: undefined }),
    kind: fc.constantFrom('run', 'inject', 'refuse'),
    body: hookTextArbitrary,
  })
  .map(({ on, tools, when, kind, body }) => {
    const tool = on === 'before-tool' || on === 'after-tool'
    const action = kind === 'refuse' && on !== 'before-tool' ? 'inject' : kind
    const text = tool ? body : body.replaceAll(/\$\{?OMH_TOOL_\w+(:-[^}]*)?\}?/g, 'x')
    return { on, ...(tool && tools ? { tools } : {}), ...(when !== undefined ? { when: tool ? when : when.replaceAll('OMH_TOOL', 'X') } : {}), [action]: text }
  })

// Hooks read back without the file they came from: that is the catalogue's, not the document's.
export const hooksByName = (list: readonly unknown[]) =>
  [...(list as Hook[])].sort((a, b) => (a.name < b.name ? -1 : 1)).map((h) => ({ ...h, source: '' }))
