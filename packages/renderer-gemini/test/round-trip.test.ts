import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { serverValues, type McpServer, type RenderOutput, type StagedFile } from '@omh/plugin-api'
import { parseContext as kitParseContext, renderContext, renderInput, servers, testRenderer } from '@omh/plugin-kit/testing'
import plugin from '../src/index.js'
import { gemini, hooksBinding } from './gemini-facts.js'

const EXPANDED = /\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)/
const literal = (s: McpServer) => serverValues(s).every(([, v]) => !EXPANDED.test(v))

const SETTINGS = '/home/agent/.gemini/settings.json'
const mcpInput = (xs: readonly McpServer[]) => renderInput('mcp', 'gemini-settings', xs, { binding: { path: SETTINGS }, adapter: gemini })
const parseContext = (env: Record<string, string> = {}) => kitParseContext('mcp', 'gemini-settings', { binding: { path: SETTINGS }, adapter: gemini, env })
const parse = (content: string, env: Record<string, string> = {}) => plugin.parse!([{ file: 'settings.json', content }], parseContext(env))

testRenderer(plugin, {
  adapter: gemini,
  bindings: { 'gemini-settings': hooksBinding },
  golden: new URL('./golden', import.meta.url),
  roundTrips: [
    {
      format: 'gemini-settings',
      capability: 'mcp',
      items: servers.map((xs) => xs.filter(literal)),
      // Gemini has every field omh keeps, `cwd` included.
      dropped: () => [],
      numRuns: 300,
    },
    {
      // A reader that takes a remote server's transport from its key (`httpUrl` or `url`).
      format: 'gemini-settings',
      capability: 'mcp',
      items: servers.map((xs) => xs.filter(literal)),
      options: { remote: 'httpUrl' },
      dropped: () => [],
      numRuns: 200,
    },
  ],
})

