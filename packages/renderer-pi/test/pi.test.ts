import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import fc from 'fast-check'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { GUEST_HOME, GUEST_WORK, type Hook, type McpServer, type RenderOutput, type StagedFile } from '@omh/plugin-api'
import { parseContext, renderContext, renderInput, servers, testRenderer } from '@omh/plugin-kit/testing'
import { AWKWARD, bundledAdapter, bundledFormats, expectedText, factsOf, hook, hookTextArbitrary, hooksInput } from '@omh/test-utils'
import renderer from '../src/index.js'
import { escapeValue, unescapeValue } from '../src/mcp.js'

const adapter = await bundledAdapter('pi')
const pi = { adapter, binding: adapter.bindings.find((b) => b.capability === 'hooks')! }
const facts = factsOf(adapter)
const MCP = '/home/agent/.pi/agent/mcp.json'
const dir = mkdtempSync(path.join(os.tmpdir(), 'omh-pi-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Handler = (event: Record<string, unknown>) => Promise<unknown>

let loaded = 0
/** Renders hooks and loads the extension the way pi does: import the module, hand its default export a `pi` that records each `pi.on`. */
async function extension(hooks: Hook[]) {
  const out = renderer.render(hooksInput(hooks, pi), { guestHome: GUEST_HOME, guestWork: GUEST_WORK }) as RenderOutput
  const file = out.files[0] as StagedFile | undefined
  if (!file) return { out, handlers: undefined }
  const module = path.join(dir, `omh-${loaded++}.mjs`)
  writeFileSync(module, file.content)
  const { default: omh } = (await import(pathToFileURL(module).href)) as { default: (pi: unknown) => void }
  const handlers: Record<string, Handler> = {}
  omh({ on: (event: string, handler: Handler) => void (handlers[event] = handler) })
  return { out, source: file.content as string, handlers }
}

// pi never takes a server name outside [A-Za-z0-9_-], a legacy SSE server, or a URL it cannot read;
// a leading `~` in a command, argument or cwd is refused, since pi reads it as the home directory.
const home = (s: McpServer) => s.transport === 'stdio' && [s.command, ...s.args, s.cwd ?? ''].some((v) => /^~(\/|$)/.test(v))

testRenderer(renderer, {
  ...(await bundledFormats()),
  golden: new URL('./golden', import.meta.url),
  roundTrips: [
    {
      format: 'pi-mcp',
      capability: 'mcp',
      binding: { path: MCP },
      adapter: facts,
      items: servers.map((xs) => xs.filter((s) => !home(s))),
      numRuns: 300,
    },
  ],
})

const FILE = `/work/src/it's a "$HOME" \`x\` ✓.ts`
const log = path.join(dir, 'log')

describe('pi-extension: every generated hook does what its definition says', async () => {
  process.env['OMH_SESSION'] = 'omh-s01'
  const hooks = [
    hook('fetch', { on: 'session-start', run: `echo fetched >> '${log}'` }),
    hook('orient', { on: 'session-start', inject: 'Read AGENTS.md.' }),
    hook('test-at-end', { on: 'turn-end', run: `echo "tests for $OMH_SESSION" >> '${log}'` }),
    hook('no-force-push', {
      on: 'before-tool',
      tools: ['shell'],
      when: `printf '%s' "$OMH_TOOL_COMMAND" | grep -q -- --force`,
      refuse: `No force-push: \${OMH_TOOL_COMMAND:-that}. ${AWKWARD}`,
    }),
    hook('read-hint', { on: 'before-tool', tools: ['read'], inject: 'Prefer the outline.' }),
    hook('end-hint', { on: 'turn-end', inject: 'Done?' }),
    hook('lint-hint', { on: 'after-tool', tools: ['edit'], inject: 'You edited $OMH_TOOL_FILE in $OMH_SESSION.\nRun `npm run lint` — ✓' }),
    hook('format', { on: 'after-tool', tools: ['edit'], run: `printf '%s\\n' "$OMH_TOOL_FILE" >> '${log}'` }),
    hook('search-hint', { on: 'after-tool', tools: ['search'], inject: 'Partial.' }),
    hook('broken', { on: 'after-tool', tools: ['shell'], run: 'exit 3' }),
  ]
  const { out, source, handlers } = await extension(hooks)

  it('passes node --check as the file pi loads', () => {
    const file = path.join(dir, 'omh.js')
    writeFileSync(file, source!)
    expect(() => execFileSync(process.execPath, ['--check', file], { stdio: 'pipe' })).not.toThrow()
  })

  it('drops by name what pi cannot express, never turning advice into a block', () => {
    expect(out.dropped).toEqual([
      { capability: 'hooks', name: 'read-hint', reason: 'no way to inject text at `before-tool`' },
      { capability: 'hooks', name: 'end-hint', reason: 'no way to inject text at `turn-end`' },
    ])
    expect(Object.keys(handlers!)).toEqual(['session_start', 'before_agent_start', 'agent_settled', 'tool_call', 'tool_result'])
  })

  it('gives session-start advice to the first run of a session as a message of its own, and runs its commands', async () => {
    rmSync(log, { force: true })
    await handlers!['session_start']!({ type: 'session_start', reason: 'startup' })
    expect(await handlers!['before_agent_start']!({ prompt: 'hi' })).toEqual({ message: { customType: 'omh', content: 'Read AGENTS.md.', display: false } })
    // Once per start: the message stays in the session, so a later run is not told again.
    expect(await handlers!['before_agent_start']!({ prompt: 'again' })).toBeUndefined()
    expect(readFileSync(log, 'utf8')).toBe('fetched\n')
  })

  it('narrows `search` to both of grep and find', async () => {
    for (const toolName of ['grep', 'find']) {
      const result = await handlers!['tool_result']!({ toolName, input: { pattern: 'x' }, content: [{ type: 'text', text: 'found' }] })
      expect(result).toEqual({ content: [{ type: 'text', text: 'found' }, { type: 'text', text: 'Partial.' }] })
    }
  })

  it('blocks a matching call with the reason, every character as written', async () => {
    const result = await handlers!['tool_call']!({ toolName: 'bash', input: { command: 'git push --force origin "main" $HOME' } })
    expect(result).toEqual({
      block: true,
      reason: `No force-push: git push --force origin "main" $HOME. it's "quoted" — \`make help\`, costs $5, back\\slash, {{event}}\nsecond line ✓ 日本語 😀`,
    })
  })

  it('lets a call through untouched when `when` says no, or the tool is another', async () => {
    const event = { toolName: 'bash', input: { command: 'git push origin main' } }
    expect(await handlers!['tool_call']!(event)).toBeUndefined()
    expect(await handlers!['tool_call']!({ toolName: 'read', input: { path: FILE } })).toBeUndefined()
    expect(event).toEqual({ toolName: 'bash', input: { command: 'git push origin main' } })
  })

  it('appends advice to the result after an edit or a write, and runs commands with the file set', async () => {
    rmSync(log, { force: true })
    for (const toolName of ['edit', 'write']) {
      const result = await handlers!['tool_result']!({ toolName, input: { path: FILE }, content: [{ type: 'text', text: 'Edit applied.' }], structuredContent: { ok: true } })
      expect(result).toEqual({ content: [{ type: 'text', text: 'Edit applied.' }, { type: 'text', text: `You edited ${FILE} in omh-s01.\nRun \`npm run lint\` — ✓` }] })
    }
    expect(readFileSync(log, 'utf8')).toBe(`${FILE}\n${FILE}\n`)
  })

  it('runs turn-end commands once pi has settled', async () => {
    rmSync(log, { force: true })
    await handlers!['agent_settled']!({ aborted: false })
    expect(readFileSync(log, 'utf8')).toBe('tests for omh-s01\n')
  })

  it('reports a failing command without failing the call', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const result = await handlers!['tool_result']!({ toolName: 'bash', input: { command: 'ls' }, content: [{ type: 'text', text: 'a\nb' }] })
    expect(errors).toHaveBeenCalledWith('omh: hook broken: run exited 3')
    expect(result).toBeUndefined()
    errors.mockRestore()
  })
})

describe('pi-extension: text', () => {
  it('says any text exactly as omh reads it, after a tool and in a refusal', async () => {
    const texts = fc.sample(hookTextArbitrary, 40)
    const hooks = texts.flatMap((text, n) => [
      hook(`advise-${n}`, { on: 'after-tool', inject: text }),
      hook(`block-${n}`, { on: 'before-tool', tools: ['read'], refuse: text }),
    ])
    const { handlers } = await extension(hooks)
    const env = { OMH_TOOL_FILE: FILE, OMH_TOOL_COMMAND: '', OMH_SESSION: 'omh-s01' }
    const result = (await handlers!['tool_result']!({ toolName: 'read', input: { path: FILE }, content: [] })) as { content: { text: string }[] }
    expect(result.content.map((c) => c.text)).toEqual(texts.map((t) => expectedText(t, env)))
    // Every hook runs; the first refusal is the reason pi gives the model.
    expect(await handlers!['tool_call']!({ toolName: 'read', input: { path: FILE } })).toEqual({ block: true, reason: expectedText(texts[0]!, env) })
  })

  it('acts as if `when` passed under OMH_HOOK_WHEN_MET, which omh doctor --turn alone sets, and traces each hook pi calls', async () => {
    const trace = path.join(dir, 'trace')
    const { handlers: h } = await extension([hook('guard', { on: 'before-tool', tools: ['shell'], when: 'false', refuse: 'Refused for the doctor.' })])
    process.env['OMH_HOOK_TRACE'] = trace
    try {
      expect(await h!['tool_call']!({ toolName: 'bash', input: { command: 'ls' } })).toBeUndefined()
      process.env['OMH_HOOK_WHEN_MET'] = '1'
      expect(await h!['tool_call']!({ toolName: 'bash', input: { command: 'ls' } })).toEqual({ block: true, reason: 'Refused for the doctor.' })
      expect(await h!['tool_call']!({ toolName: 'read', input: { path: 'x' } })).toBeUndefined()
    } finally {
      delete process.env['OMH_HOOK_WHEN_MET']
      delete process.env['OMH_HOOK_TRACE']
    }
    expect(readFileSync(trace, 'utf8')).toBe('guard\nguard\n')
  })

  it('writes no extension when nothing can be expressed', async () => {
    const { out } = await extension([hook('x', { on: 'turn-end', inject: 'hi' })])
    expect(out.files).toEqual([])
  })
})

const renderMcp = (items: McpServer[]) => renderer.render(renderInput('mcp', 'pi-mcp', items, { binding: { path: MCP }, adapter: facts }), renderContext) as RenderOutput
const parse = (content: string) => renderer.parse!([{ file: 'mcp.json', content }], parseContext('mcp', 'pi-mcp', { binding: { path: MCP }, adapter: facts }))

describe('pi-mcp', () => {
  it('writes env and headers as pi reads them: every `$` doubled, a leading `!` escaped, a secret as ${NAME}', () => {
    const env: Record<string, string> = {}
    expect(escapeValue('costs $5 or ${FREE}', env)).toBe('costs $$5 or $${FREE}')
    expect(escapeValue('!echo hi', env)).toBe('$!echo hi')
    expect(escapeValue('<secret A>-$x', env)).toBe('${A}-$$x')
    expect(env).toEqual({ A: '<secret A>' })
    for (const value of ['costs $$5 or $${FREE}', '$!echo hi', '$$!x']) expect(escapeValue(unescapeValue(value)!, {})).toBe(value)
    // A `$` pi takes as itself reads back as itself.
    for (const value of ['a$', '${1X}', '${open', '$5']) expect(unescapeValue(value)).toBe(value)
    expect(unescapeValue('Bearer ${TOKEN} $OTHER')).toBe('Bearer <secret TOKEN> <secret OTHER>')
    expect(unescapeValue('!gh auth token')).toBeUndefined()
  })

  it('drops a server pi would refuse, naming why, and refuses a leading `~` pi would read as the home directory', () => {
    const out = renderMcp([
      { name: 'old', transport: 'sse', url: 'https://x/sse', headers: {} },
      { name: 'a.b', transport: 'stdio', command: 'x', args: [], env: {} },
      { name: 'twin-a', transport: 'stdio', command: 'x', args: [], env: {} },
      { name: 'twin_a', transport: 'stdio', command: 'x', args: [], env: {} },
      { name: 'odd', transport: 'http', url: 'https://', headers: {} },
      { name: 'home', transport: 'stdio', command: '~/bin/srv', args: ['~', '~x'], env: {}, cwd: '~/w' },
    ])
    expect(out.dropped).toEqual([
      { capability: 'mcp', name: 'old', reason: 'no legacy SSE transport: pi reaches remote servers over streamable HTTP only' },
      { capability: 'mcp', name: 'a.b', reason: 'pi takes a server name of letters, digits, `_` and `-` only' },
      { capability: 'mcp', name: 'twin_a', reason: 'its name and "twin-a"\'s differ only in `-` and `_`, which pi counts as one server' },
      { capability: 'mcp', name: 'odd', reason: 'pi takes only an http or https URL it can read' },
    ])
    expect(out.refused?.map((r) => r.field)).toEqual(['command', 'args[0]', 'cwd'])
  })

  it('reads back what pi reads: a bare url as streamable HTTP, a server turned off or on SSE left out, saying why', () => {
    const content = JSON.stringify({
      mcpServers: {
        h: { url: 'https://h/mcp', headers: { A: 'x $$1 ${T}' } },
        s: { type: 'streamable-http', url: 'https://s/mcp', exposure: 'direct' },
        c: { command: 'node', env: { K: '!pass show k' } },
        off: { command: 'node', enabled: false },
        old: { type: 'sse', url: 'https://o/sse' },
      },
    })
    expect(parse(content)).toEqual({
      ok: true,
      items: {
        mcp: [
          { name: 'h', transport: 'http', url: 'https://h/mcp', headers: { A: 'x $1 <secret T>' } },
          { name: 's', transport: 'http', url: 'https://s/mcp', headers: {} },
        ],
      },
      left: [
        { name: 's.exposure', reason: 'omh keeps no such field' },
        { name: 'c', reason: 'a value pi gets by running a command (`!…`), which omh does not run' },
        { name: 'off', reason: 'turned off in pi (`enabled: false`)' },
        { name: 'old', reason: 'a legacy SSE server, which pi refuses' },
      ],
    })
    expect(parse('{ "mcpServers": { "x": { "type": "ws", "url": "ws://x" } } }')).toMatchObject({ ok: false, problems: [{ path: 'mcpServers.x' }] })
  })
})
