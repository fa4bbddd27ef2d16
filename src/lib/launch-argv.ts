import { LAUNCH_FLAG_MISPLACED, OmhError, USAGE } from '@omh/plugin-api'

/** omh's own flags for a launch, as they stand before the harness name. */
export interface LaunchFlags {
  new: boolean
  session?: string
  dryRun: boolean
  runtime?: string
  account?: string
  json: boolean
  verbose: boolean
  color: 'auto' | 'always' | 'never'
}

export interface ParsedLaunch {
  readonly flags: LaunchFlags
  readonly harness: string
  /** Everything after the harness name, the first `--` taken out. */
  readonly args: readonly string[]
}

interface FlagSpec {
  readonly name: string
  readonly short?: string
  readonly value: boolean
  set(flags: LaunchFlags, value: string): void
}

const COLORS = ['auto', 'always', 'never'] as const

/** The flags a launch takes. Their long names are refused after the harness name. */
export const LAUNCH_FLAGS: readonly FlagSpec[] = [
  { name: '--new', value: false, set: (f) => (f.new = true) },
  { name: '--session', short: '-s', value: true, set: (f, v) => (f.session = v) },
  { name: '--dry-run', value: false, set: (f) => (f.dryRun = true) },
  { name: '--runtime', value: true, set: (f, v) => (f.runtime = v) },
  { name: '--account', short: '-a', value: true, set: (f, v) => (f.account = v) },
  { name: '--json', value: false, set: (f) => (f.json = true) },
  { name: '--verbose', value: false, set: (f) => (f.verbose = true) },
  {
    name: '--color',
    value: true,
    set: (f, v) => {
      if (!COLORS.includes(v as LaunchFlags['color'])) throw usage(`--color takes auto, always or never, not "${v}".`)
      f.color = v as LaunchFlags['color']
    },
  },
]

/** Flags omh answers itself wherever they stand; after a harness name they are refused like the others. */
const ANSWERED_BY_OMH = ['--help']

const usage = (what: string) => OmhError.of(USAGE, { args: [what], hintArgs: ['--help'] })

/** Where a launch's leading flags end: the index of the first word that is not one of them or its value; -1 if none. */
export function firstWord(argv: readonly string[]): number {
  for (let n = 0; n < argv.length; n++) {
    const arg = argv[n]!
    if (arg === '--') return -1
    if (!arg.startsWith('-')) return n
    const spec = LAUNCH_FLAGS.find((f) => f.name === arg || f.short === arg)
    if (spec?.value) n++
  }
  return -1
}

/**
 * Reads `omh [flags] <harness> [args…]`: omh's flags before the name, the
 * harness's arguments after it, passed on untouched. One of omh's long flags
 * after the name is refused rather than taken or passed on (the user meant
 * one or the other, and guessing wrong either way costs them); after `--`,
 * anything goes to the harness.
 */
export function parseLaunch(argv: readonly string[]): ParsedLaunch {
  const flags: LaunchFlags = { new: false, dryRun: false, json: false, verbose: false, color: 'auto' }
  let n = 0
  for (; n < argv.length; n++) {
    const arg = argv[n]!
    if (!arg.startsWith('-') || arg === '-') break
    if (arg === '--') throw usage('A harness name must come before `--`.')
    const [name, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    const spec = LAUNCH_FLAGS.find((f) => f.name === name || f.short === name)
    if (!spec) throw usage(`${name} is not a flag of \`omh <harness>\`; its flags are ${LAUNCH_FLAGS.map((f) => f.name).join(', ')}.`)
    if (!spec.value) {
      if (inline !== undefined) throw usage(`${name} takes no value.`)
      spec.set(flags, '')
      continue
    }
    const value = inline ?? argv[++n]
    if (value === undefined || (inline === undefined && value.startsWith('-'))) throw usage(`${name} needs a value.`)
    spec.set(flags, value)
  }
  const harness = argv[n]
  if (harness === undefined) throw usage('Name a harness to launch, e.g. `omh claude`.')
  if (flags.new && flags.session) throw usage('--new starts a new session and --session picks one; give one of them.')
  if (flags.json && !flags.dryRun) throw usage('--json describes a plan, so it goes with --dry-run; a launch gives the terminal to the harness.')

  const rest = argv.slice(n + 1)
  const end = rest.indexOf('--')
  const inspected = end === -1 ? rest : rest.slice(0, end)
  const omhLong = [...LAUNCH_FLAGS.map((f) => f.name), ...ANSWERED_BY_OMH]
  for (const arg of inspected) {
    const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg
    if (omhLong.includes(name)) {
      const before = inspected.slice(0, inspected.indexOf(arg))
      throw OmhError.of(LAUNCH_FLAG_MISPLACED, {
        args: [name, harness],
        hintArgs: [arg, harness, before.length ? ` ${before.join(' ')}` : ''],
      })
    }
  }
  const args = end === -1 ? rest : [...rest.slice(0, end), ...rest.slice(end + 1)]
  return { flags, harness, args }
}
