/**
 * The command line as the fast path reads it. Each command declares, as the static `answeredAgain`,
 * whether it may be answered again; oclif's manifest carries that declaration with the command's
 * flags, and the build folds the manifest into the boot file. One grammar: the commands say it,
 * the CLI and the fast path read it.
 */

/**
 * A command that only reads files: it starts no process (but git reading refs), opens no
 * connection, writes nothing and prints nothing that depends on time, so its answer is a function
 * of the files it read. `unless`: flags that make a run print what must never lie in a cache.
 */
export interface AnsweredAgain {
  readonly unless?: readonly string[]
}

export interface Grammar {
  /** The commands that may be answered again, by their words joined with spaces, each with the flags that stop it. */
  readonly answered: Readonly<Record<string, readonly string[]>>
  /** Every command, by its words joined with spaces. */
  readonly commands: readonly string[]
  /** The spellings of the launch's session option, then of its runtime option. */
  readonly session: readonly string[]
  readonly runtime: readonly string[]
}

interface ManifestFlag {
  readonly name: string
  readonly char?: string
  readonly type: string
}

/** The part of oclif's manifest the grammar is made of. */
export interface Manifest {
  readonly commands: Readonly<Record<string, { readonly answeredAgain?: AnsweredAgain; readonly flags?: Readonly<Record<string, ManifestFlag>> }>>
}

const spellings = (flag: ManifestFlag | undefined): string[] => (flag?.type === 'option' ? [`--${flag.name}`, ...(flag.char ? [`-${flag.char}`] : [])] : [])

/** The grammar a manifest gives. */
export function grammarOf(manifest: Manifest): Grammar {
  const answered: Record<string, readonly string[]> = {}
  for (const [id, command] of Object.entries(manifest.commands)) if (command.answeredAgain) answered[id.replaceAll(':', ' ')] = command.answeredAgain.unless ?? []
  const launch = manifest.commands['launch']?.flags ?? {}
  return {
    answered,
    commands: Object.keys(manifest.commands).map((id) => id.replaceAll(':', ' ')),
    session: spellings(launch['session']),
    runtime: spellings(launch['runtime']),
  }
}

/** The first words of omh's own commands (and oclif's `help`): never a harness. */
export const commandWords = (grammar: Grammar): Set<string> => new Set(['help', ...grammar.commands.map((id) => id.split(' ')[0]!)])

/** Whether `argv` runs a command that may be answered again: its help, or one that declares so, without a flag that stops it. */
export function answerable(argv: readonly string[], grammar: Grammar): boolean {
  const [first] = argv
  if (first === '--help' || first === 'help') return true
  // The longest run of leading words that names a command is that command; the rest are its arguments.
  let id: string | undefined
  for (let n = 1; n <= argv.length && !argv[n - 1]!.startsWith('-'); n++) {
    const words = argv.slice(0, n).join(' ')
    if (grammar.commands.includes(words)) id = words
  }
  const unless = id === undefined ? undefined : grammar.answered[id]
  return unless !== undefined && !argv.some((arg) => unless.includes(arg.split('=')[0]!))
}
