import { Command, Flags, type Interfaces } from './oclif.js'
import type { OmhError } from '@omh/plugin-api'
import type { Kernel } from '@omh/kernel'
import { formatError, serializeError, toOmhError } from './failure.js'
import { createKernel } from './kernel.js'
import { printableJson } from './printable.js'
import { reapIdle, settleState } from './state.js'
import { reserveStdout, type ReservedStdout } from './stdout.js'
import { colorEnabled, colorModeFromArgv, createStyle, terminalText, type Style } from './style.js'

export type OmhFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof OmhCommand)['baseFlags'] & T['flags']>

/**
 * Every omh command: `--json` prints exactly one document on stdout
 * (`{status, result, warnings}` or `{status, error}`), human output goes to
 * stdout and everything else to stderr, and any failure becomes an exit code
 * (1 operation failed, 2 bad config or usage) and a report, never a stack trace.
 */
export abstract class OmhCommand<T> extends Command {
  static override enableJsonFlag = true

  static override baseFlags = {
    color: Flags.option({
      options: ['auto', 'always', 'never'] as const,
      default: 'auto' as const,
      helpGroup: 'GLOBAL',
      summary: 'When to colour output. A non-empty NO_COLOR turns off auto.',
    })(),
    verbose: Flags.boolean({
      helpGroup: 'GLOBAL',
      summary: 'Name every dropped item, and show the cause of an error.',
      default: false,
    }),
  }

  protected readonly warnings: string[] = []
  #status = 0
  #kernel: Promise<Kernel> | undefined
  #style: Style | undefined
  #stdout: ReservedStdout | undefined

  abstract override run(): Promise<T>

  override async init(): Promise<void> {
    await super.init()
    await settleState(process.env, (text) => this.notice(text))
    await reapIdle(process.env, () => this.kernel(), { env: process.env, verbose: this.verbose, progress: () => undefined }, (text) => this.notice(text))
  }

  protected override async _run<R>(): Promise<R> {
    this.#stdout = reserveStdout()
    try {
      return await super._run<R>()
    } finally {
      this.#stdout.release()
    }
  }

  /** Writes part of the answer on stdout, as it is. */
  protected answer(text: string): void {
    if (this.#stdout) this.#stdout.answer(text)
    else process.stdout.write(text)
  }

  /** Colour for stdout (answers). */
  protected get style(): Style {
    this.#style ??= createStyle(
      colorEnabled(colorModeFromArgv(this.argv), { json: this.jsonEnabled(), isTTY: Boolean(process.stdout.isTTY), env: process.env }),
    )
    return this.#style
  }

  /** Colour for stderr (notices, errors). */
  protected get errStyle(): Style {
    return createStyle(
      colorEnabled(colorModeFromArgv(this.argv), { json: this.jsonEnabled(), isTTY: Boolean(process.stderr.isTTY), env: process.env }),
    )
  }

  /** The command as a user types it after `omh`, for usage hints. */
  protected get commandWords(): string | undefined {
    return this.id?.replaceAll(':', ' ')
  }

  protected get verbose(): boolean {
    const n = this.argv.indexOf('--')
    return (n === -1 ? this.argv : this.argv.slice(0, n)).includes('--verbose')
  }

  /** The kernel, created on first use with omh's own defaults, adapters and editors. */
  protected kernel(): Promise<Kernel> {
    this.#kernel ??= createKernel(this.config.root, process.cwd(), process.env, this.stopsOnly ? { untrustedRepository: 'leave-out' } : {})
    return this.#kernel
  }

  /** A command that only stops what runs: the repository's settings that wait for trust are left out, never refused. */
  protected readonly stopsOnly: boolean = false

  /** What helpers that print need: stdout, stderr notices, colour, and whether --json is on. */
  protected io(): { log(text: string): void; notice(text: string): void; style: Style; json: boolean } {
    return { log: (t) => this.log(t), notice: (t) => this.notice(t), style: this.style, json: this.jsonEnabled() }
  }

  /** A line of the answer on stdout, shown as text whatever files and names it quotes; nothing with `--json`. */
  override log(message = ''): void {
    if (!this.jsonEnabled()) this.answer(`${terminalText(message, this.style)}\n`)
  }

  /** A notice on stderr: not part of the answer, kept out of `--json` documents. */
  protected notice(message: string): void {
    if (!this.jsonEnabled()) process.stderr.write(`${terminalText(message, this.errStyle)}\n`)
  }

  /** A warning on stderr; also carried in the `--json` envelope. */
  override warn(input: string | Error): string | Error {
    const text = typeof input === 'string' ? input : input.message
    this.warnings.push(text)
    process.stderr.write(`${terminalText(`${this.errStyle.yellow('omh:')} ${text}`, this.errStyle)}\n`)
    return input
  }

  /**
   * Exits with a status the command passed on (an editor's) once it has
   * answered: its result still prints, and `--json` carries the status.
   */
  protected passOnStatus(status: number): void {
    this.#status = status
    process.exitCode = status
  }

  protected override toSuccessJson(result: unknown): unknown {
    return { status: this.#status, result, warnings: this.warnings }
  }

  protected override logJson(json: unknown): void {
    this.answer(`${printableJson(json)}\n`)
  }

  protected override async catch(raw: Interfaces.CommandError): Promise<void> {
    if ((raw as { oclif?: { exit?: number } }).oclif?.exit === 0) return
    const error: OmhError = toOmhError(raw, this.commandWords)
    process.exitCode = error.exit
    // A kernel that could not be made has no extension to tell.
    const kernel = this.#kernel ? await this.#kernel.catch(() => undefined) : undefined
    for (const fault of (await kernel?.notifyFailed(error)) ?? []) process.stderr.write(`${this.errStyle.yellow('omh:')} ${fault.message}\n`)
    if (this.jsonEnabled()) this.logJson({ status: error.exit, error: serializeError(error, this.verbose) })
    else process.stderr.write(formatError(error, this.errStyle, this.verbose))
  }
}
