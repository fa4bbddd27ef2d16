import { spawn } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { LAUNCH_FLAG_MISPLACED, OmhError, USAGE } from '@omh/plugin-api'
import type { LaunchAnnouncement, LaunchRequest } from '@omh/sandbox'
import { droppedDetail, environmentLines, renderSummary } from '../lib/dropped.js'
import { launchFlags } from '../lib/flags.js'
import { OmhCommand } from '../lib/omh-command.js'
import { describePlan, planJson, type PlanJson } from '../lib/plan-view.js'
import { OMH_LONG_FLAGS } from '../lib/route.js'

/** A launch's words after omh's flags: the harness, and its arguments as typed. */
export interface HarnessWords {
  readonly harness: string
  /** Everything after the harness name, the first `--` taken out. */
  readonly args: readonly string[]
}

/**
 * `omh [flags] <harness> [args…]`: any word that is not a command is a
 * harness, and the command line reaches this command as
 * `launch [flags] -- <harness> [args…]`. Creates or reuses a session, runs
 * the harness in it with the user's terminal, and exits with its status.
 */
/** What `omh --detach <harness>` answers: where the harness now runs. */
export interface DetachedJson {
  readonly session: string
  readonly branch: string
  readonly harness: string
}

export default class Launch extends OmhCommand<PlanJson | DetachedJson | undefined> {
  static override hidden = true
  static override strict = false
  static override summary = 'Run a harness in a session: `omh [flags] <harness> [args…]`.'
  static override flags = launchFlags

  /** A launch is typed as `omh <harness>`: its help is omh's. */
  protected override get commandWords(): string | undefined {
    return ''
  }

  async run(): Promise<PlanJson | DetachedJson | undefined> {
    const { flags } = await this.parse(Launch)
    const { harness, args } = harnessWords(this.argv)
    if (flags.json && !flags['dry-run'] && !flags.detach) throw usage('--json describes a plan or a harness in the background, so it goes with --dry-run or --detach; a launch gives the terminal to the harness.')
    const kernel = await this.kernel()
    const request: LaunchRequest = {
      harness,
      args,
      tty: !flags.detach && Boolean(process.stdin.isTTY && process.stdout.isTTY),
      ...(flags.detach ? { detach: true } : {}),
      ...(flags.session ? { session: flags.session } : {}),
      ...(flags.new ? { fresh: true } : {}),
      ...(flags.name !== undefined ? { name: flags.name } : {}),
      ...(flags.runtime ? { engine: flags.runtime } : {}),
      ...(flags.account ? { account: flags.account } : {}),
    }
    const { launch, previewLaunch } = await import('@omh/sandbox')
    if (flags['dry-run']) {
      const preview = await previewLaunch(kernel, request)
      if (this.jsonEnabled()) return planJson(preview)
      this.announce({ ...preview, dropped: preview.render.dropped, translated: preview.render.translated })
      this.log(describePlan(preview, this.style).replace(/\n$/, ''))
      return undefined
    }
    let started: DetachedJson | undefined
    const status = await launch(kernel, request, {
      context: { env: process.env, verbose: this.verbose, progress: (line) => this.notice(this.errStyle.dim(line)) },
      notice: (line) => this.notice(`${this.errStyle.bold('omh:')} ${line}`),
      announce: (a) => {
        started = { session: a.session, branch: a.branch, harness: a.harness }
        this.announce(a)
      },
      prepareSpare: (name) => prepareSpare(path.join(this.config.root, 'bin', 'run.js'), name),
    })
    if (status !== 0) this.passOnStatus(status)
    if (!flags.detach || !started) return undefined
    // Told on the host when it waits for you or finishes: omh's notifier follows every session.
    const { startNotifier } = await import('../lib/notifier.js')
    startNotifier(path.join(this.config.root, 'bin', 'run.js'), kernel.omhState, process.env)
    // The id alone on stdout, for a script to keep: `sid=$(omh --detach claude -p …)`.
    if (!this.jsonEnabled()) {
      this.notice(`${this.errStyle.bold('omh:')} ${started.harness} runs in the background in ${started.session}: \`omh sessions attach ${started.session}\` brings it here, \`omh sessions logs ${started.session}\` shows its output.`)
      this.log(started.session)
    }
    return started
  }

  /** The one status line of a launch, after what the profile's resolution had to say. */
  private announce(a: Pick<LaunchAnnouncement, 'harness' | 'branch' | 'dropped' | 'translated' | 'notices' | 'environment'>): void {
    const bold = this.errStyle.bold('omh:')
    for (const notice of a.notices) this.notice(`${bold} ${notice}`)
    const summary = renderSummary(a.dropped, a.translated, this.verbose)
    this.notice(`${bold} ${a.harness} on ${a.branch}${summary ? ` — ${summary}` : ''}`)
    if (this.verbose) for (const line of droppedDetail(a.dropped, a.translated)) this.notice(line)
    for (const line of environmentLines(a.environment, this.verbose)) this.notice(`${bold} ${line}`)
  }
}

const usage = (what: string) => OmhError.of(USAGE, { args: [what], hintArgs: [''] })

/**
 * The harness and its arguments: everything after the `--` that routing put
 * before the harness name, byte for byte. One of omh's long flags after the
 * name is refused rather than taken or passed on (the user meant one or the
 * other, and guessing wrong either way costs them); after the user's own
 * `--`, anything goes to the harness.
 */
export function harnessWords(argv: readonly string[]): HarnessWords {
  const cut = argv.indexOf('--')
  const [harness, ...rest] = cut === -1 ? [] : argv.slice(cut + 1)
  if (harness === undefined) throw usage('Name a harness to launch, e.g. `omh claude`.')
  if (harness.startsWith('-')) throw usage('A harness name must come before `--`.')
  const end = rest.indexOf('--')
  const inspected = end === -1 ? rest : rest.slice(0, end)
  for (const [n, arg] of inspected.entries()) {
    const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg
    if (OMH_LONG_FLAGS.includes(name)) {
      const before = inspected.slice(0, n)
      throw OmhError.of(LAUNCH_FLAG_MISPLACED, { args: [name, harness], hintArgs: [arg, harness, before.length ? ` ${before.join(' ')}` : ''] })
    }
  }
  return { harness, args: end === -1 ? rest : [...rest.slice(0, end), ...rest.slice(end + 1)] }
}

/**
 * Starts making the repository's spare of `harness` in a process of its own, detached and at a lower
 * priority, so the harness this launch starts comes first; what it makes shows only to `--new`.
 */
function prepareSpare(bin: string, harness: string): void {
  const child = spawn(process.execPath, [bin, 'sessions', 'spare', harness], { cwd: process.cwd(), env: process.env, detached: true, stdio: 'ignore' })
  child.on('error', () => undefined)
  if (child.pid !== undefined) {
    try {
      os.setPriority(child.pid, 10)
    } catch {
      // Not allowed here: it runs at this launch's priority.
    }
  }
  child.unref()
}
