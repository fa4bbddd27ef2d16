import os from 'node:os'
import path from 'node:path'
import { Args, Flags } from '../../../lib/oclif.js'
import { IMPORT_SOURCE_MISSING, IMPORT_UNSUPPORTED, NOT_A_REPOSITORY, OmhError } from '@omh/plugin-api'
import { mcpFileOf, openMcpDocument, planPut, readTextSafe } from '@omh/kernel'
import { carryOut, planFlags, readServers, type PlanResult } from '../../../lib/mcp-plan.js'
import { OmhCommand } from '../../../lib/omh-command.js'

export interface ImportResult extends PlanResult {
  harness: string
  /** The file the servers were read from. */
  from: string
}

export default class ConfigMcpImport extends OmhCommand<ImportResult> {
  static override summary = "Bring a harness's MCP servers into your catalogue."
  static override description =
    "Reads the file the harness's adapter names in `import` (`$HOME` and `$REPO` are this machine's home and repository), or --from, with the harness's own renderer. Shows what would be added, changed, left the same, or cannot come in (conflicting, with the reason); env and header values are never shown. With your consent (--yes, or a prompt on a terminal) writes $OMH_HOME/mcp.json whole, keeping every other server and key in it."
  static override examples = ['<%= config.bin %> config mcp import claude', '<%= config.bin %> config mcp import codex --from ~/work/.codex/config.toml --yes']
  static override args = { harness: Args.string({ required: true, description: 'Harness name, e.g. claude.' }) }
  static override flags = {
    ...planFlags,
    from: Flags.string({ summary: 'Read this file instead of the one the adapter names.' }),
  }

  async run(): Promise<ImportResult> {
    const { args, flags } = await this.parse(ConfigMcpImport)
    const kernel = await this.kernel()
    const adapter = await kernel.adapter(args.harness)
    const { binding, read } = kernel.reader(adapter, 'mcp')
    let from: string
    // A file of the repository may not lead out of it; one of the user's own, or named with --from, may.
    let within: string | undefined
    if (flags.from) from = path.resolve(flags.from)
    else if (binding.import) ({ from, within } = this.expandHost(binding.import, kernel.repoRoot))
    else throw OmhError.of(IMPORT_UNSUPPORTED, { args: [adapter.name, 'its adapter names no `import` path; give the file with --from'], hintArgs: [adapter.file] })

    const maxBytes = kernel.settings.fileBytes?.value
    const content = readTextSafe(from, { within, maxBytes })
    if (content === undefined) throw OmhError.of(IMPORT_SOURCE_MISSING, { args: [from] })
    const { servers, conflicting } = readServers(read, from, content, binding.render)

    const doc = await openMcpDocument(mcpFileOf(kernel.omhHome), { maxBytes })
    if (!this.jsonEnabled()) this.notice(`${this.errStyle.bold('omh:')} ${adapter.name}: read ${from}`)
    const plan = [...planPut(doc, servers), ...conflicting]
    const result = await carryOut(this.io(), doc, plan, flags)
    return { harness: adapter.name, from, ...result }
  }

  /** The file an adapter's `import` names, and the repository it must stay inside when it is `$REPO/…`. */
  private expandHost(template: string, repo: string | undefined): { from: string; within: string | undefined } {
    const out = template.replace(/^\$HOME(?=\/|$)/, process.env['HOME'] || os.homedir())
    if (!/^\$REPO(?=\/|$)/.test(out)) return { from: path.resolve(out), within: undefined }
    if (!repo) throw OmhError.of(NOT_A_REPOSITORY, { args: [process.cwd()] })
    return { from: path.resolve(out.replace(/^\$REPO/, repo)), within: repo }
  }
}
