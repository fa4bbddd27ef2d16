import { Args, Flags } from '../lib/oclif.js'
import { CAPABILITY_CLASSES, DOCTOR_FAILED, EGRESS_CHECK_FAILED, OmhError, isOmhError, type RuntimeContext } from '@omh/plugin-api'
import { TOOLSET_NODE } from '@omh/sandbox'
import type { DoctorCheck, DoctorReport, EgressSelfTest } from '@omh/doctor'
import type { Kernel } from '@omh/kernel'
import { renderSummary } from '../lib/dropped.js'
import { formatError, serializeError, toOmhError } from '../lib/failure.js'
import { OmhCommand } from '../lib/omh-command.js'
import type { Style } from '../lib/style.js'
import { table } from '../lib/table.js'
import { sharedFlags } from '../lib/flags.js'

/** Staged documents doctor parses inside the container, by syntax: the command gets the path appended. */
// omh's own Node, in every session image whatever the project's image carries.
export const CHECKERS: Readonly<Record<string, readonly string[]>> = { javascript: [TOOLSET_NODE, '--check'] }

/**
 * A harness doctor could not check (its adapter does not load, its account is
 * ambiguous, its image does not build): the error that stopped it, as a failed
 * report, so checking every harness goes on to the next one.
 */
export interface DoctorStopped {
  readonly harness: string
  readonly ok: false
  readonly failed: 1
  /** One failed check, so a script that reads only the checks sees it too. */
  readonly checks: readonly [{ readonly kind: 'run'; readonly name: string; readonly ok: false; readonly detail: string }]
  /** The error as `--json` reports one: code, message, hint, problems. */
  readonly error: Record<string, unknown>
}

export interface DoctorResult {
  /** One per harness checked, in order. */
  readonly reports: readonly (DoctorReport | DoctorStopped)[]
  /** With `--network`, the egress self-test of the repository's current session, when one runs. */
  readonly egress?: EgressSelfTest
}

export default class Doctor extends OmhCommand<DoctorResult> {
  static override summary = "Prove a harness sees your profile: its image, the real mounts, and the harness's own account of what it loaded."
  static override description = `Builds or reuses the harness image and runs it once, offline, with the mounts a launch would use, in a scratch place (no session, no branch). Inside it checks that every staged file and directory entry is there as staged, that generated plugins parse, that the harness binary is on PATH and that a login saved in the credential store persists; then it asks the harness itself (the adapter's probes) and checks that every staged item is among what the harness reports. A probe that prints nothing fails. Without a harness, every known harness is checked in turn: one that cannot be checked at all (an ambiguous account, no account named by -a, an image that does not build) is reported as failed with its error, and the others are still checked.`

  static override args = {
    harness: Args.string({ required: false, description: 'Harness name, e.g. claude. Absent: every harness.' }),
  }

  static override flags = {
    account: sharedFlags.account,
    runtime: sharedFlags.runtime,
    network: Flags.boolean({
      summary: "Run on the session's network instead of none, so remote MCP servers can really connect; and test the egress of this repository's current session.",
      description:
        "Without it doctor runs with no network: every MCP server must be loaded, and one that cannot connect (a remote one, always) is a warning with the reason. With it, when this repository's current session runs, doctor also probes from inside it every allow rule, and destinations that must stay closed (the metadata address, loopback, a name nothing allows, the internet past the proxy, IPv6, the gateway, another session's container); a result that does not match fails with EGRESS_CHECK_FAILED, naming the rule.",
      default: false,
    }),
    turn: Flags.boolean({
      description:
        "Also drive the harness through a turn against omh's scripted model (offline, no login, no tokens): report per hook whether the harness ran it and whether its text reached the model, and per rules, skill, subagent and MCP server whether the first request carried it.",
    }),
  }

  async run(): Promise<DoctorResult> {
    const { args, flags } = await this.parse(Doctor)
    const kernel = await this.kernel()
    const { doctor } = await import('@omh/doctor')
    const harnesses = args.harness ? [args.harness] : (await kernel.adapterSources()).map((s) => s.name)
    const reports: (DoctorReport | DoctorStopped)[] = []
    const err = this.errStyle
    const context: RuntimeContext = { env: process.env, verbose: this.verbose, progress: (line) => this.notice(err.dim(line)) }
    for (const harness of harnesses) {
      const outcome = await doctor(
        kernel,
        { harness, checkers: CHECKERS, ...(flags.network ? { network: true } : {}), ...(flags.turn ? { turn: true } : {}), ...(flags.account ? { account: flags.account } : {}), ...(flags.runtime ? { engine: flags.runtime } : {}) },
        {
          context,
          notice: (line) => this.notice(`${err.bold('omh:')} ${line}`),
        },
      ).catch((error: unknown) => {
        // A harness named on the command line fails as itself, with its own code and exit status.
        if (args.harness) throw error
        return toOmhError(error)
      })
      const report = isOmhError(outcome) ? stopped(harness, outcome, this.verbose) : outcome
      reports.push(report)
      if (this.jsonEnabled()) continue
      this.log(isOmhError(outcome) ? describeStopped(harness, outcome, this.style, this.verbose) : describe(outcome, this.style, this.verbose))
    }
    const egress = flags.network ? await this.egressCheck(kernel, flags.runtime, context) : undefined
    const failed = reports.filter((r) => !r.ok)
    if (egress && !egress.ok && !failed.length) {
      const wrong = egress.results.filter((r) => !r.ok)
      throw OmhError.of(EGRESS_CHECK_FAILED, { args: [egress.session, wrong.map((r) => `${r.name} (${r.rule}): ${r.detail}`), egress.results.length], hintArgs: [egress.session], details: { egress } })
    }
    if (failed.length) {
      const checked = failed.filter((r): r is DoctorReport => !isStopped(r))
      const unchecked = failed.filter(isStopped).map((r) => r.harness)
      throw OmhError.of(DOCTOR_FAILED, {
        args: [checked.map((r) => r.harness).join(', '), checked.reduce((n, r) => n + r.failed, 0), checked.reduce((n, r) => n + r.checks.length, 0), unchecked],
        hintArgs: [checked[0]?.harness, unchecked],
        details: { reports, ...(egress ? { egress } : {}) },
      })
    }
    return { reports, ...(egress ? { egress } : {}) }
  }

