import { OmhError, PROFILE_INVALID } from '@omh/plugin-api'
import { mcpFileOf, readMcpFile, redactServer } from '@omh/kernel'
import { describeServer } from '../../../lib/mcp-plan.js'
import { OmhCommand } from '../../../lib/omh-command.js'
import { table } from '../../../lib/table.js'
import type { AnsweredAgain } from '@omh/fast-path'

interface ServerListing {
  name: string
  transport: string
  command?: string
  args?: string[]
  cwd?: string
  url?: string
  /** Variable names; their values stay out of this report, as do secrets in `args` and `url`. */
  env?: string[]
  /** Header names; their values stay out of this report. */
  headers?: string[]
  /** Whether `[use] mcp` selects it. */
  used: boolean
}

export interface McpLsResult {
  file: string
  servers: ServerListing[]
  /** The `[use] mcp` list that decides, and its file; null when none does (every server is used). */
  use: { value: string[]; layer: string; file: string } | null
}

export default class ConfigMcpLs extends OmhCommand<McpLsResult> {
  /** Answered again while the files it read are unchanged. */
  static answeredAgain: AnsweredAgain = {}
  static override summary = 'List the MCP servers of your catalogue ($OMH_HOME/mcp.json).'
  static override description =
    'Environment and header values are never shown, nor what looks like a secret in arguments and URLs; `used` says whether [use] mcp selects the server.'

  async run(): Promise<McpLsResult> {
    await this.parse(ConfigMcpLs)
    const kernel = await this.kernel()
    const read = await readMcpFile(mcpFileOf(kernel.omhHome), { maxBytes: kernel.settings.fileBytes?.value })
    if (read.problems.length) throw OmhError.of(PROFILE_INVALID, { args: [read.problems.length], problems: read.problems })
    const use = kernel.settings.use.mcp
    const selected = (name: string) => !use || use.value[0] === '*' || use.value.includes(name)
    const result: McpLsResult = {
      file: read.file,
      servers: read.servers.map(redactServer).map((s) => ({
        name: s.name,
        transport: s.transport,
        ...(s.transport === 'stdio'
          ? { command: s.command, args: [...s.args], ...(s.cwd ? { cwd: s.cwd } : {}), env: Object.keys(s.env) }
          : { url: s.url, headers: Object.keys(s.headers) }),
        used: selected(s.name),
      })),
      use: use ? { value: [...use.value], layer: use.layer, file: use.file } : null,
    }
    if (!this.jsonEnabled()) {
      const s = this.style
      if (!read.servers.length) this.log(s.dim(`No MCP servers in ${read.file}.`))
      this.log(
        table(
          read.servers.map((server) => [s.bold(server.name), server.transport, describeServer(server), selected(server.name) ? '' : s.dim('(not used)')]),
          '  ',
        ),
      )
      if (use) this.log(s.dim(`  use.mcp = ${JSON.stringify(use.value)}  (${use.layer}: ${use.file})`))
    }
    return result
  }
}
