import { spawn } from 'node:child_process'
import { accessSync, constants, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { NotifySettings } from '@omh/kernel'

export type { NotifySettings } from '@omh/kernel'

/** A session's harness moved to a state the user wants to hear of; its JSON is what `[notify] command` reads. */
export interface StateEvent {
  /** The repository's root, absolute; null when omh no longer knows where it is. */
  readonly repository: string | null
  readonly session: string
  readonly branch: string
  readonly harness: string
  readonly state: 'waiting' | 'finished'
  /** The harness's exit status, when it finished. */
  readonly exit?: number
  /** When the state was reached, in unix seconds. */
  readonly at: number
}

export type Environment = Readonly<Record<string, string | undefined>>

/** How a program run by `RunProgram` ended: `what` finishes a sentence that begins with its name. */
export type RunEnd = { readonly ok: true } | { readonly ok: false; readonly what: string }

export interface RunOptions {
  /** Written to its stdin, which is then closed; absent: stdin is not open. */
  readonly stdin?: string
  readonly cwd: string
  readonly env: Environment
  /** It is killed once this has passed. */
  readonly timeoutMs: number
}

/** Runs a program with no shell, its output ignored, and says how it ended; never throws. */
export type RunProgram = (argv: readonly [string, ...string[]], options: RunOptions) => Promise<RunEnd>

export interface DeliveryIo {
  /** The environment the notifier runs in: it picks the terminal's escape, finds notify-send and is the command's. */
  readonly env: Environment
  /** The terminal to write an escape or the bell to, when there is one. */
  readonly terminal?: NodeJS.WritableStream
  /** One line per channel that failed. */
  warn(line: string): void
  /** Runs notify-send and the command; `runProgram` unless a test gives its own. */
  readonly run?: RunProgram
}

export const NOTIFY_TITLE = 'omh'
/** The command gets this long to take the event before it is killed: a notifier must never pile up programs. */
export const COMMAND_TIMEOUT_MS = 10_000
export const DESKTOP_TIMEOUT_MS = 5000
/** The most characters a notification's text has: a banner shows a line or two. */
export const MAX_TEXT = 200
const MAX_REPOSITORY_NAME = 64

// What could end or redirect an escape sequence, or make text read as something it is not: C0 and C1
// controls and DEL (ESC, BEL, and 0x9c, which ends an OSC in 8-bit form), `;` (it ends an OSC field),
// and the marks that reorder a line.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f;\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/** Text safe inside an escape sequence, `max` characters at most. */
export function escapeSafe(text: string, max = MAX_TEXT): string {
  const clean = text.replace(UNSAFE, '')
  const chars = [...clean]
  return chars.length <= max ? clean : `${chars.slice(0, max - 1).join('')}…`
}

/** The notification's text: `myrepo s02 (claude) is waiting for you`, `myrepo s03 (codex) finished (exit 0)`. */
export function notificationBody(event: StateEvent): string {
  // Leading dashes go too: notify-send reads an argument that begins with one as an option wherever it stands.
  const repository = escapeSafe(path.basename(event.repository ?? ''), MAX_REPOSITORY_NAME).replace(/^-+/, '')
  const what = event.state === 'waiting' ? 'is waiting for you' : event.exit === undefined ? 'finished' : `finished (exit ${event.exit})`
  return escapeSafe(`${repository ? `${repository} ` : ''}${event.session} (${event.harness}) ${what}`)
}

export type TerminalEscape = Exclude<NotifySettings['terminal'], 'auto'>

/**
 * The escape `auto` writes, by what the terminal says of itself. OSC 9 began with iTerm2; ghostty,
 * kitty and WezTerm show it too. OSC 777 (urxvt's, with a title) is shown by WezTerm and foot.
 * Every other terminal gets the bell: upstream VTE (GNOME Terminal, Ptyxis, Tilix) has swallowed
 * OSC 777 silently since 0.46, so only Fedora's patched builds show it; urxvt shows it only through
 * a perl extension it does not ship; Windows Terminal reads OSC 9 as ConEmu's commands and shows
 * OSC 777 only in builds from 2026. tmux and screen pass an OSC on only when configured to, and pass
 * the bell on, so inside them the bell too unless the setting names an escape.
 */
export function terminalEscape(setting: NotifySettings['terminal'], env: Environment): TerminalEscape {
  if (setting !== 'auto') return setting
  const term = env['TERM'] ?? ''
  const program = env['TERM_PROGRAM'] ?? ''
  if (env['TMUX'] || term.startsWith('screen') || term.startsWith('tmux')) return 'bell'
  if (program === 'iTerm.app' || program === 'ghostty' || term === 'xterm-ghostty' || term === 'xterm-kitty' || env['KITTY_WINDOW_ID']) return 'osc9'
  if (program === 'WezTerm' || term.startsWith('foot')) return 'osc777'
  return 'bell'
}

const ESC = '\u001b'
const BEL = '\u0007'

/** The bytes an escape writes for `body`; empty for `off`. */
export function terminalBytes(escape: TerminalEscape, body: string): string {
  switch (escape) {
    case 'osc9':
      return `${ESC}]9;${escapeSafe(body)}${BEL}`
    case 'osc777':
      return `${ESC}]777;notify;${NOTIFY_TITLE};${escapeSafe(body)}${BEL}`
    case 'bell':
      return BEL
    case 'off':
      return ''
  }
}

/** The event as `[notify] command` reads it: one JSON document and a newline, its fields in a fixed order. */
export function eventJson(event: StateEvent): string {
  const { repository, session, branch, harness, state, exit, at } = event
  return `${JSON.stringify({ repository, session, branch, harness, state, ...(exit === undefined ? {} : { exit }), at })}\n`
}

/**
 * Tells the user of one event on every channel the settings turn on: the terminal's escape,
 * a desktop notification, the user's command. The channels are independent: one that fails
 * is a `warn` line and the others still go. Never throws.
 */
export async function deliver(event: StateEvent, settings: NotifySettings, io: DeliveryIo): Promise<void> {
  const run = io.run ?? runProgram
  const body = notificationBody(event)
  await Promise.all([toTerminal(body, settings, io), toDesktop(body, settings, io, run), toCommand(event, settings, io, run)])
}

async function toTerminal(body: string, settings: NotifySettings, io: DeliveryIo): Promise<void> {
  const bytes = terminalBytes(terminalEscape(settings.terminal, io.env), body)
  const terminal = io.terminal
  if (!terminal || !bytes) return
  // A stream reports a failed write to the callback and as an `error` event, which would throw if no one listened.
  const ignore = () => {}
  terminal.on('error', ignore)
  const failed = await new Promise<Error | undefined>((resolve) => {
    try {
      terminal.write(bytes, (error) => resolve(error ?? undefined))
    } catch (error) {
      resolve(error as Error)
    }
  })
  terminal.off('error', ignore)
  if (failed) io.warn(`The terminal notification was not written: ${failed.message}`)
}

async function toDesktop(body: string, settings: NotifySettings, io: DeliveryIo, run: RunProgram): Promise<void> {
  if (!settings.desktop || !(io.env['DISPLAY'] || io.env['WAYLAND_DISPLAY'])) return
  const notifySend = onPath('notify-send', io.env)
  if (!notifySend) return
  // No shell reads these, but a notification server reads `<` and `&` as markup.
  const text = body.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  const end = await runOrWarn(run, [notifySend, `--app-name=${NOTIFY_TITLE}`, NOTIFY_TITLE, text], { cwd: os.homedir(), env: io.env, timeoutMs: DESKTOP_TIMEOUT_MS })
  if (!end.ok) io.warn(`notify-send ${end.what}; no desktop notification was shown.`)
}

async function toCommand(event: StateEvent, settings: NotifySettings, io: DeliveryIo, run: RunProgram): Promise<void> {
  const [program, ...args] = settings.command ?? []
  if (program === undefined) return
  const end = await runOrWarn(run, [program, ...args], { stdin: eventJson(event), cwd: os.homedir(), env: io.env, timeoutMs: COMMAND_TIMEOUT_MS })
  if (!end.ok) io.warn(`[notify] command ${program} ${end.what}.`)
}

/** A `RunProgram` a test gives may throw all the same; a notifier stays up. */
async function runOrWarn(run: RunProgram, argv: readonly [string, ...string[]], options: RunOptions): Promise<RunEnd> {
  try {
    return await run(argv, options)
  } catch (error) {
    return { ok: false, what: `could not run: ${(error as Error).message}` }
  }
}

/** The executable file `program` names in the environment's PATH, if there is one. */
function onPath(program: string, env: Environment): string | undefined {
  for (const dir of (env['PATH'] ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue
    const file = path.join(dir, program)
    try {
      accessSync(file, constants.X_OK)
      if (statSync(file).isFile()) return file
    } catch {
      continue
    }
  }
  return undefined
}

/** `RunProgram` with a child process: SIGKILL at the timeout, since a program that ignored its stdin closing may ignore SIGTERM too. */
export const runProgram: RunProgram = (argv, options) =>
  new Promise<RunEnd>((resolve) => {
    const [program, ...args] = argv
    let timedOut = false
    let child: ReturnType<typeof spawn>
    try {
      child = spawn(program, args, { cwd: options.cwd, env: options.env, stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'ignore', 'ignore'] })
    } catch (error) {
      resolve({ ok: false, what: `could not start: ${(error as Error).message}` })
      return
    }
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, options.timeoutMs)
    const end = (result: RunEnd) => {
      clearTimeout(timer)
      resolve(result)
    }
    child.once('error', (error: NodeJS.ErrnoException) => end({ ok: false, what: error.code === 'ENOENT' ? 'was not found' : `could not start: ${error.message}` }))
    child.once('exit', (code, signal) => {
      if (timedOut) end({ ok: false, what: `did not finish within ${options.timeoutMs / 1000} s and was stopped` })
      else if (code === 0) end({ ok: true })
      else if (code !== null) end({ ok: false, what: `exited with status ${code}` })
      else end({ ok: false, what: `was ended by ${signal}` })
    })
    if (child.stdin) {
      // A program that exits without reading its stdin closes the pipe under the write: how it ended says what matters.
      child.stdin.on('error', () => {})
      child.stdin.end(options.stdin)
    }
  })
