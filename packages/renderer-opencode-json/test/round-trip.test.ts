import { describe, expect, it } from 'vitest'
import { serverValues, type McpServer, type RenderOutput } from '@omh/plugin-api'
import { renderInput, parseContext as kitParseContext, renderContext, servers, testRenderer } from '@omh/plugin-kit/testing'
import { bundledFormats } from '@omh/test-utils'
import plugin from '../src/index.js'

const SUBSTITUTED = /\{(env|file):[^}]*\}/
const literal = (s: McpServer) => serverValues(s).every(([, v]) => !SUBSTITUTED.test(v))
const hasCwd = (s: McpServer) => s.transport === 'stdio' && s.cwd !== undefined
// OpenCode has no key for a transport: it picks one itself, so a remote server reads back as http.
const asRead = (s: McpServer): McpServer => (s.transport === 'sse' ? { ...s, transport: 'http' } : s)

const mcpInput = (format: string, xs: readonly McpServer[], path = '/work/servers') => renderInput('mcp', format, xs, { binding: { path } })
const parseContext = (format: string, env: Record<string, string> = {}) => kitParseContext('mcp', format, { binding: { path: '/work/servers' }, env })

testRenderer(plugin, {
  ...(await bundledFormats()),
  golden: new URL('./golden', import.meta.url),
  roundTrips: [
    {
      format: 'opencode-json',
      capability: 'mcp',
      items: servers.map((xs) => xs.filter(literal)),
      dropped: (xs) => xs.filter(hasCwd).map((s) => s.name),
      asRead,
      numRuns: 300,
    },
  ],
})

describe('opencode-json', () => {
  it('refuses {env:…} and {file:…}, naming server and field', () => {
    const server: McpServer = { name: 's', transport: 'stdio', command: 'node', args: ['{file:/etc/passwd}'], env: { K: '{env:HOME}' } }
    const out = plugin.render(mcpInput('opencode-json', [server]), renderContext) as RenderOutput
    expect(out.refused).toEqual([
      { capability: 'mcp', name: 's', field: 'args[0]', value: '{file:/etc/passwd}', reason: 'h substitutes `{file:…}` in its config' },
      { capability: 'mcp', name: 's', field: 'env.K', value: '{env:HOME}', reason: 'h substitutes `{env:…}` in its config' },
    ])
  })

  it('names {env:VAR} in environment and headers as <secret VAR>, resolves it elsewhere, and leaves a server that reads a file', () => {
    const content = JSON.stringify({
      mcp: {
        a: { type: 'local', command: ['node', '{env:ARG}'], environment: { K: 'v', S: '{env:ARG}' }, timeout: 5000 },
        b: { type: 'remote', url: 'https://h', headers: { A: '{file:~/.token}' } },
        c: { type: 'remote', url: 'https://c', headers: { Authorization: 'Bearer {env:TOKEN}' } },
      },
    })
    // In environment and headers a variable is named, never copied, whether set here or not.
    expect(plugin.parse!([{ file: 'o.json', content }], parseContext('opencode-json', { ARG: 'x' }))).toEqual({
      ok: true,
      items: {
        mcp: [
          { name: 'a', transport: 'stdio', command: 'node', args: ['x'], env: { K: 'v', S: '<secret ARG>' } },
          { name: 'c', transport: 'http', url: 'https://c', headers: { Authorization: 'Bearer <secret TOKEN>' } },
        ],
      },
      left: [
        { name: 'a.timeout', reason: 'omh keeps no such field' },
        { name: 'b', reason: '{file:~/.token} reads a file at launch; omh keeps literal values' },
      ],
    })
  })
})
