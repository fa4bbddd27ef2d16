import { spawnSync } from 'node:child_process'
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Command, Hook, McpServer, RenderOutput, RendererPlugin, StagedFile } from '@omh/plugin-api'
import { parseToml } from '@omh/plugin-kit/toml'
// @ts-expect-error: the example is plain JavaScript, as a third party may write it
import gemini from '../../examples/plugins/omh-plugin-gemini/index.js'

const renderer = gemini as RendererPlugin
const base = { adapter: { name: 'gemini' }, options: undefined, profile: {} } as never
const context = { guestHome: '/home/agent', guestWork: '/work' }

const ADAPTER = path.join(import.meta.dirname, '../../examples/plugins/omh-plugin-gemini/adapters/gemini.toml')
const adapter = parseToml(readFileSync(ADAPTER, 'utf8'), ADAPTER).data as { tools: Record<string, string>; capabilities: Record<string, Record<string, unknown>> }
const hooksBinding = { ...adapter.capabilities['hooks'], path: '/home/agent/.gemini/settings.json' }

const command = (name: string, body: string): Command => ({ name, description: `about ${name}`, source: `/c/${name}.md`, frontmatter: {}, body })

describe('the Gemini CLI example renderer', () => {
  it('writes each command as TOML with a marker, turning $ARGUMENTS into {{args}}, and drops what Gemini would run', async () => {
    const out = await renderer.render(
      { ...(base as object), capability: 'commands', binding: { path: '/home/agent/.gemini/commands', render: 'gemini-commands' }, items: [command('hi', 'Say $ARGUMENTS.\n'), command('sh', 'Run !{ls}')] } as never,
      context,
    )
    expect(out?.files).toEqual([
      { kind: 'file', guest: '/home/agent/.gemini/commands/hi.toml', content: 'description = "about hi"\nprompt = """\n<!-- omh: hi -->\nSay {{args}}.\n"""\n' },
    ])
    expect(out?.dropped).toEqual([expect.objectContaining({ capability: 'commands', name: 'sh' })])
  })

  it('writes mcpServers in Gemini\'s shape and refuses values Gemini would expand', async () => {
    const servers: McpServer[] = [
      { name: 'local', transport: 'stdio', command: 'node', args: ['s.js'], env: { TOKEN: '$SECRET' } },
      { name: 'remote', transport: 'http', url: 'https://x.test/mcp', headers: {} },
    ]
    const out = await renderer.render(
      { ...(base as object), capability: 'mcp', binding: { path: '/home/agent/.gemini/settings.json', render: 'gemini-settings' }, items: servers } as never,
      context,
    )
    const file = out!.files[0] as { content: string }
    expect(JSON.parse(file.content)).toEqual({
      security: { folderTrust: { enabled: false } },
      privacy: { usageStatisticsEnabled: false },
      mcpServers: { local: { command: 'node', args: ['s.js'], env: { TOKEN: '$SECRET' } }, remote: { httpUrl: 'https://x.test/mcp' } },
    })
    expect(out?.refused).toEqual([expect.objectContaining({ name: 'local', field: 'env.TOKEN', value: '$SECRET' })])
  })

  describe('hooks', () => {
    const scratch = mkdtempSync(path.join(os.tmpdir(), 'omh-gemini-hooks-'))
    afterAll(() => rmSync(scratch, { recursive: true, force: true }))
    const hook = (name: string, over: Partial<Hook>): Hook => ({ name, on: 'before-tool', action: { kind: 'run', command: 'true' }, fields: [], source: `/h/${name}.json`, ...over })
    const hooks: Hook[] = [
      hook('no-force', { tools: ['shell'], when: 'printf %s "$OMH_TOOL_COMMAND" | grep -q -- --force', action: { kind: 'refuse', text: 'No: ${OMH_TOOL_COMMAND:-that} "quoted" costs $$5' }, fields: ['tool-command'] }),
      hook('json-talker', { when: `echo '{"decision":"deny","reason":"from when"}'`, action: { kind: 'run', command: `echo '{"decision":"deny","reason":"from run"}'; exit 3` } }),
      hook('after-read', { on: 'after-tool', tools: ['read'], action: { kind: 'inject', text: 'You read $OMH_TOOL_FILE' }, fields: ['tool-file'] }),
    ]
    const rendered = async () =>
      (await renderer.render({ ...(base as object), adapter: { name: 'gemini', tools: adapter.tools }, capability: 'hooks', binding: hooksBinding, items: hooks } as never, context)) as RenderOutput

    /** Stages the scripts under a scratch folder and runs one as Gemini does: `sh -c` its command, the payload on stdin. */
    async function fire(name: string, payload: object) {
      const out = await rendered()
      for (const f of out.files as StagedFile[]) {
        const host = path.join(scratch, f.guest)
        mkdirSync(path.dirname(host), { recursive: true })
        writeFileSync(host, f.content)
      }
      const settings = JSON.parse((out.files[0] as StagedFile).content as string) as { hooks: Record<string, { hooks: { name: string; command: string }[] }[]> }
      const entry = Object.values(settings.hooks).flat().flatMap((g) => g.hooks).find((h) => h.name === name)!
      const r = spawnSync('sh', ['-c', entry.command.replace("'/home/agent", `'${scratch}/home/agent`)], { input: JSON.stringify(payload), encoding: 'utf8' })
      return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr }
    }

    it('names each script from settings.json with nothing Gemini would substitute from its own environment when it loads the file', async () => {
      const out = await rendered()
      const settings = (out.files[0] as StagedFile).content as string
      // Gemini replaces `$NAME`, `${NAME}` and `${NAME:-…}`; a matcher's closing `$` is none of them.
      expect(settings).not.toMatch(/\$(\w|\{)/)
      expect(JSON.parse(settings).hooks.BeforeTool[0]).toEqual({ matcher: '^(?:run_shell_command)$', hooks: [{ name: 'no-force', type: 'command', command: "sh '/home/agent/.gemini/omh-hooks/no-force.sh'" }] })
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
  })
})
