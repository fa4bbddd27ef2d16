import { describe, expect, it } from 'vitest'
import { serverValues, type McpServer, type RenderOutput } from '@omh/plugin-api'
import { renderInput, parseContext as kitParseContext, renderContext, servers, testRenderer } from '@omh/plugin-kit/testing'
import { bundledFormats } from '@omh/test-utils'
import plugin, { combineJson } from '../src/index.js'

const SUBSTITUTED = /\$\{[^}]*\}/
const literal = (s: McpServer) => serverValues(s).every(([, v]) => !SUBSTITUTED.test(v))
const hasCwd = (s: McpServer) => s.transport === 'stdio' && s.cwd !== undefined

const mcpInput = (format: string, xs: readonly McpServer[], path = '/work/servers', bareVariables = false) =>
  renderInput('mcp', format, xs, { binding: { path }, options: { bare_variables: bareVariables, key: 'mcpServers' } })
const parseContext = (format: string, env: Record<string, string> = {}) => kitParseContext('mcp', format, { binding: { path: '/work/servers' }, options: { bare_variables: false, key: 'mcpServers' }, env })

testRenderer(plugin, {
  ...(await bundledFormats()),
  golden: new URL('./golden', import.meta.url),
  roundTrips: [
    {
      format: 'mcp-json',
      capability: 'mcp',
      items: servers.map((xs) => xs.filter(literal)),
      dropped: (xs) => xs.filter(hasCwd).map((s) => s.name),
      numRuns: 300,
    },
  ],
})

describe('mcp-json', () => {
  it('refuses every value the harness would substitute, naming the server and field', () => {
    const server: McpServer = {
      name: 'web',
      transport: 'http',
      url: 'https://x/${PATH}',
      headers: { Authorization: 'Bearer ${TOKEN:-none}', Plain: 'ok' },
    }
    const out = plugin.render(mcpInput('mcp-json', [server]), renderContext) as RenderOutput
    expect(out.refused).toEqual([
      { capability: 'mcp', name: 'web', field: 'url', value: 'https://x/${PATH}', reason: 'h substitutes `${…}` in this file' },
      { capability: 'mcp', name: 'web', field: 'headers.Authorization', value: 'Bearer ${TOKEN:-none}', reason: 'h substitutes `${…}` in this file' },
    ])
  })

  it('with bare_variables, refuses a bare $VAR too, everywhere, and keeps a secret as ${NAME}', () => {
    const stdio: McpServer = { name: 'cli', transport: 'stdio', command: '$NODE', args: ['a$HOME.b', '$5', 'price: $$'], env: { KEY: '<secret API_KEY>', P: '${PATH}' } }
    const out = plugin.render(mcpInput('mcp-json', [stdio], '/work/servers', true), renderContext) as RenderOutput
    const reason = 'h substitutes `$…` in this file'
    expect(out.refused).toEqual([
      { capability: 'mcp', name: 'cli', field: 'command', value: '$NODE', reason },
      { capability: 'mcp', name: 'cli', field: 'args[0]', value: 'a$HOME.b', reason },
      { capability: 'mcp', name: 'cli', field: 'env.P', value: '${PATH}', reason },
    ])
    expect(JSON.parse((out.files[0] as { content: string }).content).mcpServers.cli.env.KEY).toBe('${API_KEY}')
    // Without the option only `${…}` is the harness's: a bare `$` is text.
    const plain = plugin.render(mcpInput('mcp-json', [stdio]), renderContext) as RenderOutput
    expect(plain.refused?.map((r) => r.field)).toEqual(['env.P'])
  })

  it('with key, writes the servers under that one top-level key (dots and all) and reads them back from it alone', () => {
    const stdio: McpServer = { name: 'cli', transport: 'stdio', command: 'node', args: ['s.js'], env: { KEY: '<secret API_KEY>' } }
    const input = renderInput('mcp', 'mcp-json', [stdio], { binding: { path: '/home/agent/.config/amp/settings.json' }, options: { bare_variables: false, key: 'amp.mcpServers' } })
    const out = plugin.render(input, renderContext) as RenderOutput
    const content = (out.files[0] as { content: string }).content
    expect(Object.keys(JSON.parse(content))).toEqual(['amp.mcpServers'])
    const at = { binding: { path: '/work/servers' }, options: { bare_variables: false, key: 'amp.mcpServers' } }
    expect(plugin.parse!([{ file: 'settings.json', content }], kitParseContext('mcp', 'mcp-json', at))).toEqual({ ok: true, items: { mcp: [stdio] }, left: [] })
    // A nested `amp` object is not the key: no servers there.
    const nested = JSON.stringify({ amp: { mcpServers: { cli: { command: 'node' } } } })
    expect(plugin.parse!([{ file: 'settings.json', content: nested }], kitParseContext('mcp', 'mcp-json', at))).toMatchObject({ ok: true, items: { mcp: [] } })
  })

  it('names ${VAR} in env and headers as <secret VAR>, resolves the rest from the host, and leaves a server naming an unset one', () => {
    const content = JSON.stringify({
      mcpServers: {
        a: { command: 'node', args: ['${ARG:-dflt}', '${SET}'], env: { K: 'x${SET}', D: '${UNSET:-d}' } },
        b: { type: 'http', url: 'https://h/${MISSING}' },
        h: { type: 'http', url: 'https://h', headers: { Authorization: 'Bearer ${TOKEN}' } },
        c: { type: 'ws', url: 'wss://h' },
      },
    })
    const parsed = plugin.parse!([{ file: 'f.json', content }], parseContext('mcp-json', { SET: 'v' }))
    expect(parsed).toEqual({
      ok: true,
      // The value of SET is read nowhere into env or headers: the import writes no secret into mcp.json.
      items: {
        mcp: [
          { name: 'a', transport: 'stdio', command: 'node', args: ['dflt', 'v'], env: { K: 'x<secret SET>', D: 'd' } },
          { name: 'h', transport: 'http', url: 'https://h', headers: { Authorization: 'Bearer <secret TOKEN>' } },
        ],
      },
      left: [
        { name: 'b', reason: '${MISSING} is not set here, so its value is unknown' },
        { name: 'c', reason: 'a WebSocket server; omh reaches servers over http or sse' },
      ],
    })
  })

  it('reports a parse failure with its file and line', () => {
    const parsed = plugin.parse!([{ file: 'f.json', content: '{\n  "mcpServers": {\n    "a": { "command": 3 }\n  }\n}\n' }], parseContext('mcp-json'))
    expect(parsed).toEqual({ ok: false, problems: [{ file: 'f.json', line: 3, column: 12, path: 'mcpServers.a.command', message: 'expected a string' }] })
    const broken = plugin.parse!([{ file: 'f.json', content: '{\n  "mcpServers": {,\n}' }], parseContext('mcp-json'))
    expect(broken.ok).toBe(false)
    expect(!broken.ok && broken.problems[0]).toMatchObject({ file: 'f.json', line: 2, column: 18 })
  })

  it('combines JSON documents with disjoint top-level keys and refuses an overlap', () => {
    expect(combineJson([{ binding: 'capabilities.mcp', content: '{"a":1}' }, { binding: 'capabilities.hooks', content: '{"b":2}' }])).toEqual({
      ok: true,
      content: '{\n  "a": 1,\n  "b": 2\n}\n',
    })
    expect(combineJson([{ binding: 'capabilities.mcp', content: '{"a":1}' }, { binding: 'capabilities.hooks', content: '{"a":2}' }])).toEqual({
      ok: false,
      reason: 'both set the top-level key "a" (capabilities.mcp, capabilities.hooks)',
    })
  })
})
