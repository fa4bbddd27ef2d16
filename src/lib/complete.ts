/**
 * Shell completion, worked out from oclif's manifest alone: this module
 * imports nothing, so `omh __complete` answers commands and flags without
 * loading oclif or the kernel. Only harness names, session ids and editor
 * names need omh's own code, and only those load it (`bin/run.js`).
 */

export interface ManifestFlag {
  readonly name: string
  readonly char?: string
  readonly type: 'boolean' | 'option'
  readonly options?: readonly string[]
  readonly hidden?: boolean
  readonly summary?: string
  readonly description?: string
}

export interface ManifestCommand {
  readonly id: string
  readonly hidden?: boolean
  readonly summary?: string
  readonly description?: string
  readonly flags: Readonly<Record<string, ManifestFlag>>
  readonly args: Readonly<Record<string, { readonly name: string; readonly options?: readonly string[] }>>
}

export interface Manifest {
  readonly commands: Readonly<Record<string, ManifestCommand>>
  /** Topic descriptions by id (`config:mcp`), from package.json's `oclif.topics`. */
  readonly topics?: Readonly<Record<string, { readonly description?: string }>>
}

/** What omh knows only by looking: the values of one kind. */
export type Dynamic = 'harness' | 'session' | 'editor'

/** The answer for one word: fixed candidates (word, description), values to look up, or the shell's own file names. */
export interface Completion {
  readonly candidates: readonly (readonly [word: string, description: string])[]
  readonly dynamic?: Dynamic
  readonly files?: boolean
}

/** The argument names whose values omh can list. */
const ARG_VALUES: Readonly<Record<string, Dynamic | 'files'>> = { harness: 'harness', session: 'session', editor: 'editor', file: 'files' }
/** Flags whose values omh can list. */
const FLAG_VALUES: Readonly<Record<string, Dynamic>> = { session: 'session' }
/** The hidden command a bare `omh <harness>` runs. */
const LAUNCH = 'launch'

const firstLine = (text: string | undefined) => (text ?? '').split('\n')[0]!.trim()

function flagsOf(command: ManifestCommand | undefined): ManifestFlag[] {
  return command ? Object.values(command.flags).filter((f) => !f.hidden) : []
}

const findFlag = (flags: readonly ManifestFlag[], word: string) =>
  flags.find((f) => (word.startsWith('--') ? `--${f.name}` === word : f.char !== undefined && `-${f.char}` === word))

/**
 * The completions for the last of `words`, the words typed after `omh`
 * (the last one possibly empty).
 */
export function complete(manifest: Manifest, words: readonly string[]): Completion {
  const cur = words.at(-1) ?? ''
  const before = words.slice(0, -1)
  const visible = Object.values(manifest.commands).filter((c) => !c.hidden)
  const ids = visible.map((c) => c.id.split(':'))
  const launch = manifest.commands[LAUNCH]
  let path: string[] = []
  let command: ManifestCommand | undefined
  let positional = 0
  for (let n = 0; n < before.length; n++) {
    const word = before[n]!
    if (word === '--') return { candidates: [] }
    const flags = flagsOf(command ?? launch)
    if (word.startsWith('-')) {
      if (!word.includes('=') && findFlag(flags, word)?.type === 'option') n++
      continue
    }
    const next = [...path, word]
    if (ids.some((id) => next.every((w, i) => id[i] === w))) {
      path = next
      command = manifest.commands[path.join(':')]
      positional = 0
      continue
    }
    // A first word that is no command is a harness: what follows is the harness's.
    if (!path.length) return { candidates: [] }
    positional++
  }

  const flags = flagsOf(command ?? (path.length ? undefined : launch))
  const valueOf = before.length ? findFlag(flags, before.at(-1)!) : undefined
  if (valueOf?.type === 'option' && !before.at(-1)!.includes('=')) return valuesOf(valueOf, cur)
  if (cur.startsWith('-')) {
    const eq = cur.indexOf('=')
    if (eq > 0) {
      const flag = findFlag(flags, cur.slice(0, eq))
      if (flag?.type !== 'option') return { candidates: [] }
      const values = valuesOf(flag, cur.slice(eq + 1))
      return { ...values, candidates: values.candidates.map(([w, d]) => [`${cur.slice(0, eq + 1)}${w}`, d] as const) }
    }
    return match(flags.map((f) => [`--${f.name}`, firstLine(f.summary ?? f.description)] as const), cur)
  }

  const candidates: (readonly [string, string])[] = []
  // Subcommands and topics one word below what is typed.
  const seen = new Set<string>()
  for (const c of visible) {
    const id = c.id.split(':')
    if (id.length <= path.length || !path.every((w, i) => id[i] === w)) continue
    const word = id[path.length]!
    if (seen.has(word)) continue
    seen.add(word)
    const exact = id.length === path.length + 1
    const topic = manifest.topics?.[[...path, word].join(':')]?.description
    candidates.push([word, exact ? firstLine(c.summary ?? c.description) : firstLine(topic)])
  }
  if (!path.length) return { ...match(candidates, cur), dynamic: 'harness' }
  if (!command) return match(candidates, cur)
  const arg = Object.values(command.args)[positional]
  if (!arg) return match(candidates, cur)
  if (arg.options) return match([...candidates, ...arg.options.map((o) => [o, ''] as const)], cur)
  const kind = command.id === 'adapters:show' && arg.name === 'name' ? 'harness' : ARG_VALUES[arg.name]
  if (kind === 'files') return { ...match(candidates, cur), files: true }
  return kind ? { ...match(candidates, cur), dynamic: kind } : match(candidates, cur)
}

function valuesOf(flag: ManifestFlag, cur: string): Completion {
  if (flag.options) return match(flag.options.map((o) => [o, ''] as const), cur)
  const kind = FLAG_VALUES[flag.name]
  return kind ? { candidates: [], dynamic: kind } : { candidates: [] }
}

const match = (candidates: readonly (readonly [string, string])[], cur: string): Completion => ({
  candidates: candidates.filter(([w]) => w.startsWith(cur)),
})

/** The lines `omh __complete` prints: `word<TAB>description`, or `:files` for the shell's own file names. */
export function lines(completion: Completion, values: readonly string[], cur: string): string[] {
  const out = [...completion.candidates.map(([w, d]) => (d ? `${w}\t${d.replace(/[\t\n]/g, ' ')}` : w))]
  for (const v of values) if (v.startsWith(cur) && !completion.candidates.some(([w]) => w === v)) out.push(v)
  if (completion.files) out.push(':files')
  return out
}
