import { Args } from '../../../lib/oclif.js'
import { MCP_SERVER_NOT_FOUND, OmhError } from '@omh/plugin-api'
import { closest } from '@omh/plugin-kit'
import { mcpFileOf, openMcpDocument, type McpChange } from '@omh/kernel'
import { carryOut, planFlags, type PlanResult } from '../../../lib/mcp-plan.js'
import { OmhCommand } from '../../../lib/omh-command.js'

export default class ConfigMcpRm extends OmhCommand<PlanResult> {
  static override summary = 'Remove MCP servers from your catalogue.'
  static override description = 'Shows the plan and asks before writing (--yes skips the question); everything else in mcp.json stays as it is.'
  static override strict = false
  static override args = { name: Args.string({ required: true, description: 'Server name; several may follow.' }) }
  static override flags = { ...planFlags }

  async run(): Promise<PlanResult> {
    const { argv, flags } = await this.parse(ConfigMcpRm)
    const kernel = await this.kernel()
    const file = mcpFileOf(kernel.omhHome)
    const doc = await openMcpDocument(file, { maxBytes: kernel.settings.fileBytes?.value })
    const known = Object.keys(doc.servers)
    const plan: McpChange[] = []
    for (const name of new Set(argv as string[])) {
      if (!Object.hasOwn(doc.servers, name)) throw OmhError.of(MCP_SERVER_NOT_FOUND, { args: [name, file], hintArgs: [known, closest(name, known)] })
      plan.push({ name, change: 'removed' })
    }
    return carryOut(this.io(), doc, plan, flags)
  }
}
