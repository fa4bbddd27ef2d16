import { describe, expect, it } from 'vitest'
import type { Command, McpServer, RendererPlugin } from '@omh/plugin-api'
// @ts-expect-error: the example is plain JavaScript, as a third party may write it
import gemini from '../../examples/plugins/omh-plugin-gemini/index.js'

const renderer = gemini as RendererPlugin
const base = { adapter: { name: 'gemini' }, options: undefined, profile: {} } as never
const context = { guestHome: '/home/agent', guestWork: '/work' }

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
})
