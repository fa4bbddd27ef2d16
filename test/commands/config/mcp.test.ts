import { chmodSync, lstatSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh } from '../../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

const HAND_EDITED = `{
    "$schema": "https://example/mcp.schema.json",
    "x-notes": { "owner": "me" },
    "mcpServers": {
        "mine": { "command": "my-server", "args": ["--flag"] },
        "github": { "command": "gh-mcp", "env": { "GITHUB_TOKEN": "old-secret" }, "description": "kept by hand" },
        "same": { "type": "http", "url": "https://same.example/mcp" },
        "broken": { "command": 7 }
    }
}
`

const CLAUDE_PROJECT = JSON.stringify({
  mcpServers: {
    github: { type: 'stdio', command: 'gh-mcp', env: { GITHUB_TOKEN: '${GH_TOKEN}' } },
    same: { type: 'http', url: 'https://same.example/mcp' },
    fresh: { command: 'npx', args: ['-y', 'fresh-mcp', '${ARG:-default-arg}'] },
    broken: { command: 'fixed' },
    socket: { type: 'ws', url: 'wss://x' },
    unset: { command: 'x', args: ['${NOT_SET_ANYWHERE}'] },
  },
})

describe('omh config mcp import', () => {
  it('plans added, changed, same and conflicting, names secrets instead of copying them, and keeps everything it does not manage', () => {
    const home = testdir({ 'mcp.json': HAND_EDITED })
    const repo = gitRepo({ '.mcp.json': CLAUDE_PROJECT })
    const env = { OMH_HOME: home, GH_TOKEN: 'new-secret', NOT_SET_ANYWHERE: undefined }
    const ran = omh(['config', 'mcp', 'import', 'claude', '--yes'], { cwd: repo, env })
    expect(ran.stderr).toContain(`read ${path.join(repo, '.mcp.json')}`)
    expect(ran.status).toBe(0)
    expect(ran.stdout).not.toContain('new-secret')
    expect(ran.stdout).not.toContain('old-secret')
    expect(ran.stdout).toMatch(/~ changed\s+github\s+gh-mcp env GITHUB_TOKEN=•••\s+\(env\.GITHUB_TOKEN\)/)
    expect(ran.stdout).toMatch(/\+ added\s+fresh\s+npx -y fresh-mcp default-arg/)
    expect(ran.stdout).toMatch(/= same\s+same/)
    expect(ran.stdout).toMatch(/! conflicting\s+broken\s+the entry in mcp.json command: expected a non-empty string; fix or remove it first/)
    expect(ran.stdout).toMatch(/! conflicting\s+socket\s+a WebSocket server/)
    expect(ran.stdout).toMatch(/! conflicting\s+unset\s+\$\{NOT_SET_ANYWHERE\} is not set here/)
    const written = JSON.parse(readFileSync(path.join(home, 'mcp.json'), 'utf8'))
    expect(written).toEqual({
      $schema: 'https://example/mcp.schema.json',
      'x-notes': { owner: 'me' },
      mcpServers: {
        mine: { command: 'my-server', args: ['--flag'] },
        github: { command: 'gh-mcp', env: { GITHUB_TOKEN: '<secret GH_TOKEN>' }, description: 'kept by hand' },
        same: { type: 'http', url: 'https://same.example/mcp' },
        broken: { command: 7 },
        fresh: { command: 'npx', args: ['-y', 'fresh-mcp', 'default-arg'] },
      },
    })
    // The user's indentation is kept.
    expect(readFileSync(path.join(home, 'mcp.json'), 'utf8')).toMatch(/^\{\n {4}"\$schema"/)
  })

  it('asks before writing; with no terminal and no --yes it refuses and writes nothing', () => {
    const home = testdir({ 'mcp.json': HAND_EDITED })
    const repo = gitRepo({ '.mcp.json': CLAUDE_PROJECT })
    const ran = omh(['config', 'mcp', 'import', 'claude'], { cwd: repo, env: { OMH_HOME: home, GH_TOKEN: 'x' } })
    expect(ran.status).toBe(2)
    expect(ran.stdout).toContain('+ added')
    expect(ran.stderr).toContain('Code: CONSENT_REQUIRED')
    expect(ran.stderr).toContain('run the same command with --yes')
    expect(readFileSync(path.join(home, 'mcp.json'), 'utf8')).toBe(HAND_EDITED)
  })

  it('leaves a mcp.json it cannot parse byte for byte as it was', () => {
    const broken = '{\n  "mcpServers": { "a": { "command": "x" }, }\n'
    const home = testdir({ 'mcp.json': broken })
    const repo = gitRepo({ '.mcp.json': CLAUDE_PROJECT })
    const ran = omh(['config', 'mcp', 'import', 'claude', '--yes'], { cwd: repo, env: { OMH_HOME: home } })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toMatch(/line 2, col \d+ {2}not valid JSON/)
    expect(ran.stderr).toContain('Code: PROFILE_INVALID')
    expect(readFileSync(path.join(home, 'mcp.json'), 'utf8')).toBe(broken)
  })

  it("reads Codex's config.toml, naming the variables Codex forwards as secrets, never copying them", () => {
    const home = testdir()
    const from = path.join(testdir({ 'config.toml': '[mcp_servers.web]\nurl = "https://w/mcp"\nbearer_token_env_var = "W_TOKEN"\n' }), 'config.toml')
    const ran = omh(['config', 'mcp', 'import', 'codex', '--from', from, '--yes', '--json'], { env: { OMH_HOME: home, W_TOKEN: 'tok' } })
    expect(ran.status).toBe(0)
    expect(ran.json().result).toMatchObject({ harness: 'codex', from, written: true, changes: [{ name: 'web', change: 'added', transport: 'http' }] })
    expect(JSON.parse(readFileSync(path.join(home, 'mcp.json'), 'utf8'))).toEqual({
      mcpServers: { web: { type: 'http', url: 'https://w/mcp', headers: { Authorization: 'Bearer <secret W_TOKEN>' } } },
    })
  })

  it('says what is missing when there is nothing to import', () => {
    const ran = omh(['config', 'mcp', 'import', 'claude'], { cwd: gitRepo(), env: { OMH_HOME: testdir() } })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain('Code: IMPORT_SOURCE_MISSING')
    const bad = path.join(testdir({ 'o.json': '{"mcp": {"a": {"type": "local", "command": "node x"}}}' }), 'o.json')
    const invalid = omh(['config', 'mcp', 'import', 'opencode', '--from', bad], { env: { OMH_HOME: testdir() } })
    expect(invalid.status).toBe(2)
    expect(invalid.stderr).toMatch(/mcp\.a\.command: expected a non-empty list/)
    expect(invalid.stderr).toContain('Code: IMPORT_INVALID')
  })
})

describe('omh config mcp add, rm and ls', () => {
  it('adds, changes and removes servers, keeping the rest of the file', () => {
    const home = testdir({ 'mcp.json': '{\n  "$comment": "mine",\n  "mcpServers": {\n    "other": { "command": "o", "note": "mine" }\n  }\n}\n' })
    const env = { OMH_HOME: home }
    expect(omh(['config', 'mcp', 'add', 'docs', '--yes', '--env', 'K=v', '--', 'npx', '-y', 'srv'], { env }).status).toBe(0)
    expect(omh(['config', 'mcp', 'add', 'web', '--yes', '--url', 'https://w', '--sse', '--header', 'A=b'], { env }).status).toBe(0)
    const ls = omh(['config', 'mcp', 'ls', '--json'], { env })
    // Keys omh does not read survive its writes, but reading stays strict: a typo must not pass silently.
    expect(ls.status).toBe(2)
    expect(ls.json().error.problems).toMatchObject([{ path: 'mcpServers.other.note', message: 'unknown key' }])
    expect(omh(['config', 'mcp', 'rm', 'other', '--yes'], { env }).status).toBe(0)
    const listed = omh(['config', 'mcp', 'ls', '--json'], { env }).json().result
    expect(listed.servers).toEqual([
      { name: 'docs', transport: 'stdio', command: 'npx', args: ['-y', 'srv'], env: ['K'], used: true },
      { name: 'web', transport: 'sse', url: 'https://w', headers: ['A'], used: true },
    ])
    expect(JSON.parse(readFileSync(path.join(home, 'mcp.json'), 'utf8')).$comment).toBe('mine')
  })

  it('refuses a server it does not have, and a half-described one', () => {
    const home = testdir({ 'mcp.json': '{"mcpServers": {"docs": {"command": "d"}}}' })
    const rm = omh(['config', 'mcp', 'rm', 'dcos', '--yes'], { env: { OMH_HOME: home } })
    expect(rm.status).toBe(2)
    expect(rm.stderr).toContain('Did you mean "docs"?')
    expect(rm.stderr).toContain('Code: MCP_SERVER_NOT_FOUND')
    const add = omh(['config', 'mcp', 'add', 'x', '--yes'], { env: { OMH_HOME: home } })
    expect(add.status).toBe(2)
    expect(add.stderr).toContain('Code: USAGE')
  })

  it('treats constructor, toString and __proto__ as names like any other, never as what every object has', () => {
    const home = testdir({ 'mcp.json': '{"mcpServers": {"docs": {"command": "d"}}}' })
    const env = { OMH_HOME: home }
    const rm = omh(['config', 'mcp', 'rm', 'toString', '--yes'], { env })
    expect(rm.stderr).toContain(`${path.join(home, 'mcp.json')} has no MCP server called "toString".`)
    expect(rm.status).toBe(2)
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
      const add = omh(['config', 'mcp', 'add', name, '--yes', '--json', '--', 'srv'], { env })
      expect([add.status, add.json().result.changes]).toEqual([0, [{ name, change: 'added', transport: 'stdio' }]])
    }
    const proto = omh(['config', 'mcp', 'add', '__proto__', '--yes', '--', 'srv'], { env })
    expect(proto.stderr).toContain('Code: USAGE')
    expect(proto.status).toBe(2)
    expect(omh(['config', 'mcp', 'rm', 'constructor', '--yes'], { env }).status).toBe(0)
    expect(Object.keys(JSON.parse(readFileSync(path.join(home, 'mcp.json'), 'utf8')).mcpServers)).toEqual(['docs', 'toString', 'hasOwnProperty'])
  })

  it('writes over a change made since it read the file when its plan is still the same, keeping that change', async () => {
    const { openMcpDocument, planPut, writePlan } = await import('@omh/kernel')
    const home = testdir({ 'mcp.json': '{"mcpServers": {}}\n' })
    const file = path.join(home, 'mcp.json')
    const doc = await openMcpDocument(file)
    writeFileSync(file, '{"mcpServers": {"theirs": {"command": "t"}}}\n')
    await writePlan(doc, planPut(doc, [{ name: 'mine', transport: 'stdio', command: 'm', args: [], env: {} }]))
    expect(JSON.parse(readFileSync(file, 'utf8')).mcpServers).toEqual({ theirs: { command: 't' }, mine: { command: 'm' } })
  })

  it('refuses to write over a change made since it read the file that changes its plan', async () => {
    const { openMcpDocument, planPut, writePlan } = await import('@omh/kernel')
    const home = testdir({ 'mcp.json': '{"mcpServers": {}}\n' })
    const file = path.join(home, 'mcp.json')
    const doc = await openMcpDocument(file)
    writeFileSync(file, '{"mcpServers": {"mine": {"command": "theirs"}}}\n')
    const plan = planPut(doc, [{ name: 'mine', transport: 'stdio', command: 'm', args: [], env: {} }])
    await expect(writePlan(doc, plan)).rejects.toMatchObject({ code: 'FILE_CHANGED', exit: 1 })
    expect(readFileSync(file, 'utf8')).toBe('{"mcpServers": {"mine": {"command": "theirs"}}}\n')
  })

  it('writes a linked mcp.json through the link, and refuses a read-only one', () => {
    const dotfiles = testdir({ 'mcp.json': '{"mcpServers": {}}\n' })
    const home = testdir()
    symlinkSync(path.join(dotfiles, 'mcp.json'), path.join(home, 'mcp.json'))
    expect(omh(['config', 'mcp', 'add', 'a', '--yes', '--', 'a'], { env: { OMH_HOME: home } }).status).toBe(0)
    expect(lstatSync(path.join(home, 'mcp.json')).isSymbolicLink()).toBe(true)
    expect(JSON.parse(readFileSync(path.join(dotfiles, 'mcp.json'), 'utf8')).mcpServers).toEqual({ a: { command: 'a' } })

    chmodSync(path.join(dotfiles, 'mcp.json'), 0o444)
    const ran = omh(['config', 'mcp', 'add', 'b', '--yes', '--', 'b'], { env: { OMH_HOME: home } })
    expect(ran.status).toBe(1)
    expect(ran.stderr).toContain(`${path.join(home, 'mcp.json')} is read-only, so omh left it as it is.`)
    expect(ran.stderr).toContain('Code: FILE_READ_ONLY')
    expect(JSON.parse(readFileSync(path.join(dotfiles, 'mcp.json'), 'utf8')).mcpServers).toEqual({ a: { command: 'a' } })
  })
})
