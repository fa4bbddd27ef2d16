import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { testdir } from '@omh/test-utils'
import { checkAdapterFile, toAdapter, type Adapter, type RenderReport } from '@omh/kernel'
import { emptyProfile, type ProfileItems } from '@omh/plugin-api'
import { capabilitiesUnderTest, classVerdicts, doctorChecks, doctorPlan, loginKept, type DoctorInput } from './checks.js'
import { digestBytes, type RunnerReport } from './runner.js'

async function adapter(): Promise<Adapter> {
  const dir = testdir({
    'h.toml': `
name = "h"
bin = "h"
install = "i"
token = ["$HOME/.h/token.json"]
[probes.list]
run = "h list"
[capabilities.rules]
path = "/work/RULES.md"
render = "concat"
expect = [{ probe = "list", line = "rules {{path}}" }]
[capabilities.skills]
path = "$HOME/.h/skills"
render = "dir"
expect = [{ probe = "list", line = "skill {{name}}" }]
[capabilities.commands]
path = "$HOME/.h/commands"
render = "dir"
[capabilities.hooks]
path = "$HOME/.h/plugin.js"
render = "plugin"
[capabilities.hooks.events]
before-tool = "before"
`,
  })
  const check = await checkAdapterFile(path.join(dir, 'h.toml'))
  expect(check.problems).toEqual([])
  return toAdapter(check.file, check.data!)
}

const profile: ProfileItems = {
  ...emptyProfile(),
  rules: [{ name: 'style', origin: 'style', source: '/p/rules/style.md', text: 'x' }],
  skills: [
    { name: 'review', description: 'd', source: '/p/skills/review' },
    { name: 'deploy', description: 'd', source: '/p/skills/deploy' },
  ],
  commands: [{ name: 'fix', source: '/p/commands/fix.md', frontmatter: {}, body: 'b' }],
  mcp: [{ name: 'echo', transport: 'stdio', command: 'node', args: [], env: {} }],
  hooks: [{ name: 'guard', on: 'before-tool', action: { kind: 'run', command: 'true' }, fields: [], source: '/p/hooks/guard.json' }],
}

const render: RenderReport = {
  harness: 'h',
  adapterFile: 'h.toml',
  capabilities: [],
  env: {},
  translated: [],
  files: [
    { kind: 'file', guest: '/work/RULES.md', content: 'rules\n', syntax: 'markdown' },
    { kind: 'file', guest: '/home/agent/.h/plugin.js', content: 'export {}\n', syntax: 'javascript' },
    {
      kind: 'tree',
      guest: '/home/agent/.h/skills',
      entries: [
        { name: 'review', source: '/p/skills/review' },
        { name: 'deploy', source: '/p/skills/deploy' },
      ],
    },
    { kind: 'tree', guest: '/home/agent/.h/commands', entries: [{ name: 'fix.md', source: '/p/commands/fix.md' }] },
  ],
  dropped: [
    { capability: 'mcp', name: 'echo', reason: 'unsupported' },
    { capability: 'skills', name: 'deploy', reason: 'a reason' },
  ],
}

const expected = {
  '/work/RULES.md': digestBytes('rules\n'),
  '/home/agent/.h/plugin.js': digestBytes('export {}\n'),
  '/home/agent/.h/skills/review': 'r'.repeat(64),
  '/home/agent/.h/skills/deploy': 'd'.repeat(64),
  '/home/agent/.h/commands/fix.md': 'f'.repeat(64),
}

const good: RunnerReport = {
  digest: {
    '/work/RULES.md': { sha256: expected['/work/RULES.md'], kind: 'file' },
    '/home/agent/.h/plugin.js': { sha256: expected['/home/agent/.h/plugin.js'], kind: 'file' },
    '/home/agent/.h/skills/review': { sha256: 'r'.repeat(64), kind: 'directory' },
    '/home/agent/.h/skills/deploy': { sha256: 'd'.repeat(64), kind: 'directory' },
    '/home/agent/.h/commands/fix.md': { sha256: 'f'.repeat(64), kind: 'file' },
  },
  syntax: { '/home/agent/.h/plugin.js': { ok: true, output: '' } },
  bins: { h: { path: '/usr/local/bin/h' } },
  renames: { '/home/agent/.h/token.json': { ok: true, detail: 'created by rename, then removed' } },
  probes: { list: { exit: 0, stdout: 'rules /work/RULES.md\nskill review\n', stderr: '' } },
}

