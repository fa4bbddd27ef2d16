import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { McpServer, RenderOutput, StagedFile } from '@omh/plugin-api'
import { renderInput, parseContext as kitParseContext, renderContext, servers, testRenderer } from '@omh/plugin-kit/testing'
import { bundledFormats } from '@omh/test-utils'
import plugin, { combineToml } from '../src/index.js'


const mcpInput = (format: string, xs: readonly McpServer[], path = '/work/servers') => renderInput('mcp', format, xs, { binding: { path } })
const parseContext = (format: string, env: Record<string, string> = {}) => kitParseContext('mcp', format, { binding: { path: '/work/servers' }, env })

const bytes = (file: StagedFile) => Buffer.from(file.content as string).toString('utf8')

testRenderer(plugin, {
  ...(await bundledFormats()),
  golden: new URL('./golden', import.meta.url),
  roundTrips: [
    {
      format: 'codex-toml',
      capability: 'mcp',
      items: servers,
      // Bearer tokens travel through the container environment, which the kit hands back to parse.
      dropped: (xs) => xs.filter((s) => s.transport === 'sse').map((s) => s.name),
      numRuns: 300,
    },
  ],
})

describe('codex-toml', () => {
  it('writes only the keys Codex accepts under --strict-config', () => {
    fc.assert(
      fc.property(servers, (xs) => {
        const out = plugin.render(mcpInput('codex-toml', xs), renderContext) as RenderOutput
        const file = out.files[0] as StagedFile | undefined
        if (file) expect(bytes(file)).not.toMatch(/^\s*(type|transport|bearer_token) =/m)
      }),
      { numRuns: 100 },
    )
  })

  it('keeps a bearer token out of the file', () => {
    const server: McpServer = { name: 'gh-mcp', transport: 'http', url: 'https://h/mcp', headers: { Authorization: 'Bearer s3cret', X: 'v' } }
    const out = plugin.render(mcpInput('codex-toml', [server], '/home/agent/.codex/config.toml'), renderContext) as RenderOutput
    expect((out.files[0] as StagedFile).content).toBe(
      '[mcp_servers.gh-mcp]\nurl = "https://h/mcp"\nbearer_token_env_var = "OMH_MCP_GH_MCP_TOKEN"\n\n[mcp_servers.gh-mcp.http_headers]\nX = "v"\n',
    )
    expect(out.env).toEqual({ OMH_MCP_GH_MCP_TOKEN: 's3cret' })
  })

  it('carries a secret in any other header through env_http_headers, never as text in the file', () => {
    const server: McpServer = { name: 'sentry', transport: 'http', url: 'https://h/mcp', headers: { 'X-Api-Key': '<secret SENTRY>', 'X-Org': 'Org <secret ORG>', X: 'v' } }
    const out = plugin.render(mcpInput('codex-toml', [server], '/home/agent/.codex/config.toml'), renderContext) as RenderOutput
    const content = String((out.files[0] as StagedFile).content)
    expect(content).not.toContain('<secret')
    expect(content).toBe(
      '[mcp_servers.sentry]\nurl = "https://h/mcp"\n\n[mcp_servers.sentry.http_headers]\nX = "v"\n\n[mcp_servers.sentry.env_http_headers]\nX-Api-Key = "OMH_MCP_SENTRY_X_API_KEY"\nX-Org = "OMH_MCP_SENTRY_X_ORG"\n',
    )
    expect(out.env).toEqual({ OMH_MCP_SENTRY_X_API_KEY: '<secret SENTRY>', OMH_MCP_SENTRY_X_ORG: 'Org <secret ORG>' })
    // Read back, the file names the variables: what omh put there, never a value.
    const back = plugin.parse!([{ file: 'c.toml', content }], parseContext('codex-toml', {}))
    expect(back.ok && back.items.mcp?.[0]).toMatchObject({ headers: { X: 'v', 'X-Api-Key': '<secret OMH_MCP_SENTRY_X_API_KEY>' } })
  })

  it('names the variables of env_vars, env_http_headers and bearer_token_env_var as <secret VAR>, never their values', () => {
    const content = [
      '[mcp_servers.a]',
      'command = "node"',
      'env_vars = ["FOO"]',
      'startup_timeout_sec = 20',
      '[mcp_servers.b]',
      'url = "https://h"',
      'bearer_token_env_var = "NOPE"',
      '[mcp_servers.c]',
      'url = "https://c"',
      'env_http_headers = { X = "FOO" }',
      '[mcp_servers.d]',
      'command = "off"',
      'enabled = false',
      '',
    ].join('\n')
    expect(plugin.parse!([{ file: 'c.toml', content }], parseContext('codex-toml', { FOO: 'bar' }))).toEqual({
      ok: true,
      items: {
        mcp: [
          { name: 'a', transport: 'stdio', command: 'node', args: [], env: { FOO: '<secret FOO>' } },
          { name: 'b', transport: 'http', url: 'https://h', headers: { Authorization: 'Bearer <secret NOPE>' } },
          { name: 'c', transport: 'http', url: 'https://c', headers: { X: '<secret FOO>' } },
        ],
      },
      left: [
        { name: 'a.startup_timeout_sec', reason: 'omh keeps no such field' },
        { name: 'd', reason: 'disabled in this file (`enabled = false`)' },
      ],
    })
  })

  it('reports bad TOML and bad servers with file and line', () => {
    expect(plugin.parse!([{ file: 'c.toml', content: '[mcp_servers.a\n' }], parseContext('codex-toml'))).toMatchObject({
      ok: false,
      problems: [{ file: 'c.toml', line: 1 }],
    })
    expect(plugin.parse!([{ file: 'c.toml', content: 'x = 1\n[mcp_servers.a]\ncwd = "/"\n' }], parseContext('codex-toml'))).toEqual({
      ok: false,
      problems: [{ file: 'c.toml', line: 2, column: 1, path: 'mcp_servers.a', message: 'has neither `command` nor `url`' }],
    })
  })

  it('combines TOML documents with disjoint top-level keys and refuses an overlap, naming it', () => {
    const mcp = { binding: 'capabilities.mcp', content: '[mcp_servers.a]\ncommand = "x"\n' }
    const hooks = { binding: 'capabilities.hooks', content: '[hooks.state."/h/hooks.json:session_start:0:0"]\ntrusted_hash = "sha256:1"\n' }
    expect(combineToml([mcp, hooks])).toEqual({
      ok: true,
      content: '[mcp_servers.a]\ncommand = "x"\n\n[hooks.state."/h/hooks.json:session_start:0:0"]\ntrusted_hash = "sha256:1"\n',
    })
    expect(combineToml([mcp, { binding: 'capabilities.hooks', content: 'notify = ["x"]\n[mcp_servers.b]\ncommand = "y"\n' }])).toEqual({
      ok: false,
      reason: 'both set the top-level key "mcp_servers" (capabilities.mcp, capabilities.hooks)',
    })
  })
})
