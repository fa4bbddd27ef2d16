import { Args, Flags } from '../../../lib/oclif.js'
import { OmhError, USAGE, type McpServer } from '@omh/plugin-api'
import { mcpFileOf, openMcpDocument, planPut, redactPair, serverFrom } from '@omh/kernel'
import { carryOut, planFlags, type PlanResult } from '../../../lib/mcp-plan.js'
import { OmhCommand } from '../../../lib/omh-command.js'

const pairs = (values: readonly string[] | undefined, flag: string): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const value of values ?? []) {
    const n = value.indexOf('=')
    if (n <= 0) throw OmhError.of(USAGE, { args: [`--${flag} takes NAME=VALUE, not "${redactPair(value)}"`], hintArgs: ['config mcp add'] })
    out[value.slice(0, n)] = value.slice(n + 1)
  }
  return out
}

export default class ConfigMcpAdd extends OmhCommand<PlanResult> {
  static override summary = 'Add an MCP server to your catalogue, or change one.'
  static override description =
    'A server omh starts: `omh config mcp add NAME -- COMMAND [ARGS…]`. A server it reaches: `omh config mcp add NAME --url URL`. Values are kept literally: no harness substitutes them. Shows the plan and asks before writing (--yes skips the question).'
  static override examples = [
    '<%= config.bin %> config mcp add docs -- npx -y @modelcontextprotocol/server-filesystem /work/docs',
    '<%= config.bin %> config mcp add tracker --url https://tracker.example/mcp --header "Authorization=Bearer …"',
  ]
  static override strict = false
  static override args = { name: Args.string({ required: true, description: 'Server name.' }) }
  static override flags = {
    ...planFlags,
    url: Flags.string({ summary: 'Reach the server at this http(s) URL instead of starting a command.' }),
    sse: Flags.boolean({ summary: 'The server speaks the older SSE transport (with --url).', dependsOn: ['url'] }),
    header: Flags.string({ summary: 'A header sent to the server, NAME=VALUE (with --url).', multiple: true, dependsOn: ['url'] }),
    env: Flags.string({ summary: 'A variable the started server gets, NAME=VALUE.', multiple: true, exclusive: ['url'] }),
    cwd: Flags.string({ summary: 'The directory the started server runs in (a guest path).', exclusive: ['url'] }),
  }

  async run(): Promise<PlanResult> {
    const { args, argv, flags } = await this.parse(ConfigMcpAdd)
    const command = (argv as string[]).slice(1)
    if (flags.url && command.length) {
      throw OmhError.of(USAGE, { args: ['give either --url or a command after --, not both'], hintArgs: ['config mcp add'] })
    }
    if (!flags.url && !command.length) {
      throw OmhError.of(USAGE, { args: ['say how to reach the server: a command after --, or --url'], hintArgs: ['config mcp add'] })
    }
    const raw = flags.url
      ? { type: flags.sse ? 'sse' : 'http', url: flags.url, headers: pairs(flags.header, 'header') }
      : { command: command[0], args: command.slice(1), env: pairs(flags.env, 'env'), ...(flags.cwd ? { cwd: flags.cwd } : {}) }
    const problems: string[] = []
    const server: McpServer | undefined = serverFrom(args.name, raw, (p, message) => problems.push(`${p.length ? `${p.join('.')}: ` : ''}${message}`))
    if (!server) throw OmhError.of(USAGE, { args: [`server "${args.name}" ${problems.join('; ')}`], hintArgs: ['config mcp add'] })
    const kernel = await this.kernel()
    const doc = await openMcpDocument(mcpFileOf(kernel.omhHome), { maxBytes: kernel.settings.fileBytes?.value })
    return carryOut(this.io(), doc, planPut(doc, [server]), flags)
  }
}
