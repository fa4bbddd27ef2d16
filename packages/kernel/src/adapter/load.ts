import { readdir } from 'node:fs/promises'
import path from 'node:path'
import {
  FILE_UNREADABLE,
  OmhError,
  isOmhError,
  CAPABILITY_CLASSES,
  type Problem,
  type CapabilityClass,
  type ToolWord,
  type Binding,
} from '@omh/plugin-api'
import { byText, problemsFromIssues } from '@omh/plugin-kit'
import type { Expectation, Probe } from '../probe/probe.js'
import { parseToml, type TomlDocument } from '@omh/plugin-kit/toml'
import { expandGuest } from './guest-path.js'
import { adapterSchema, editorSchema, type AdapterFile, type AdapterKey, type AdapterLogin, type AdapterTurn, type EditorFile } from './schema.js'
import { notThere, readTextFile } from '../user-files.js'

/** A binding as the kernel keeps it: guest paths expanded, options still raw. */
export interface ResolvedBinding extends Binding {
  readonly capability: CapabilityClass
  readonly options: Readonly<Record<string, unknown>> | undefined
  /** What `omh doctor` must find in the harness's own output for every item staged here; absent: nothing. */
  readonly expect?: readonly Expectation[]
}

/** A validated adapter with guest paths expanded. */
export interface Adapter {
  readonly file: string
  readonly name: string
  readonly bin: string
  /** Arguments every session gives the harness, before the user's own. */
  readonly args: readonly string[]
  readonly install: string
  /** The npm package and version the adapter's facts were checked against. */
  readonly release?: { readonly package: string; readonly version: string }
  readonly creds: readonly string[]
  readonly egress: readonly string[]
  /** API keys kept outside the container, behind the credential proxy. */
  readonly keys: readonly AdapterKey[]
  readonly token: readonly string[]
  readonly login?: string
  /** Subscription logins kept outside the container, their files' guest paths expanded. */
  readonly logins: readonly AdapterLogin[]
  /** Commands that make the harness say what it loaded, by key. */
  readonly probes: Readonly<Record<string, Probe>>
  /** How `omh doctor --turn` drives a turn; absent: the harness cannot be driven. */
  readonly turn?: AdapterTurn
  readonly tools: Readonly<Partial<Record<ToolWord, string>>>
  /** Bound capabilities, in canonical class order. */
  readonly bindings: readonly ResolvedBinding[]
}

/** Where an adapter file was found. A plugin's file shadows a bundled one of the same name, a personal file both. */
export interface AdapterSource {
  readonly name: string
  readonly file: string
  readonly origin: 'bundled' | 'plugin' | 'personal'
  /** The plugin package that ships it, when `origin` is `plugin`. */
  readonly plugin?: string
  /** The file this one overrides. */
  readonly shadows?: string
}

/** The outcome of reading one adapter file: the adapter, or everything wrong with it. */
export interface AdapterCheck {
  readonly file: string
  readonly doc?: TomlDocument
  readonly data?: AdapterFile
  readonly problems: readonly Problem[]
}

/** A TOML file's document, or its one problem: bytes that are not UTF-8, or a syntax error. */
function readTomlFile(file: string, maxBytes: number | undefined): { doc: TomlDocument } | { problem: Problem } {
  const read = readTextFile(file, { maxBytes })
  if (!read) throw notThere(file)
  if (!read.ok) return { problem: read.problem }
  try {
    return { doc: parseToml(read.text, file) }
  } catch (error) {
    if (isOmhError(error) && error.code === 'TOML_SYNTAX') return { problem: syntaxProblem(file, error) }
    throw error
  }
}

/**
 * Reads and checks an adapter file against the schema. A TOML syntax error
 * becomes one located problem. `maxBytes` bounds the read (absent: DEFAULT_FILE_BYTES).
 */
export async function checkAdapterFile(file: string, expectName?: string, maxBytes?: number): Promise<AdapterCheck> {
  const read = readTomlFile(file, maxBytes)
  if ('problem' in read) return { file, problems: [read.problem] }
  const { doc } = read
  const parsed = adapterSchema.safeParse(doc.data)
  const problems = parsed.success
    ? []
    : problemsFromIssues(parsed.error.issues, { file, data: doc.data, schema: adapterSchema, locate: doc.locate })
  if (expectName && typeof doc.data['name'] === 'string' && doc.data['name'] !== expectName) {
    const at = doc.locate(['name'])
    problems.push({
      file,
      ...(at ? { line: at.line, column: at.column } : {}),
      path: 'name',
      message: `is "${doc.data['name']}", but omh finds this adapter as "${expectName}" by its file name`,
    })
  }
  return parsed.success ? { file, doc, data: parsed.data, problems } : { file, doc, problems }
}