describe('gemini-settings: MCP servers', () => {
  it('refuses every value Gemini would expand, naming the server and field', () => {
    const server: McpServer = { name: 'web', transport: 'http', url: 'https://x/${PATH}', headers: { Authorization: 'Bearer $TOKEN', Plain: 'costs $5' } }
    const out = plugin.render(mcpInput([server]), renderContext) as RenderOutput
    expect(out.refused).toEqual([
      { capability: 'mcp', name: 'web', field: 'url', value: 'https://x/${PATH}', reason: 'gemini expands `$VAR` in settings.json' },
      { capability: 'mcp', name: 'web', field: 'headers.Authorization', value: 'Bearer $TOKEN', reason: 'gemini expands `$VAR` in settings.json' },
    ])
  })

  it('writes a secret as ${NAME} for Gemini to fill from its environment, carries it in env, and reads it back as <secret NAME>', () => {
    const items: McpServer[] = [
      { name: 'local', transport: 'stdio', command: 'node', args: ['s.js'], env: { API_KEY: '<secret API_KEY>', MODE: 'quiet' } },
      { name: 'remote', transport: 'http', url: 'https://x.test/mcp', headers: { Authorization: 'Bearer <secret TOKEN>' } },
    ]
    const out = plugin.render(mcpInput(items), renderContext) as RenderOutput
    const content = (out.files[0] as StagedFile).content as string
    expect(JSON.parse(content).mcpServers).toEqual({
      local: { command: 'node', args: ['s.js'], env: { API_KEY: '${API_KEY}', MODE: 'quiet' } },
      remote: { url: 'https://x.test/mcp', type: 'http', headers: { Authorization: 'Bearer ${TOKEN}' } },
    })
    expect(out.refused).toEqual([])
    expect(out.env).toEqual({ API_KEY: '<secret API_KEY>', TOKEN: '<secret TOKEN>' })
    expect(content).not.toContain('<secret')
    expect(parse(content, { TOKEN: 'the-value', API_KEY: 'the-key' })).toEqual({ ok: true, items: { mcp: items }, left: [] })
  })

  it('reads each transport as Gemini picks it: httpUrl, then url (as its type says, else streamable http), then command', () => {
    const content = JSON.stringify({
      mcpServers: {
        h: { httpUrl: 'https://h/mcp', url: 'https://ignored/sse' },
        s: { url: 'https://s/sse', type: 'sse', headers: { X: 'y' } },
        t: { url: 'https://t/mcp', type: 'http' },
        c: { command: 'node', cwd: '/work/tools' },
        w: { tcp: 'ws://w' },
      },
    })
    expect(parse(content)).toEqual({
      ok: true,
      items: {
        mcp: [
          { name: 'h', transport: 'http', url: 'https://h/mcp', headers: {} },
          { name: 's', transport: 'sse', url: 'https://s/sse', headers: { X: 'y' } },
          { name: 't', transport: 'http', url: 'https://t/mcp', headers: {} },
          { name: 'c', transport: 'stdio', command: 'node', args: [], env: {}, cwd: '/work/tools' },
        ],
      },
      left: [
        { name: 'h.url', reason: 'omh keeps no such field' },
        { name: 'w', reason: 'a WebSocket server (`tcp`); omh reaches servers over stdio, http or sse' },
      ],
    })
  })

  it('names $VAR and ${VAR} in env and headers as <secret VAR>, resolves them elsewhere, and leaves what it cannot keep, saying why', () => {
    const content = JSON.stringify({
      mcpServers: {
        a: { command: '$HOME/bin/srv', args: ['${ARG}'], env: { K: 'x$SET', D: '${SET}' }, timeout: 5000, trust: true },
        b: { httpUrl: 'https://h/${MISSING}', headers: { Authorization: 'Bearer ${TOKEN}' } },
        c: { url: 'https://c', headers: { A: '${X:-d}' } },
      },
    })
    // The value of SET is read nowhere into env or headers: the import writes no secret into mcp.json.
    expect(parse(content, { HOME: '/home/u', ARG: 'v', SET: 'never-read' })).toEqual({
      ok: true,
      items: { mcp: [{ name: 'a', transport: 'stdio', command: '/home/u/bin/srv', args: ['v'], env: { K: 'x<secret SET>', D: '<secret SET>' } }] },
      left: [
        { name: 'a.timeout', reason: 'omh keeps no such field' },
        { name: 'a.trust', reason: 'omh keeps no such field' },
        { name: 'b', reason: '${MISSING} is not set here, so its value is unknown' },
        { name: 'c', reason: '${X:-d} is not set here, so its value is unknown' },
      ],
    })
  })

  it('reads settings.json with comments, as Gemini does, and reports a problem with its file, line and column', () => {
    const commented = '{\n  // mine\n  "theme": "x", /* and "this" */\n  "mcpServers": { "a": { "command": "node" } }\n}\n'
    expect(parse(commented)).toEqual({ ok: true, items: { mcp: [{ name: 'a', transport: 'stdio', command: 'node', args: [], env: {} }] }, left: [] })
    expect(parse('{\n  // a comment\n  "mcpServers": {\n    "a": { "command": "node", "args": "x" }\n  }\n}\n')).toEqual({
      ok: false,
      problems: [{ file: 'settings.json', line: 4, column: 31, path: 'mcpServers.a.args', message: 'expected a list of strings' }],
    })
    expect(parse('{ "mcpServers": { "a": { "url": "https://a", "type": "ws" } } }')).toMatchObject({ ok: false, problems: [{ path: 'mcpServers.a.type' }] })
    expect(parse('{ "mcpServers": { "a": { "cwd": "/w" } } }')).toMatchObject({ ok: false, problems: [{ message: 'has none of `httpUrl`, `url` and `command`' }] })
    const broken = parse('{\n  "mcpServers": {,\n}')
    expect(!broken.ok && broken.problems[0]).toMatchObject({ file: 'settings.json', line: 2, column: 18 })
  })

  it('with remote = "httpUrl", names the transport by the key, reads a bare url as SSE, and leaves a type beside it', () => {
    const options = { remote: 'httpUrl' as const }
    const items: McpServer[] = [
      { name: 'docs', transport: 'http', url: 'https://x.test/mcp', headers: { Authorization: 'Bearer <secret TOKEN>' } },
      { name: 'events', transport: 'sse', url: 'https://x.test/sse', headers: {} },
    ]
    const out = plugin.render({ ...mcpInput(items), options }, renderContext) as RenderOutput
    const content = (out.files[0] as StagedFile).content as string
    expect(JSON.parse(content).mcpServers).toEqual({
      docs: { httpUrl: 'https://x.test/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
      events: { url: 'https://x.test/sse' },
    })
    const read = (text: string) => plugin.parse!([{ file: 'settings.json', content: text }], kitParseContext('mcp', 'gemini-settings', { adapter: gemini, options, env: { TOKEN: 't' } }))
    expect(read(content)).toEqual({ ok: true, items: { mcp: items }, left: [] })
    expect(read(JSON.stringify({ mcpServers: { t: { url: 'https://t/mcp', type: 'http' } } }))).toEqual({
      ok: true,
      items: { mcp: [{ name: 't', transport: 'sse', url: 'https://t/mcp', headers: {} }] },
      left: [{ name: 't.type', reason: 'omh keeps no such field' }],
    })
  })

  it('writes the settings an adapter gives beside its own, and refuses one of the keys omh writes', () => {
    const settings = { memory: { enableManagedAutoMemory: false }, general: { enableAutoUpdate: false } }
    const out = plugin.render({ ...mcpInput([]), options: { settings } }, renderContext) as RenderOutput
    expect(JSON.parse((out.files[0] as StagedFile).content as string)).toEqual({
      ...settings,
      security: { folderTrust: { enabled: false } },
      privacy: { usageStatisticsEnabled: false },
      mcpServers: {},
    })
    expect(z.safeParse(plugin.options!, { settings: { privacy: {} } }).success).toBe(false)
    expect(z.safeParse(plugin.options!, { remote: 'url' }).success).toBe(false)
  })

  it('reads a settings.json without servers as none, and reads no other class back', () => {
    expect(parse('{ "hooks": {} }')).toEqual({ ok: true, items: { mcp: [] }, left: [] })
    const context = kitParseContext('commands', 'gemini-commands', { adapter: gemini })
    expect(plugin.parse!([{ file: '/c/x.toml', content: 'prompt = "x"' }], context)).toEqual({
      ok: false,
      problems: [{ file: '/c/x.toml', message: 'omh reads only MCP servers back from gemini-settings, not commands from gemini-commands' }],
    })
  })
})
