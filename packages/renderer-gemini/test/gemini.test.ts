import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Command, Hook, McpServer, RenderOutput, StagedFile } from '@omh/plugin-api'
import { parseContext as kitParseContext, renderContext, renderInput } from '@omh/plugin-kit/testing'
import plugin from '../src/index.js'
import { gemini, hooksBinding } from './gemini-facts.js'

const render = async (input: Parameters<typeof plugin.render>[0]) => (await plugin.render(input, renderContext)) as RenderOutput

const command = (name: string, body: string): Command => ({ name, description: `about ${name}`, source: `/c/${name}.md`, frontmatter: {}, body })

describe('gemini-commands', () => {
  it('writes each command as TOML with a marker, turning $ARGUMENTS into {{args}}, and drops what Gemini would run', async () => {
    const out = await render(
      renderInput('commands', 'gemini-commands', [command('hi', 'Say $ARGUMENTS.\n'), command('sh', 'Run !{ls}')], { binding: { path: '/home/agent/.gemini/commands' }, adapter: gemini }),
    )
    expect(out.files).toEqual([
      { kind: 'file', guest: '/home/agent/.gemini/commands/hi.toml', content: 'description = "about hi"\nprompt = """\n<!-- omh: hi -->\nSay {{args}}.\n"""\n' },
    ])
    expect(out.dropped).toEqual([expect.objectContaining({ capability: 'commands', name: 'sh' })])
  })

  it('says why a command holding `{{args}}` is dropped, and leaves a longer word that starts with $ARGUMENTS as it is', async () => {
    const out = await render(
      renderInput('commands', 'gemini-commands', [command('own', 'Use {{args}} here.'), command('long', 'Keep $ARGUMENTS_X, use $ARGUMENTS.')], { binding: { path: '/c' }, adapter: gemini }),
    )
    expect(out.dropped).toEqual([{ capability: 'commands', name: 'own', reason: 'gemini puts what follows a command where its prompt says `{{args}}`, so this text would not reach the model as written' }])
    expect((out.files[0] as StagedFile).content).toContain('Keep $ARGUMENTS_X, use {{args}}.')
  })
})

describe('gemini-agents', () => {
  it('writes a name YAML would read as no string (true, null, a number) as the string it is', async () => {
    const agent = (name: string) => ({ name, description: 'd', source: `/a/${name}.md`, frontmatter: {}, body: 'Be.\n' })
    const out = await render(renderInput('subagents', 'gemini-agents', ['true', '123'].map(agent), { binding: { path: '/a' }, adapter: gemini }))
    expect(out.files.map((f) => String((f as StagedFile).content).split('\n')[1])).toEqual(['name: "true"', 'name: "123"'])
  })
})

describe('gemini-settings', () => {
  it("writes mcpServers in Gemini's shape and refuses values Gemini would expand", async () => {
    const servers: McpServer[] = [
      { name: 'local', transport: 'stdio', command: 'node', args: ['s.js'], env: { TOKEN: '$SECRET' } },
      { name: 'remote', transport: 'http', url: 'https://x.test/mcp', headers: {} },
    ]
    const out = await render(renderInput('mcp', 'gemini-settings', servers, { binding: { path: '/home/agent/.gemini/settings.json' }, adapter: gemini }))
    expect(JSON.parse((out.files[0] as StagedFile).content as string)).toEqual({
      security: { folderTrust: { enabled: false } },
      privacy: { usageStatisticsEnabled: false },
      mcpServers: { local: { command: 'node', args: ['s.js'], env: { TOKEN: '$SECRET' } }, remote: { url: 'https://x.test/mcp', type: 'http' } },
    })
    expect(out.refused).toEqual([expect.objectContaining({ name: 'local', field: 'env.TOKEN', value: '$SECRET' })])
  })

  it('names the transport of a remote server, since Gemini 0.61 reads a bare `url` as streamable HTTP, not SSE', async () => {
    const servers: McpServer[] = [{ name: 'events', transport: 'sse', url: 'https://x.test/sse', headers: {} }]
    const out = await render(renderInput('mcp', 'gemini-settings', servers, { binding: { path: '/home/agent/.gemini/settings.json' }, adapter: gemini }))
    expect(JSON.parse((out.files[0] as StagedFile).content as string).mcpServers).toEqual({ events: { url: 'https://x.test/sse', type: 'sse' } })
    const read = plugin.parse!([{ file: 's.json', content: JSON.stringify({ mcpServers: { bare: { url: 'https://x.test/mcp' }, old: { httpUrl: 'https://x.test/old' } } }) }], kitParseContext('mcp', 'gemini-settings', { adapter: gemini }))
    expect(read).toMatchObject({ ok: true, items: { mcp: [{ name: 'bare', transport: 'http' }, { name: 'old', transport: 'http' }] } })
  })

  it('declines a class its format does not write, so no item is lost without a word', async () => {
    expect(await plugin.render(renderInput('commands', 'gemini-settings', [command('hi', 'x')], { adapter: gemini }), renderContext)).toBeUndefined()
  })
})