const input = async (): Promise<DoctorInput> => ({ adapter: await adapter(), render, profile, checkers: { javascript: ['node', '--check'] } })

describe('doctor checks', () => {
  it('measure every staged file and tree entry, the plugins, the binary, the tokens and the probes needed', async () => {
    expect(doctorPlan(await input())).toEqual({
      digest: ['/work/RULES.md', '/home/agent/.h/plugin.js', '/home/agent/.h/skills/review', '/home/agent/.h/skills/deploy', '/home/agent/.h/commands/fix.md'],
      syntax: [{ path: '/home/agent/.h/plugin.js', argv: ['node', '--check'] }],
      bins: ['h', 'node'],
      renames: ['/home/agent/.h/token.json'],
      probes: { list: { run: 'h list', timeout: 60 } },
    })
  })

  it('expect of the harness only the items its renderer kept', async () => {
    const under = capabilitiesUnderTest(await input())
    expect(under.find((c) => c.capability === 'skills')?.items.map((i) => i.name)).toEqual(['review'])
  })

  it('pass when everything is where it was staged and the harness shows each item', async () => {
    const i = await input()
    const checks = doctorChecks(i, expected, good)
    expect(checks.filter((c) => !c.ok)).toEqual([])
    expect(checks.map((c) => `${c.kind} ${c.name}`)).toEqual([
      'staged /work/RULES.md',
      'staged /home/agent/.h/plugin.js',
      'entry /home/agent/.h/skills/review',
      'entry /home/agent/.h/skills/deploy',
      'entry /home/agent/.h/commands/fix.md',
      'syntax /home/agent/.h/plugin.js',
      'bin h',
      'token /home/agent/.h/token.json',
      'probe list',
      'harness rules: style',
      'harness skills: review',
    ])
    expect(classVerdicts(i, checks)).toEqual({
      rules: 'proved',
      skills: 'proved',
      mcp: 'dropped',
      commands: 'unproved',
      subagents: 'empty',
      hooks: 'unproved',
    })
  })

  it('fail, naming the path and the class, on changed bytes, a dangling entry, a plugin that does not parse, no binary, a token that cannot be renamed over', async () => {
    const i = await input()
    const bad: RunnerReport = {
      ...good,
      digest: {
        ...good.digest,
        '/work/RULES.md': { sha256: 'e'.repeat(64), kind: 'file' },
        '/home/agent/.h/skills/review': { error: 'ENOENT: no such file or directory' },
      },
      syntax: { '/home/agent/.h/plugin.js': { ok: false, output: 'file:1\nSyntaxError: Unexpected end of input\nmore\nmore' } },
      bins: { h: {} },
      renames: { '/home/agent/.h/token.json': { ok: false, detail: 'EBUSY: resource busy or locked' } },
    }
    const checks = doctorChecks(i, expected, bad)
    expect(checks.filter((c) => !c.ok).map((c) => [c.name, c.capability ?? '-', c.detail])).toEqual([
      ['/work/RULES.md', 'rules', `holds other content than omh staged (file eeeeeeeeeeee, staged ${expected['/work/RULES.md'].slice(0, 12)})`],
      ['/home/agent/.h/skills/review', 'skills', 'does not resolve: ENOENT: no such file or directory'],
      ['/home/agent/.h/plugin.js', 'hooks', 'does not parse (node --check): file:1 | SyntaxError: Unexpected end of input | more'],
      ['h', '-', `is not on PATH in the image: the adapter's install (${i.adapter.file}) did not put it there`],
      ['/home/agent/.h/token.json', '-', 'cannot be renamed over, so a login saved there would not persist: EBUSY: resource busy or locked; a login there stays inside the session, where the agent can read it (the adapter names no [[logins]] for it)'],
    ])
    expect(classVerdicts(i, checks)).toMatchObject({ rules: 'failed', skills: 'failed', hooks: 'failed' })
  })

  it('say of a login file whether a subscription login there is kept outside, and where its tokens go', () => {
    const logins = [{ file: '/home/agent/.h/auth.json', access: 'tokens.access', hosts: ['chat.example', '*.api.example'], refresh_url: 'https://auth.example/oauth/token' }]
    expect(loginKept({ logins }, '/home/agent/.h/auth.json')).toBe('a subscription login there is kept outside the session: its tokens go to chat.example, *.api.example only, its refresh to auth.example')
    expect(loginKept({ logins }, '/home/agent/.h/other.json')).toMatch(/^a login there stays inside the session/)
  })

  it('fail every class whose probe printed nothing', async () => {
    const i = await input()
    const checks = doctorChecks(i, expected, { ...good, probes: { list: { exit: 0, stdout: '', stderr: '' } } })
    expect(checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(['list', 'rules: style', 'skills: review'])
    expect(classVerdicts(i, checks)).toMatchObject({ rules: 'failed', skills: 'failed' })
  })

  it('fail an MCP server the harness does not list, and only warn, with the reason, about one it lists but could not connect', async () => {
    const dir = testdir({
      'm.toml': `
name = "m"
bin = "m"
install = "i"
[probes.mcp]
run = "m mcp list"
[capabilities.mcp]
path = "$HOME/.m/mcp.json"
render = "mcp-json"
expect = [{ probe = "mcp", line = "{{name}}: *" }, { probe = "mcp", line = "{{name}}: ok", connected = true }]
`,
    })
    const check = await checkAdapterFile(path.join(dir, 'm.toml'))
    expect(check.problems).toEqual([])
    const stdio = (name: string, command: string) => ({ name, transport: 'stdio' as const, command, args: [], env: {} })
    const mcp = [stdio('up', 'node'), { name: 'web', transport: 'http' as const, url: 'https://x.example/mcp', headers: {} }, stdio('gone', 'no-such'), stdio('dies', 'node'), stdio('unlisted', 'node')]
    const file = { kind: 'file' as const, guest: '/home/agent/.m/mcp.json', content: '{}\n' }
    const i: DoctorInput = { adapter: toAdapter(check.file, check.data!), render: { ...render, files: [file], dropped: [] }, profile: { ...emptyProfile(), mcp } }
    expect(doctorPlan(i).bins).toEqual(['m', 'node', 'no-such'])
    const report: RunnerReport = {
      digest: { [file.guest]: { sha256: digestBytes('{}\n'), kind: 'file' } },
      syntax: {},
      bins: { m: { path: '/bin/m' }, node: { path: '/bin/node' }, 'no-such': {} },
      renames: {},
      probes: { mcp: { exit: 0, stdout: 'up: ok\nweb: failed\ngone: failed\ndies: failed, exited 1\n', stderr: '' } },
    }
    const checks = doctorChecks(i, { [file.guest]: digestBytes('{}\n') }, report)
    expect(checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(['mcp: unlisted'])
    // Loaded and connected are two checks, each named for what it shows: no line printed twice.
    expect(checks.filter((c) => c.items?.includes('up')).map((c) => c.name)).toEqual(['mcp: up', 'mcp connection: up'])
    expect(checks.filter((c) => c.warning).map((c) => `${c.name}: ${c.detail}`)).toEqual([
      "mcp connection: web: does not connect: doctor runs without network (`--network` runs it on the session's network)",
      'mcp connection: gone: does not connect: its command `no-such` is not found in the image',
      'mcp connection: dies: does not connect: it says "dies: failed, exited 1"',
      'mcp connection: unlisted: does not connect',
    ])
    const online = doctorChecks({ ...i, network: true }, { [file.guest]: digestBytes('{}\n') }, report)
    expect(online.find((c) => c.name === 'mcp connection: web' && c.warning)?.detail).toBe('does not connect: it says "web: failed"')
  })
})
