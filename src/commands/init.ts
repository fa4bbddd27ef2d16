import { lstatSync, rmSync } from 'node:fs'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { Flags } from '../lib/oclif.js'
import { NOT_A_REPOSITORY, OmhError, isOmhError, type McpServer } from '@omh/plugin-api'
import { inspectRepositoryTrust, mcpFileOf, openMcpDocument, planPut, planWrites, readTextSafe, recordTrust, replaceFile, writePlan, type McpChange } from '@omh/kernel'
import { formatPlan, listing, readServers, type ChangeListing } from '../lib/mcp-plan.js'
import { inspectRepository, type Finding, type HarnessFile, type RepositoryFacts } from '../lib/inspect-repo.js'
import { OmhCommand } from '../lib/omh-command.js'
import { table } from '../lib/table.js'

/** A file `omh init` creates when it is absent, and never touches once it is there. */
export interface PlannedFile {
  /** Relative to the repository. */
  file: string
  /** `create`: absent, written by this run; `same`: already as omh would write it; `kept`: yours, left as it is; `refused`: would be created through a link. */
  action: 'create' | 'same' | 'kept' | 'refused'
  content: string
}

/** Where one harness file's servers would come into your catalogue. */
export interface ImportSource {
  file: string
  harness: string
  /** How many servers it holds that omh can keep. */
  servers: number
  /** Why nothing of it can come in, when that is so. */
  note?: string
}

export interface InitResult {
  root: string
  facts: RepositoryFacts
  /** Facts omh decided that no settings key takes: reported, never written as keys. */
  unsettable: { fact: string; value: string; why: string }[]
  files: PlannedFile[]
  imports: { sources: ImportSource[]; file: string; changes: ChangeListing[]; written: boolean }
  /** Files this run wrote. */
  written: string[]
}

const SETTINGS = '.omh/settings.toml'
const GITIGNORE = '.omh/.gitignore'
const NO_KEY = 'no settings key takes it; omh reports it and records it as a comment in .omh/settings.toml'

export default class Init extends OmhCommand<InitResult> {
  static override summary = 'Set this repository up for omh: inspect it, write .omh/settings.toml, report what was decided. Asks nothing.'
  static override description =
    "Reads the repository's own files (never through a link, each up to [limits] file_bytes): package manager and lockfile, languages, test command, and the harness files already there (AGENTS.md, CLAUDE.md, .mcp.json, .codex/, opencode.json, .cursor/rules). Creates .omh/settings.toml and .omh/.gitignore (keeping settings.local.toml out of git) when they are absent, and never changes them once they exist: running it again changes nothing. MCP servers in the repository's harness files can come into your catalogue ($OMH_HOME/mcp.json) with --import, through the same plan as `omh config mcp import`."
  static override examples = ['<%= config.bin %> init', '<%= config.bin %> init --dry-run', '<%= config.bin %> init --import']
  static override flags = {
    'dry-run': Flags.boolean({ summary: 'Show the plan and write nothing.', default: false }),
    import: Flags.boolean({ summary: "Bring the MCP servers of the repository's harness files into your catalogue.", default: false }),
  }