  /** The egress self-test of this repository's current session; nothing, with a notice, when there is none to test. */
  private async egressCheck(kernel: Kernel, engine: string | undefined, context: RuntimeContext): Promise<EgressSelfTest | undefined> {
    const { Sessions, sessionEngine, sessionPaths } = await import('@omh/sandbox')
    const { egressSelfTest } = await import('@omh/doctor')
    const skip = (why: string) => {
      this.notice(`${this.errStyle.bold('omh:')} egress not tested: ${why}`)
      return undefined
    }
    if (!kernel.repoRoot) return skip('not in a repository, so there is no session to test it in')
    const sessions = Sessions.of(kernel)
    const sid = (await sessions.list()).length ? await sessions.current() : undefined
    if (!sid) return skip('this repository has no session yet: launch one (omh <harness>), then run doctor --network again')
    const { runtime } = await kernel.resolveRuntime(await sessionEngine(kernel, sessionPaths(kernel.omhState, sessions.repo, sid).run, sid, engine, context), context)
    const test = await egressSelfTest({ kernel, runtime, repo: sessions.repo, session: sid, context })
    if (!test) return skip(`${sid} is not running: launch into it (omh --session ${sid} <harness>), then run doctor --network again`)
    if (!this.jsonEnabled()) {
      const s = this.style
      this.log(`\n${s.bold(`egress of ${sid}`)} (${test.mode})`)
      if (!test.results.length) this.log('  egress is open: the session goes out on the engine\'s network, and nothing is held closed to test.')
      else this.log(table(test.results.map((r) => [r.ok ? s.green('✓') : s.red('✗'), r.name, r.way === 'proxy' ? `via proxy ${r.target}` : `direct ${r.target}`, `${r.expect === 'open' ? 'let through' : 'closed'}: ${r.detail}`, s.dim(r.rule)])))
    }
    return test
  }
}

const isStopped = (report: DoctorReport | DoctorStopped): report is DoctorStopped => 'error' in report

function stopped(harness: string, error: OmhError, verbose: boolean): DoctorStopped {
  return {
    harness,
    ok: false,
    failed: 1,
    checks: [{ kind: 'run', name: harness, ok: false, detail: `could not be checked: ${error.message} (${error.code})` }],
    error: serializeError(error, verbose),
  }
}

/** What stopped a harness from being checked: its error, as omh reports any error, under its name. */
export function describeStopped(harness: string, error: OmhError, s: Style, verbose: boolean): string {
  const body = formatError(error, s, verbose).trimEnd().replace(/^/gm, '  ')
  return `${s.bold(harness)} ${s.red('could not be checked')}\n${body}\n`
}

const KIND_LABEL: Readonly<Record<DoctorCheck['kind'], string>> = {
  staged: 'staged',
  entry: 'entry',
  syntax: 'parses',
  bin: 'binary',
  token: 'login',
  probe: 'probe',
  harness: 'harness',
  turn: 'turn',
}

/** The checklist of one harness: a line per check, then what each class came to. */
export function describe(report: DoctorReport, s: Style, verbose: boolean): string {
  const rows = report.checks.map((c) => [
    c.warning ? s.yellow('!') : c.ok ? s.green('✓') : s.red('✗'),
    s.dim(KIND_LABEL[c.kind]),
    c.name,
    c.ok && !c.warning ? s.dim(c.detail) : c.detail,
  ])
  const lines = [
    `${s.bold(report.harness)} ${s.dim(`in ${report.image} (${report.engine}), ${report.account ? `account ${report.account}` : 'no account'}`)}`,
    table(rows, '  '),
  ]
  if (verbose) {
    for (const [key, out] of Object.entries(report.probes)) {
      lines.push(s.dim(`  ── probe ${key}: exit ${out.exit ?? (out.timedOut ? 'timed out' : 'none')}`))
      for (const [stream, text] of [['stdout', out.stdout], ['stderr', out.stderr]] as const) {
        if (text.trim()) lines.push(s.dim(text.trimEnd().split('\n').slice(0, 40).map((l) => `     ${stream === 'stderr' ? '! ' : ''}${l}`).join('\n')))
      }
    }
  }
  const classes = CAPABILITY_CLASSES.map((c) => {
    const v = report.classes[c]
    const paint = v === 'proved' ? s.green : v === 'failed' ? s.red : v === 'unproved' ? s.yellow : s.dim
    return `${c} ${paint(v)}`
  })
  lines.push(`  ${classes.join(s.dim(' · '))}`)
  const dropped = renderSummary(report.dropped, report.translated)
  if (dropped) lines.push(s.dim(`  ${dropped}`))
  const warned = report.warnings ? ` (${s.yellow(`${report.warnings} warning${report.warnings === 1 ? '' : 's'}`)}: loaded, not connected)` : ''
  lines.push(
    report.ok
      ? `  ${s.green(`all ${report.checks.length} checks passed`)}${warned}: ${report.harness} shows every item omh staged for it`
      : `  ${s.red(`${report.failed} of ${report.checks.length} checks failed`)}`,
  )
  return `${lines.join('\n')}\n`
}
