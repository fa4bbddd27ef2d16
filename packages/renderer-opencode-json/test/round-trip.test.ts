import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { serverValues, type McpServer, type RenderOutput, type StagedFile } from '@omh/plugin-api'
import { mcpInput, parseContext, renderContext, servers } from '../../../test/helpers/profile-arbitraries.js'
import plugin from '../src/index.js'

const SUBSTITUTED = /\{(env|file):[^}]*\}/
const literal = (s: McpServer) => serverValues(s).every(([, v]) => !SUBSTITUTED.test(v))
const hasCwd = (s: McpServer) => s.transport === 'stdio' && s.cwd !== undefined
// OpenCode has no key for a transport: it picks one itself, so a remote server reads back as http.
const asRead = (s: McpServer): McpServer => (s.transport === 'sse' ? { ...s, transport: 'http' } : s)
const bytes = (file: StagedFile) => Buffer.from(file.content as string).toString('utf8')

describe('opencode-json', () => {
  it('reads back exactly what it renders, a remote server as http', () => {
    fc.assert(
      fc.property(servers.map((xs) => xs.filter(literal)), (xs) => {
        const out = plugin.render(mcpInput('opencode-json', xs), renderContext) as RenderOutput
        expect(out.refused ?? []).toEqual([])
        expect(out.dropped.map((d) => d.name)).toEqual(xs.filter(hasCwd).map((s) => s.name))
        const kept = xs.filter((s) => !hasCwd(s))
        const file = out.files[0] as StagedFile | undefined
        if (!kept.length) {
          expect(file).toBeUndefined()
          return
        }
        const parsed = plugin.parse!([{ file: 'opencode.json', content: bytes(file!) }], parseContext('opencode-json'))
        expect(parsed).toEqual({ ok: true, items: { mcp: kept.map(asRead) }, left: [] })
      }),
      { numRuns: 300 },
    )
  })

  it('refuses {env:…} and {file:…}, naming server and field', () => {
    const server: McpServer = { name: 's', transport: 'stdio', command: 'node', args: ['{file:/etc/passwd}'], env: { K: '{env:HOME}' } }
    const out = plugin.render(mcpInput('opencode-json', [server]), renderContext) as RenderOutput
    expect(out.refused).toEqual([
      { capability: 'mcp', name: 's', field: 'args[0]', value: '{file:/etc/passwd}', reason: 'h substitutes `{file:…}` in its config' },
      { capability: 'mcp', name: 's', field: 'env.K', value: '{env:HOME}', reason: 'h substitutes `{env:…}` in its config' },
    ])
  })

  it('resolves {env:VAR} from the host when importing, and leaves a server that reads a file', () => {
    const content = JSON.stringify({
      mcp: {
        a: { type: 'local', command: ['node', '{env:ARG}'], environment: { K: 'v' }, timeout: 5000 },
        b: { type: 'remote', url: 'https://h', headers: { A: '{file:~/.token}' } },
      },
    })
    expect(plugin.parse!([{ file: 'o.json', content }], parseContext('opencode-json', { ARG: 'x' }))).toEqual({
      ok: true,
      items: { mcp: [{ name: 'a', transport: 'stdio', command: 'node', args: ['x'], env: { K: 'v' } }] },
      left: [
        { name: 'a.timeout', reason: 'omh keeps no such field' },
        { name: 'b', reason: '{file:~/.token} reads a file at launch; omh keeps literal values' },
      ],
    })
  })
})
