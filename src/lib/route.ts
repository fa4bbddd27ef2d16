import { firstWord } from './launch-argv.js'

let raw: readonly string[] | undefined

/** The command line as the user typed it, for the launch hook: oclif hands a hook a lossy re-split of it. */
export const rawArgv = (): readonly string[] | undefined => raw

/**
 * Prepares argv for oclif. oclif glues the words of an unknown command into
 * one id and answers `--help` anywhere before `--`, so a harness's own
 * arguments must not reach it: a launch is cut after the harness name, and
 * the launch hook reads the whole line from `rawArgv()`. omh's flags written
 * before a command (`omh --json sessions ls`) move after it, where oclif
 * reads them.
 */
export function routeArgv(argv: readonly string[], commandWords: ReadonlySet<string>): string[] {
  raw = [...argv]
  const at = firstWord(argv)
  const leading = argv.slice(0, Math.max(at, 0))
  if (at === -1 || leading.includes('--help') || leading.includes('-h')) return [...argv]
  const word = argv[at]!
  if (!commandWords.has(word)) return [...leading, word]
  const rest = argv.slice(at)
  const end = rest.indexOf('--')
  return end === -1 ? [...rest, ...leading] : [...rest.slice(0, end), ...leading, ...rest.slice(end)]
}