  async run(): Promise<InitResult> {
    const { flags } = await this.parse(Init)
    const kernel = await this.kernel()
    const root = kernel.repoRoot
    if (!root) throw OmhError.of(NOT_A_REPOSITORY, { args: [kernel.options.cwd] })
    const maxBytes = kernel.settings.fileBytes?.value
    const facts = inspectRepository(root, maxBytes)

    const unsettable: InitResult['unsettable'] = []
    if (facts.packageManager) unsettable.push({ fact: 'package manager', value: `${facts.packageManager.name} (${facts.packageManager.from})`, why: NO_KEY })
    const unserved = facts.languages.filter((l) => !facts.packages.some((p) => p.why.startsWith(`${l.name} (`)) && !['JavaScript', 'TypeScript'].includes(l.name))
    if (unserved.length) unsettable.push({ fact: 'languages', value: unserved.map((l) => l.name).join(', '), why: 'omh knows no Debian package for it; add what it needs to [image] packages' })

    const files = [plannedFile(root, SETTINGS, settingsText(facts)), plannedFile(root, GITIGNORE, '# Written by omh init: your local settings and secrets stay out of git.\nsettings.local.toml\n')]

    // Servers from every harness file, planned as one change to the catalogue.
    const sources: ImportSource[] = []
    const servers: McpServer[] = []
    const conflicting: McpChange[] = []
    const from = new Map<string, string>()
    for (const h of facts.harnessFiles.filter((x): x is HarnessFile & { importsWith: string } => Boolean(x.importsWith))) {
      const file = path.join(root, h.path)
      try {
        const adapter = await kernel.adapter(h.importsWith)
        const { binding, read } = kernel.reader(adapter, 'mcp')
        const content = readTextSafe(file, { within: root, maxBytes }) ?? ''
        const got = readServers(read, file, content, binding.render)
        sources.push({ file: h.path, harness: adapter.name, servers: got.servers.length })
        conflicting.push(...got.conflicting)
        for (const server of got.servers) {
          const earlier = servers.find((s) => s.name === server.name)
          if (!earlier) {
            servers.push(server)
            from.set(server.name, h.path)
          } else if (!isDeepStrictEqual(earlier, server)) {
            conflicting.push({ name: server.name, change: 'conflicting', reason: `${h.path} defines it differently from ${from.get(server.name)}, which comes in` })
          }
        }
      } catch (error) {
        // With --import a file that cannot be read stops the run; otherwise it is reported and left.
        if (flags.import || !isOmhError(error)) throw error
        sources.push({ file: h.path, harness: h.importsWith, servers: 0, note: error.message })
      }
    }
    const doc = await openMcpDocument(mcpFileOf(kernel.omhHome), { maxBytes })
    const plan = sources.length ? [...planPut(doc, servers), ...conflicting] : []

    const written: string[] = []
    if (!flags['dry-run']) {
      const created: string[] = []
      try {
        for (const f of files.filter((x) => x.action === 'create')) {
          const full = path.join(root, f.file)
          // Created only while still absent: a file that appeared meanwhile is FILE_CHANGED, not overwritten.
          await replaceFile({ file: full, bytes: undefined }, f.content, 0o644)
          created.push(full)
          written.push(f.file)
        }
        // The settings just written are omh's own words, not the repository's: they need no one's
        // reading before a launch builds the packages they name. Only that file is trusted.
        const settings = path.join(root, SETTINGS)
        if (created.includes(settings)) {
          const trust = await inspectRepositoryTrust({ defaults: kernel.options.defaultsFile, omhHome: kernel.omhHome, omhState: kernel.omhState, cwd: kernel.options.cwd, repoRoot: root })
          const mine = trust.files.filter((f) => f.file === settings)
          if (mine.length) await recordTrust({ ...trust, files: mine })
        }
        if (flags.import && planWrites(plan)) {
          await writePlan(doc, plan)
          written.push(doc.snapshot.file)
        }
      } catch (error) {
        // Whole or nothing: what this run created goes again.
        for (const file of created) rmSync(file, { force: true })
        throw error
      }
    }
    const result: InitResult = {
      root,
      facts,
      unsettable,
      files,
      imports: { sources, file: doc.snapshot.file, changes: plan.map(listing), written: written.includes(doc.snapshot.file) },
      written,
    }
    if (!this.jsonEnabled()) this.print(result, plan, flags)
    return result
  }