function syntaxProblem(file: string, error: OmhError): Problem {
  const m = /:(\d+):(\d+) is not valid TOML: (.*)$/s.exec(error.message)
  return m
    ? { file, line: Number(m[1]), column: Number(m[2]), message: `not valid TOML: ${m[3]}` }
    : { file, message: error.message }
}

export function toAdapter(file: string, data: AdapterFile): Adapter {
  const bindings: ResolvedBinding[] = []
  for (const capability of CAPABILITY_CLASSES) {
    const b = data.capabilities[capability]
    if (!b) continue
    const hooks = 'events' in b ? b : undefined
    bindings.push({
      capability,
      path: expandGuest(b.path),
      also: (b.also ?? []).map(expandGuest),
      render: b.render,
      options: b.options,
      expect: b.expect ?? [],
      ...(b.import ? { import: b.import } : {}),
      ...(hooks
        ? {
            events: hooks.events,
            ...(hooks.fields ? { fields: hooks.fields } : {}),
            ...(hooks.inject ? { inject: hooks.inject } : {}),
            ...(hooks.refuse ? { refuse: hooks.refuse } : {}),
          }
        : {}),
    })
  }
  return {
    file,
    name: data.name,
    bin: data.bin,
    args: data.args ?? [],
    install: data.install,
    ...(data.release ? { release: data.release } : {}),
    creds: (data.creds ?? []).map(expandGuest),
    egress: data.egress ?? [],
    keys: data.keys ?? [],
    token: (data.token ?? []).map(expandGuest),
    ...(data.login ? { login: data.login } : {}),
    logins: (data.logins ?? []).map((l) => ({ ...l, file: expandGuest(l.file) })),
    probes: data.probes ?? {},
    ...(data.turn ? { turn: data.turn } : {}),
    tools: data.tools ?? {},
    bindings,
  }
}

/** Adapter files by name: bundled ones, then those plugins ship, then personal ones, each shadowing the one before. */
export async function findAdapters(dirs: {
  bundled: string
  shipped?: readonly { dir: string; plugin: string }[]
  personal: string
}): Promise<AdapterSource[]> {
  const byName = new Map<string, AdapterSource>()
  const places = [
    { origin: 'bundled' as const, dir: dirs.bundled },
    ...(dirs.shipped ?? []).map((s) => ({ origin: 'plugin' as const, ...s })),
    { origin: 'personal' as const, dir: dirs.personal },
  ]
  for (const { origin, dir, ...from } of places) {
    for (const file of await tomlFiles(dir)) {
      const name = path.basename(file, '.toml')
      const shadowed = byName.get(name)
      byName.set(name, { name, file, origin, ...from, ...(shadowed ? { shadows: shadowed.file } : {}) })
    }
  }
  return [...byName.values()].sort((a, b) => byText(a.name, b.name))
}

async function tomlFiles(dir: string): Promise<string[]> {
  try {
    const names = await readdir(dir)
    // A dot file is no adapter: editors and tools keep their own there (`.name.toml.swp`, `.hidden.toml`).
    return names.filter((n) => n.endsWith('.toml') && !n.startsWith('.')).sort().map((n) => path.join(dir, n))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw OmhError.of(FILE_UNREADABLE, { args: [dir, (error as Error).message], cause: error })
  }
}

export interface EditorCheck {
  readonly file: string
  readonly data?: EditorFile
  readonly problems: readonly Problem[]
}

export async function checkEditorFile(file: string, maxBytes?: number): Promise<EditorCheck> {
  const read = readTomlFile(file, maxBytes)
  if ('problem' in read) return { file, problems: [read.problem] }
  const { doc } = read
  const parsed = editorSchema.safeParse(doc.data)
  if (parsed.success) return { file, data: parsed.data, problems: [] }
  return {
    file,
    problems: problemsFromIssues(parsed.error.issues, { file, data: doc.data, schema: editorSchema, locate: doc.locate }),
  }
}

