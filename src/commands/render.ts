import { createHash } from 'node:crypto'
import { lstat, readdir } from 'node:fs/promises'
import path from 'node:path'
import { Args, Flags } from '../lib/oclif.js'
import { CAPABILITY_CLASSES, type DroppedItem, type StagedEntry, type TranslatedItem } from '@omh/plugin-api'
import { chooseDevcontainer, readDevcontainer, type EffectiveSettings } from '@omh/kernel'
import { droppedDetail, environmentLines, renderSummary } from '../lib/dropped.js'
import { OmhCommand } from '../lib/omh-command.js'
import { bytes, table } from '../lib/table.js'
import type { AnsweredAgain } from '@omh/fast-path'

interface FileListing {
  guest: string
  kind: 'file' | 'tree'
  bytes: number
  sha256?: string
  /** The staged text, with --content. */
  content?: string
  entries?: { name: string; source: string }[]
}

interface SelectionListing {
  capability: string
  /** Where the user keeps this class. */
  where: string
  available: number
  selected: string[]
  /** The [use] list that decided, and its settings file and layer; null when none did (everything is used). */
  use: { value: string[]; layer: string; file: string } | null
}

interface CapabilityListing {
  capability: string
  render: string
  renderer: { name: string; version: string }
  path: string
  also: string[]
  files: FileListing[]
  dropped: DroppedItem[]
  translated: TranslatedItem[]
}

/** What became of one selected item: staged as itself, as something else, or not at all. */
export interface ItemListing {
  capability: string
  name: string
  status: 'native' | 'translated' | 'dropped'
  /** translated: what it became. */
  to?: string
  /** dropped: why. */
  reason?: string
}

export interface RenderResult {
  harness: string
  adapter: string
  capabilities: CapabilityListing[]
  /** Every selected item, in class then selection order, with what became of it. */
  items: ItemListing[]
  dropped: DroppedItem[]
  translated: TranslatedItem[]
  /** Names of variables the container gets; their values stay out of this report. */
  env: string[]
  /** How each class of the profile was selected, and which settings layer decided. */
  selection: SelectionListing[]
  /** Things to know about the profile, one sentence each. */
  notices: string[]
  /** The repository's devcontainer.json, and the keys of it omh does not honour. */
  devcontainer: { file: string; unsupported: { key: string; why: string }[] } | null
}

export default class Render extends OmhCommand<RenderResult> {
  /** Answered again while the files it read are unchanged; never with the content, which holds secrets. */
  static answeredAgain: AnsweredAgain = { unless: ['--content'] }
  static override summary = 'Show what would be staged for a harness, without starting anything.'
  static override description =
    'For each capability the adapter binds: the guest path, the renderer, the files and their sizes; then every profile item the harness cannot express, with the reason.'
  static override args = {
    harness: Args.string({ required: true, description: 'Harness name, e.g. claude.' }),
  }

  static override flags = {
    content: Flags.boolean({ summary: 'Print each staged document as it is, secrets included, and where each directory entry points.', default: false }),
  }

  async run(): Promise<RenderResult> {
    const { args, flags } = await this.parse(Render)
    const kernel = await this.kernel()
    const adapter = await kernel.adapter(args.harness)
    const report = await kernel.renderHarness(adapter, kernel.repoRoot)
    const { profile } = report
    const final = new Map(report.files.map((f) => [f.guest, f]))
    const capabilities: CapabilityListing[] = []
    for (const c of report.capabilities) {
      capabilities.push({
        capability: c.capability,
        render: c.binding.render,
        renderer: { name: c.renderer.name, version: c.renderer.version },
        path: c.binding.path,
        also: [...c.binding.also],
        files: await Promise.all(c.files.map((f) => listing(final.get(f.guest) ?? f, flags.content))),
        dropped: [...c.dropped],
        translated: [...c.translated],
      })
    }
    const items = CAPABILITY_CLASSES.flatMap((capability) =>
      (profile[capability] as readonly { name: string }[]).map((item): ItemListing => {
        const same = (d: { capability: string; name: string }) => d.capability === capability && d.name === item.name
        const dropped = report.dropped.find(same)
        const translated = report.translated.find(same)
        if (dropped) return { capability, name: item.name, status: 'dropped', reason: dropped.reason }
        if (translated) return { capability, name: item.name, status: 'translated', to: translated.to }
        return { capability, name: item.name, status: 'native' }
      }),
    )
    const result: RenderResult = {
      harness: adapter.name,
      adapter: adapter.file,
      capabilities,
      items,
      dropped: [...report.dropped],
      translated: [...report.translated],
      env: Object.keys(report.env).sort(),
      selection: CAPABILITY_CLASSES.map((capability) => {
        const s = profile.selection[capability]
        return {
          capability,
          where: s.where,
          available: s.available.length,
          selected: [...s.selected],
          use: s.use ? { value: [...s.use.value], layer: s.use.layer, file: s.use.file } : null,
        }
      }),
      notices: [...profile.notices],
      devcontainer: devcontainerOf(kernel.repoRoot, kernel.settings),
    }
    if (!this.jsonEnabled()) this.print(result, flags.content)
    return result
  }

