import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { testdir } from '@omh/test-utils'
import { readMcpFile } from './mcp-file.js'

describe('mcp.json secret references', () => {
  it('keeps well-formed <secret NAME> references, alone or inside a value', async () => {
    const dir = testdir({ 'mcp.json': JSON.stringify({ mcpServers: { s: { url: 'https://x.example/mcp', headers: { Authorization: 'Bearer <secret TOKEN>', 'X-Two': '<secret A_1><secret B>' } } } }) })
    const read = await readMcpFile(path.join(dir, 'mcp.json'))
    expect(read.problems).toEqual([])
    expect(read.servers[0]).toMatchObject({ headers: { Authorization: 'Bearer <secret TOKEN>' } })
  })

  it('names file, line and key of a malformed reference, and takes no server from it', async () => {
    const text = ['{', '  "mcpServers": {', '    "s": {', '      "command": "srv",', '      "env": { "OK": "<secret GOOD>", "BAD": "<secret 1st>" }', '    },', '    "h": { "url": "https://h.example", "headers": { "H": "<secret two words>", "I": "<secret UNCLOSED" } }', '  }', '}', ''].join('\n')
    const dir = testdir({ 'mcp.json': text })
    const file = path.join(dir, 'mcp.json')
    const read = await readMcpFile(file)
    expect(read.servers).toEqual([])
    expect(read.problems.map((p) => [p.file, p.line, p.path])).toEqual([
      [file, 5, 'mcpServers.s.env.BAD'],
      [file, 7, 'mcpServers.h.headers.H'],
      [file, 7, 'mcpServers.h.headers.I'],
    ])
    expect(read.problems[0]!.message).toContain('`<secret NAME>`')
  })
})
