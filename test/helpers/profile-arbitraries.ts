import fc from 'fast-check'
import type { AdapterFacts, Binding, McpServer, ParseContext, RenderInput } from '@omh/plugin-api'

/** Text as users write it, and as they should not: any Unicode, control characters, quotes, backslashes. */
export const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ unit: 'binary-ascii', maxLength: 12 }), fc.constantFrom('"""', "'''", '\\', '\n', 'a"b', '#x', ''))

const key = text.filter((k) => k !== '__proto__')
const record = fc.dictionary(key, text, { maxKeys: 4 })

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

export const adapterFacts: AdapterFacts = { name: 'h', tools: {}, paths: {} }

export function mcpInput(format: string, items: readonly McpServer[], path = '/work/servers'): RenderInput<undefined> {
  const binding: Binding = { path, also: [], render: format }
  return { capability: 'mcp', items, binding, adapter: adapterFacts, options: undefined } as RenderInput<undefined>
}

export function parseContext(format: string, env: Readonly<Record<string, string | undefined>> = {}): ParseContext {
  return { capability: 'mcp', binding: { path: '/work/servers', also: [], render: format }, adapter: adapterFacts, env }
}

export const renderContext = { guestHome: '/home/agent', guestWork: '/work' }
