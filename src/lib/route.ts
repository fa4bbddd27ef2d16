import { launchFlags } from './flags.js'

/** The global flags every command takes (OmhCommand's base flags, and `--json`). */
const GLOBAL_FLAGS: readonly { name: string; value: boolean }[] = [
  { name: '--json', value: false },
  { name: '--verbose', value: false },
  { name: '--color', value: true },
]

/** Every flag that may stand before a harness name, long and short, and whether it takes a value. */
const LEADING_FLAGS: readonly { names: readonly string[]; value: boolean }[] = [
  ...Object.entries(launchFlags).map(([name, flag]) => ({
    names: [`--${name}`, ...(flag.char ? [`-${flag.char}`] : [])],
    value: flag.type === 'option',
  })),
  ...GLOBAL_FLAGS.map((f) => ({ names: [f.name], value: f.value })),
]

/** The long flags a launch answers itself; after a harness name they are refused rather than guessed at. */
export const OMH_LONG_FLAGS: readonly string[] = [...LEADING_FLAGS.map((f) => f.names[0]!), '--help']

/** Where the leading flags end: the index of the first word that is not one of them or its value; -1 if none. */
export function firstWord(argv: readonly string[]): number {
  for (let n = 0; n < argv.length; n++) {
    const arg = argv[n]!
    if (arg === '--') return -1
    if (!arg.startsWith('-')) return n
    if (LEADING_FLAGS.find((f) => f.names.includes(arg))?.value) n++
  }
  return -1
}

/**
 * Prepares argv for oclif. A bare word that is not a command is a harness:
 * the line becomes the hidden `launch` command, with omh's flags first and
 * then, after a `--`, the harness name and its arguments exactly as typed,
 * so oclif never answers `--help` or re-splits a harness's words. omh's
 * flags written before a command (`omh --json sessions ls`) move after it,
 * where oclif reads them. Only flags, `--help` and `--version` aside, are a
 * launch without a harness, which says so.
 */
export function routeArgv(argv: readonly string[], commandWords: ReadonlySet<string>): string[] {
  const at = firstWord(argv)
  const leading = at === -1 ? argv : argv.slice(0, at)
  if (!argv.length || ['--help', '-h', '--version'].some((flag) => leading.includes(flag))) return [...argv]
  // Only flags: a launch that lacks its harness, and says so as a launch would.
  if (at === -1) return ['launch', ...argv]
  const word = argv[at]!
  if (!commandWords.has(word)) return ['launch', ...leading, '--', ...argv.slice(at)]
  const rest = argv.slice(at)
  const end = rest.indexOf('--')
  return end === -1 ? [...rest, ...leading] : [...rest.slice(0, end), ...leading, ...rest.slice(end)]
}