  private print(result: RenderResult, content: boolean): void {
    const s = this.style
    this.log(`${s.bold(result.harness)} ${s.dim(`(${path.relative(process.cwd(), result.adapter) || result.adapter})`)}`)
    const rows: string[][] = []
    for (const c of result.capabilities) {
      const first = [s.bold(c.capability), c.render]
      if (!c.files.length) rows.push([...first, s.dim(`${c.path}  (nothing to stage)`), ''])
      c.files.forEach((f, n) => {
        const lead = n === 0 ? first : ['', '']
        const size =
          f.kind === 'tree'
            ? `${f.entries!.length} ${f.entries!.length === 1 ? 'entry' : 'entries'}${f.entries!.length ? `: ${f.entries!.map((e) => e.name).join(', ')}` : ''}`
            : bytes(f.bytes)
        rows.push([...lead, f.guest, size])
      })
    }
    this.log(table(rows, '  '))
    if (result.env.length) this.log(s.dim(`  container env: ${result.env.join(', ')}`))
    for (const sel of result.selection) {
      if (sel.use) this.log(s.dim(`  use.${sel.capability} = ${JSON.stringify(sel.use.value)}  (${sel.use.layer}: ${sel.use.file})`))
    }
    for (const c of result.capabilities) {
      for (const f of c.files) {
        if (f.content !== undefined) this.log(`\n${s.bold(`── ${f.guest}`)}\n${f.content.replace(/\n$/, '')}`)
        else if (f.entries && content) {
          this.log(`\n${s.bold(`── ${f.guest}/`)}`)
          for (const e of f.entries) this.log(`${e.name} → ${e.source}`)
        }
      }
    }
    for (const notice of result.notices) this.notice(`${this.errStyle.bold('omh:')} ${notice}`)
    const d = result.devcontainer
    if (d) for (const line of environmentLines({ describe: d.file, unsupported: d.unsupported, notes: [] }, this.verbose)) this.notice(`${this.errStyle.bold('omh:')} ${line}`)
    const summary = renderSummary(result.dropped, result.translated, this.verbose)
    if (summary) {
      this.notice(`${this.errStyle.bold('omh:')} ${result.harness} — ${summary}`)
      if (this.verbose) for (const line of droppedDetail(result.dropped, result.translated)) this.notice(line)
    }
  }
}

async function listing(entry: StagedEntry, content: boolean): Promise<FileListing> {
  if (entry.kind === 'file') {
    const data = typeof entry.content === 'string' ? Buffer.from(entry.content) : entry.content
    return {
      guest: entry.guest,
      kind: 'file',
      bytes: data.byteLength,
      sha256: createHash('sha256').update(data).digest('hex'),
      ...(content ? { content: Buffer.from(data).toString('utf8') } : {}),
    }
  }
  let total = 0
  for (const e of entry.entries) total += await sizeOf(e.source)
  return { guest: entry.guest, kind: 'tree', bytes: total, entries: entry.entries.map((e) => ({ ...e })) }
}

async function sizeOf(file: string): Promise<number> {
  const info = await lstat(file)
  if (!info.isDirectory()) return info.size
  let total = 0
  for (const name of await readdir(file)) total += await sizeOf(path.join(file, name))
  return total
}

/** The devcontainer.json the settings choose, read as a launch reads it: only its file, never its build. */
function devcontainerOf(root: string | undefined, settings: EffectiveSettings): RenderResult['devcontainer'] {
  if (!root) return null
  const chosen = chooseDevcontainer(root, settings.last((s) => s.image?.devcontainer)?.value)
  if (!('file' in chosen)) return null
  const read = readDevcontainer(chosen.file, root, settings.fileBytes?.value)
  return { file: path.relative(root, chosen.file), unsupported: read.unsupported.map((u) => ({ ...u })) }
}