  private print(r: InitResult, plan: readonly McpChange[], flags: { 'dry-run': boolean; import: boolean }): void {
    const s = this.style
    const found = (f: Finding | null, none: string) => (f ? `${f.name} ${s.dim(`(${f.from})`)}` : s.dim(none))
    this.log(s.bold(`omh init — ${flags['dry-run'] ? 'the plan' : 'decided'}, asked nothing`))
    const rows: string[][] = [
      ['package manager', found(r.facts.packageManager, 'none found')],
      ['languages', r.facts.languages.length ? r.facts.languages.map((l) => `${l.name} ${s.dim(`(${l.from})`)}`).join(', ') : s.dim('none recognised')],
      ['tests', found(r.facts.test, 'no test command found')],
      ['packages', r.facts.packages.length ? r.facts.packages.map((p) => p.name).join(', ') : s.dim("none beyond omh's base")],
    ]
    if (r.facts.setup.length) rows.push(['setup', r.facts.setup.map((f) => `${f.name} ${s.dim(`(${f.from})`)}`).join(', ')])
    for (const [n, h] of r.facts.harnessFiles.entries()) rows.push([n === 0 ? 'harness files' : '', `${h.path}${h.kind === 'directory' ? '/' : ''}: ${h.use}`])
    if (!r.facts.harnessFiles.length) rows.push(['harness files', s.dim('none')])
    const verb = { create: flags['dry-run'] ? 'would create' : 'created', same: 'already as omh writes it', kept: 'yours: left as it is', refused: 'not created: a link stands in its way' }
    for (const f of r.files) rows.push([f.file === SETTINGS ? 'settings' : '', `${f.file} ${s.dim(verb[f.action])}`])
    this.log(table(rows))
    if (r.unsettable.length) {
      this.log('')
      this.log(`No settings key takes ${r.unsettable.map((u) => u.fact).join(', ')}: omh reports ${r.unsettable.length === 1 ? 'it' : 'them'} here and records ${r.unsettable.length === 1 ? 'it' : 'them'} as comments in ${SETTINGS}.`)
    }
    if (r.imports.sources.length) {
      this.log('')
      for (const src of r.imports.sources) this.log(`${src.file} (${src.harness}): ${src.note ?? `${src.servers} MCP server${src.servers === 1 ? '' : 's'}`}`)
      if (plan.length) this.log(formatPlan(plan, s))
      if (!planWrites(plan)) this.log(s.dim(`Your catalogue ${r.imports.file} already has them.`))
      else if (r.imports.written) this.log(`Wrote ${r.imports.file}.`)
      else if (!flags.import) this.log(`Bring them into ${r.imports.file} with \`omh init --import\`${flags['dry-run'] ? '' : ' (it changes nothing else)'}.`)
    }
    if (r.facts.localConfig.length) {
      this.log('')
      this.log(`${r.facts.localConfig.join(', ')} ${r.facts.localConfig.length === 1 ? 'looks' : 'look'} like local configuration, which a session does not get by itself: to copy ${r.facts.localConfig.length === 1 ? 'it' : 'them'} into new sessions, add \`carry_in = ${JSON.stringify(r.facts.localConfig)}\` under [session] in .omh/settings.local.toml.`)
    }
    if (!flags['dry-run'] && !r.written.length) this.log(s.dim('Nothing to change.'))
  }
}

/** A file omh creates when absent: never through a link, never over one of yours. */
function plannedFile(root: string, rel: string, content: string): PlannedFile {
  const dir = lstatOrUndefined(path.join(root, path.dirname(rel)))
  if (dir && !dir.isDirectory()) return { file: rel, action: 'refused', content }
  const there = lstatOrUndefined(path.join(root, rel))
  if (!there) return { file: rel, action: 'create', content }
  if (!there.isFile()) return { file: rel, action: there.isSymbolicLink() ? 'refused' : 'kept', content }
  const now = readTextSafe(path.join(root, rel), { within: root })
  return { file: rel, action: now === content ? 'same' : 'kept', content }
}

function lstatOrUndefined(p: string) {
  try {
    return lstatSync(p)
  } catch {
    return undefined
  }
}

/**
 * The shared settings layer as `omh init` first writes it: the Debian packages
 * and the test command it decided as keys, and what it found as comments, in
 * omh's own words only (nothing the repository wrote is copied into it but
 * the names of its files).
 */
export function settingsText(facts: RepositoryFacts): string {
  const line = (label: string, value: string) => `#   ${label}: ${value}`
  const lines = [
    "# omh's settings for this repository, shared with everyone who clones it. Every key is",
    '# described in docs/configuration.md; personal values and secrets go in settings.local.toml.',
    '#',
    '# What `omh init` found here:',
    line('package manager', facts.packageManager ? `${facts.packageManager.name} (${facts.packageManager.from})` : 'none found'),
    line('languages', facts.languages.map((l) => l.name).join(', ') || 'none recognised'),
    line('tests', facts.test ? `${facts.test.name} (${facts.test.from})` : 'none found'),
    line('harness files', facts.harnessFiles.map((h) => h.path).join(', ') || 'none'),
  ]
  if (facts.packages.length) {
    lines.push('', '[image]', '# Debian packages added to the session image, for:')
    for (const p of facts.packages) lines.push(`#   ${p.name}: ${p.why}`)
    lines.push(`packages = [${facts.packages.map((p) => JSON.stringify(p.name)).join(', ')}]`)
  }
  if (facts.test || facts.setup.length) {
    lines.push('', '[session]')
    if (facts.setup.length) lines.push(`# Run once in each new session's worktree, before the harness starts (${facts.setup.map((f) => f.from).join(', ')}).`, `setup = [${facts.setup.map((f) => JSON.stringify(f.name)).join(', ')}]`)
    if (facts.test) lines.push(`# The project's tests (${facts.test.from}): \`omh sessions test\` runs it in a session.`, `test = ${JSON.stringify(facts.test.name)}`)
  }
  return `${lines.join('\n')}\n`
}
