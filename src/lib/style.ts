import { inspect, styleText } from 'node:util'
import { printable } from './printable.js'

export type ColorMode = 'auto' | 'always' | 'never'

export interface Style {
  readonly enabled: boolean
  bold(text: string): string
  dim(text: string): string
  red(text: string): string
  yellow(text: string): string
  green(text: string): string
  cyan(text: string): string
}

type Format = Parameters<typeof styleText>[0]

const FORMATS = ['bold', 'dim', 'red', 'yellow', 'green', 'cyan'] as const

/** The escape sequences a style writes: the only ones that reach a terminal as they are. */
export const STYLE_SEQUENCES: readonly string[] = [
  ...new Set(FORMATS.flatMap((f) => (inspect.colors[f] ?? []).map((code) => `\u001b[${code}m`))),
]

/** Text for a stream painted by `style`: its colours pass, anything else a terminal would act on is escaped. */
export const terminalText = (text: string, style: Style): string => printable(text, style.enabled ? STYLE_SEQUENCES : [])

/** Colours for one stream. What it paints is shown as text: user words in it cannot drive the terminal. */
export function createStyle(enabled: boolean): Style {
  const paint = (format: Format) => (text: string) =>
    enabled ? styleText(format, printable(text, STYLE_SEQUENCES), { validateStream: false }) : printable(text)
  return {
    enabled,
    bold: paint('bold'),
    dim: paint('dim'),
    red: paint('red'),
    yellow: paint('yellow'),
    green: paint('green'),
    cyan: paint('cyan'),
  }
}

/**
 * `--color always` wins over everything; `never` and `--json` turn colour off;
 * `auto` colours a terminal unless NO_COLOR is set to something non-empty.
 */
export function colorEnabled(
  mode: ColorMode,
  options: { json: boolean; isTTY: boolean; env: Readonly<Record<string, string | undefined>> },
): boolean {
  if (options.json) return false
  if (mode === 'always') return true
  if (mode === 'never') return false
  if (options.env['NO_COLOR']) return false
  return options.isTTY
}

/** Reads `--color` from raw argv, for output that happens before or without a parse. */
export function colorModeFromArgv(argv: readonly string[]): ColorMode {
  let mode: ColorMode = 'auto'
  for (let n = 0; n < argv.length; n++) {
    const arg = argv[n]!
    if (arg === '--') break
    const value = arg.startsWith('--color=') ? arg.slice(8) : arg === '--color' ? argv[n + 1] : undefined
    if (value === 'auto' || value === 'always' || value === 'never') mode = value
  }
  return mode
}
