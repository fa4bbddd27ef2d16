import { describe, expect, it } from 'vitest'
import type { ProfileItems } from '@omh/plugin-api'
import { REDACTED, redactArgs, redactPair, redactRefused, redactServer, redactUrl } from './redact.js'

describe('redaction', () => {
  it('hides what follows a flag named like a secret, and keeps what shows what runs', () => {
    expect(redactArgs(['-y', '@modelcontextprotocol/server-filesystem', '/work/docs'])).toEqual(['-y', '@modelcontextprotocol/server-filesystem', '/work/docs'])
    expect(redactArgs(['--token', 't', '--api-key=k', '--client-secret', 's', '--password', 'p', '-k', 'x', '--verbose', '--port', '8080'])).toEqual([
      '--token',
      '•••',
      '--api-key=•••',
      '--client-secret',
      '•••',
      '--password',
      '•••',
      '-k',
      'x',
      '--verbose',
      '--port',
      '8080',
    ])
    // A flag after a secret-named flag is a flag, not its value.
    expect(redactArgs(['--auth', '--debug'])).toEqual(['--auth', '--debug'])
  })

  it('hides values assigned to secret names, bearer tokens and words shaped like keys', () => {
    expect(redactArgs(['GITHUB_TOKEN=abc', 'MODE=fast', 'Authorization: Bearer x', 'Bearer abc', 'Basic dXNlcjpwYXNz'])).toEqual([
      'GITHUB_TOKEN=•••',
      'MODE=fast',
      'Authorization: •••',
      'Bearer •••',
      'Basic •••',
    ])
    expect(redactArgs(['sk-proj-abc', 'ghp_abc123', 'glpat-xyz', 'xoxb-1-2', 'AKIAABCDEFGHIJKLMNOP', 'eyJhbGciOi.eyJzdWIi.sig'])).toEqual(Array(6).fill('•••'))
    expect(redactArgs(['Zk8sQ2pLm4Nx7Rt1Vb9W', 'd41d8cd98f00b204e9800998ecf8427e'])).toEqual(['•••', '•••'])
    // Long names without the mix of a generated key stay.
    expect(redactArgs(['server-filesystem-v2', 'my_project_directory_2024', 'skip-the-first-20-lines'])).toEqual([
      'server-filesystem-v2',
      'my_project_directory_2024',
      'skip-the-first-20-lines',
    ])
  })

  it('hides passwords, query values and token-shaped path segments of URLs, as written', () => {
    expect(redactUrl('https://mcp.example/v1/sse')).toBe('https://mcp.example/v1/sse')
    expect(redactUrl('https://me:pw@h.example:8443/p?token=t&region=eu#top')).toBe('https://me:•••@h.example:8443/p?token=•••&region=•••#top')
    expect(redactUrl('https://ghp_abc123@github.example/x')).toBe('https://•••@github.example/x')
    expect(redactUrl('https://actions.example/mcp/sk-ak-Zk8sQ2pLm4/sse')).toBe('https://actions.example/mcp/•••/sse')
    expect(redactUrl('http://localhost:3000/mcp?debug')).toBe('http://localhost:3000/mcp?debug')
    expect(redactArgs(['--endpoint=https://h.example/?key=k', 'https://h.example/?sig=s'])).toEqual(['--endpoint=https://h.example/?key=•••', 'https://h.example/?sig=•••'])
  })

  it('hides a short value after -p, a password to many clients, but keeps a port there', () => {
    expect(redactArgs(['mysql', '-u', 'root', '-p', 'hunter2'])).toEqual(['mysql', '-u', 'root', '-p', REDACTED])
    expect(redactArgs(['serve', '-p', '8080'])).toEqual(['serve', '-p', '8080'])
  })

  it('hides the values of a URL fragment, where implicit grants put tokens', () => {
    expect(redactUrl('https://app.example.com/cb#access_token=abc123&state=x')).toBe(`https://app.example.com/cb#access_token=${REDACTED}&state=${REDACTED}`)
    expect(redactUrl('https://example.com/docs#install')).toBe('https://example.com/docs#install')
  })

  it('keeps the name of a malformed NAME=VALUE and hides the rest', () => {
    expect(redactPair('Authorization: Bearer abc')).toBe('Authorization: •••')
    expect(redactPair('K secret')).toBe('K •••')
    expect(redactPair('sk-abc')).toBe('•••')
    expect(redactPair('=abc')).toBe('•••')
  })

  it('hides every env and header value of a server, keeping the names', () => {
    expect(redactServer({ name: 'a', transport: 'stdio', command: 'c', args: ['--token', 't'], env: { K: 'v' } })).toEqual({
      name: 'a',
      transport: 'stdio',
      command: 'c',
      args: ['--token', '•••'],
      env: { K: '•••' },
    })
    expect(redactServer({ name: 'b', transport: 'http', url: 'https://h/?k=v', headers: { Authorization: 'Bearer t' } })).toEqual({
      name: 'b',
      transport: 'http',
      url: 'https://h/?k=•••',
      headers: { Authorization: '•••' },
    })
  })

  it('shows a refused value of a server as the server is shown', () => {
    const profile = { mcp: [{ name: 'a', transport: 'stdio', command: 'c', args: ['--token', 'abc${X}', '${HOME}/docs'], env: { K: 'v${X}' } }] } as unknown as ProfileItems
    const refused = (field: string, value: string) => redactRefused({ capability: 'mcp', name: 'a', field, value, reason: 'r' }, profile).value
    expect(refused('args[1]', 'abc${X}')).toBe('•••')
    expect(refused('args[2]', '${HOME}/docs')).toBe('${HOME}/docs')
    expect(refused('env.K', 'v${X}')).toBe('•••')
    expect(refused('url', 'elsewhere')).toBe('•••')
  })
})
