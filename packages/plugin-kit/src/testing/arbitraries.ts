import fc from 'fast-check'
import {
  CAPABILITY_CLASSES,
  GUEST_HOME,
  GUEST_WORK,
  TOOL_WORDS,
  emptyProfile,
  type AdapterFacts,
  type Binding,
  type CapabilityClass,
  type ItemOf,
  type McpServer,
  type ParseContext,
  type ProfileItems,
  type RenderContext,
  type RenderInput,
} from '@omh/plugin-api'

/** Text as users write it, and as they should not: any Unicode, control characters, quotes, backslashes. */
export const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ unit: 'binary-ascii', maxLength: 12 }), fc.constantFrom('"""', "'''", '\\', '\n', 'a"b', '#x', ''))

const key = text.filter((k) => k !== '__proto__')
const record = fc.dictionary(key, text, { maxKeys: 4 })

/** A server name as omh's catalogue accepts it. */
export const serverName = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,12}$/).filter((n) => !/^\d+$/.test(n))

export const stdioServer: fc.Arbitrary<McpServer> = fc.record(
  {
    name: serverName,
    transport: fc.constant('stdio' as const),
    command: text.filter((c) => c.length > 0),
    args: fc.array(text, { maxLength: 4 }),
    env: record,
    cwd: text.filter((c) => c.length > 0),
  },
  { requiredKeys: ['name', 'transport', 'command', 'args', 'env'] },
)

export const remoteServer: fc.Arbitrary<McpServer> = fc.record({
  name: serverName,
  transport: fc.constantFrom('http' as const, 'sse' as const),
  url: fc.tuple(fc.constantFrom('https://', 'http://'), text).map(([scheme, rest]) => scheme + rest),
  headers: fc.oneof(
    record,
    fc.tuple(record, text.filter((t) => t.length > 0)).map(([r, token]) => ({ ...r, Authorization: `Bearer ${token}` })),
  ),
})

/** Every shape the canonical model has: stdio with and without `cwd`, remote over http and sse, with and without a bearer token. */
export const servers = fc.uniqueArray(fc.oneof(stdioServer, remoteServer), { selector: (s) => s.name, maxLength: 6 })

/** A harness that spells every tool word as itself. */
export const adapterFacts: AdapterFacts = { name: 'h', tools: Object.fromEntries(TOOL_WORDS.map((w) => [w, w])), paths: {} }

/** Where the kernel says the guest's home and working directory are. */
export const renderContext: RenderContext = { guestHome: GUEST_HOME, guestWork: GUEST_WORK }

/** What a renderer receives for one binding, as the kernel builds it. */
export function renderInput<C extends CapabilityClass, O = undefined>(
  capability: C,
  format: string,
  items: readonly ItemOf<C>[],
  at: { binding?: Partial<Binding>; adapter?: AdapterFacts; options?: O; profile?: Partial<ProfileItems> } = {},
): RenderInput<O> {
  const binding: Binding = { path: `${GUEST_HOME}/.${format}`, also: [], render: format, ...at.binding }
  return {
    capability,
    items,
    binding,
    adapter: at.adapter ?? adapterFacts,
    options: at.options,
    profile: { ...emptyProfile(), ...at.profile, [capability]: items },
  } as RenderInput<O>
}

/** What a parser receives beside the documents. */
export function parseContext<O = undefined>(
  capability: CapabilityClass,
  format: string,
  at: { binding?: Partial<Binding>; adapter?: AdapterFacts; options?: O; env?: Readonly<Record<string, string | undefined>> } = {},
): ParseContext<O> {
  return {
    capability,
    binding: { path: `${GUEST_HOME}/.${format}`, also: [], render: format, ...at.binding },
    adapter: at.adapter ?? adapterFacts,
    options: at.options as O,
    env: at.env ?? {},
  }
}

/**
 * A small profile with items of every class, awkward where it is cheap to
 * be: the contract checks render it through every format and class a
 * renderer declares.
 */
export const sampleProfile: ProfileItems = {
  rules: [
    { name: 'style', origin: 'catalogue: rules/style.md', source: '/home/u/.omh/rules/style.md', text: '# Style\n\nTabs, not spaces — "always".\n' },
    { name: 'AGENTS.md', origin: 'project: AGENTS.md', source: '/repo/AGENTS.md', text: 'Run `npm test` before $HOME. ✓\n' },
  ],
  skills: [{ name: 'changelog', description: 'Write a changelog entry.', source: '/home/u/.omh/skills/changelog' }],
  mcp: [
    { name: 'fs', transport: 'stdio', command: 'npx', args: ['-y', '@x/fs', 'it\'s "here"'], env: { LEVEL: '2' } },
    { name: 'docs', transport: 'http', url: 'https://docs.example/mcp', headers: { Authorization: 'Bearer t0k3n' } },
    { name: 'events', transport: 'sse', url: 'https://events.example/sse', headers: {} },
  ],
  commands: [
    { name: 'review', description: 'Review the diff.', source: '/home/u/.omh/commands/review.md', frontmatter: { 'argument-hint': '[file]' }, body: 'Review $ARGUMENTS.\n' },
  ],
  subagents: [
    { name: 'reviewer', description: 'Reads code, edits nothing.', tools: ['read', 'search'], model: 'sonnet', source: '/home/u/.omh/subagents/reviewer.md', body: 'You review.\n' },
    { name: 'helper', description: 'Anything.', source: '/home/u/.omh/subagents/helper.md', body: 'You help.\n' },
  ],
  hooks: [
    { name: 'orient', on: 'session-start', action: { kind: 'inject', text: 'Read AGENTS.md first.' }, fields: [], source: '/home/u/.omh/hooks/orient.json' },
    { name: 'no-force', on: 'before-tool', tools: ['shell'], when: 'printf %s "$OMH_TOOL_COMMAND" | grep -q -- --force', action: { kind: 'refuse', text: 'No force-push.' }, fields: ['tool-command'], source: '/home/u/.omh/hooks/no-force.json' },
    { name: 'fmt', on: 'after-tool', tools: ['edit'], action: { kind: 'run', command: 'npm run fmt -- "$OMH_TOOL_FILE"' }, fields: ['tool-file'], source: '/home/u/.omh/hooks/fmt.json' },
    { name: 'test', on: 'turn-end', action: { kind: 'run', command: 'npm test' }, fields: [], source: '/home/u/.omh/hooks/test.json' },
  ],
}

/** The capability classes, in the kernel's order. */
export const classes: readonly CapabilityClass[] = CAPABILITY_CLASSES