describe('gemini-settings: hooks', () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'omh-gemini-hooks-'))
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))
  const hook = (name: string, over: Partial<Hook>): Hook => ({ name, on: 'before-tool', action: { kind: 'run', command: 'true' }, fields: [], source: `/h/${name}.json`, ...over })
  const hooks: Hook[] = [
    hook('no-force', {
      tools: ['shell'],
      when: 'printf %s "$OMH_TOOL_COMMAND" | grep -q -- --force',
      action: { kind: 'refuse', text: 'No: ${OMH_TOOL_COMMAND:-that} "quoted" costs $$5' },
      fields: ['tool-command'],
    }),
    hook('json-talker', { when: `echo '{"decision":"deny","reason":"from when"}'`, action: { kind: 'run', command: `echo '{"decision":"deny","reason":"from run"}'; exit 3` } }),
    hook('after-read', { on: 'after-tool', tools: ['read'], action: { kind: 'inject', text: 'You read $OMH_TOOL_FILE' }, fields: ['tool-file'] }),
  ]
  const rendered = () => render(renderInput('hooks', 'gemini-settings', hooks, { binding: hooksBinding, adapter: gemini }))

  /** Stages the scripts under a scratch folder and runs one as Gemini does: `sh -c` its command, the payload on stdin. */
  async function fire(name: string, payload: object) {
    const out = await rendered()
    for (const f of out.files as StagedFile[]) {
      const host = path.join(scratch, f.guest)
      mkdirSync(path.dirname(host), { recursive: true })
      writeFileSync(host, f.content)
    }
    const settings = JSON.parse((out.files[0] as StagedFile).content as string) as { hooks: Record<string, { hooks: { name: string; command: string }[] }[]> }
    const entry = Object.values(settings.hooks)
      .flat()
      .flatMap((g) => g.hooks)
      .find((h) => h.name === name)!
    const r = spawnSync('sh', ['-c', entry.command.replace("'/home/agent", `'${scratch}/home/agent`)], { input: JSON.stringify(payload), encoding: 'utf8' })
    return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr }
  }

  it('names each script from settings.json with nothing Gemini would substitute from its own environment when it loads the file', async () => {
    const out = await rendered()
    const settings = (out.files[0] as StagedFile).content as string
    // Gemini replaces `$NAME` and `${NAME}`; a matcher's closing `$` is neither.
    expect(settings).not.toMatch(/\$(\w|\{)/)
    expect(JSON.parse(settings).hooks.BeforeTool[0]).toEqual({
      matcher: '^(?:run_shell_command)$',
      hooks: [{ name: 'no-force', type: 'command', command: "sh '/home/agent/.gemini/omh-hooks/no-force.sh'" }],
    })
    expect(out.files.map((f) => f.guest)).toEqual([
      '/home/agent/.gemini/settings.json',
      '/home/agent/.gemini/omh-hooks/no-force.sh',
      '/home/agent/.gemini/omh-hooks/json-talker.sh',
      '/home/agent/.gemini/omh-hooks/after-read.sh',
    ])
  })

  it('refuses a call as Gemini reads it, with the text and its variables filled in; says `{}` when `when` keeps it silent', async () => {
    const call = (command: string) => ({ hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command } })
    const refused = await fire('no-force', call('git push --force "x" $HOME'))
    expect(refused.status).toBe(0)
    expect(JSON.parse(refused.stdout)).toEqual({ decision: 'deny', reason: 'No: git push --force "x" $HOME "quoted" costs $5' })
    expect(await fire('no-force', call('git push'))).toMatchObject({ status: 0, stdout: '{}' })
  })

  it('never lets the output of `when` or `run` instruct Gemini: stdout is `{}`, a failing run exits 1', async () => {
    const ran = await fire('json-talker', { hook_event_name: 'BeforeTool', tool_name: 'read_file', tool_input: {} })
    expect(ran).toMatchObject({ status: 1, stdout: '{}' })
    expect(ran.stderr).toContain('from when')
    expect(ran.stderr).toContain('from run')
  })

  it('gives advice after a tool as additionalContext', async () => {
    const out = await fire('after-read', { hook_event_name: 'AfterTool', tool_name: 'read_file', tool_input: { file_path: "/work/it's.md" } })
    expect(JSON.parse(out.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'AfterTool', additionalContext: "You read /work/it's.md" } })
  })

  it('stages nothing when no hook can be expressed', async () => {
    const out = await render(renderInput('hooks', 'gemini-settings', [hook('late', { on: 'turn-end', action: { kind: 'inject', text: 'hi' } })], { binding: hooksBinding, adapter: gemini }))
    expect(out).toEqual({ files: [], dropped: [{ capability: 'hooks', name: 'late', reason: 'no way to inject text at `turn-end`' }] })
  })
})
