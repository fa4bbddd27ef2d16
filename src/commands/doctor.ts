import { Args, Flags } from '../lib/oclif.js'
import { CAPABILITY_CLASSES, DOCTOR_FAILED, OmhError, type DoctorCheck, type DoctorReport } from '@omh/kernel'
import { droppedSummary } from '../lib/dropped.js'
import { OmhCommand } from '../lib/omh-command.js'
import type { Style } from '../lib/style.js'
import { table } from '../lib/table.js'

/** Staged documents doctor parses inside the container, by syntax: the command gets the path appended. */
export const CHECKERS: Readonly<Record<string, readonly string[]>> = { javascript: ['node', '--check'] }

export interface DoctorResult {
  /** One report per harness checked. */
  readonly reports: readonly DoctorReport[]
}

export default class Doctor extends OmhCommand<DoctorResult> {
  static override summary = "Prove a harness sees your profile: its image, the real mounts, and the harness's own account of what it loaded."
  static override description = `Builds or reuses the harness image and runs it once, offline, with the mounts a launch would use, in a scratch place (no session, no branch). Inside it checks that every staged file and directory entry is there as staged, that generated plugins parse, that the harness binary is on PATH and that a login saved in the credential store persists; then it asks the harness itself (the adapter's probes) and checks that every staged item is among what the harness reports. A probe that prints nothing fails. Without a harness, every known harness is checked in turn.`

  static override args = {
    harness: Args.string({ required: false, description: 'Harness name, e.g. claude. Absent: every harness.' }),
  }

  static override flags = {
    account: Flags.string({ char: 'a', summary: 'Mount the login of this captured account (default: the `account` setting, or the only one captured).' }),
    runtime: Flags.string({ summary: 'Container engine: auto or an engine name (default: the `runtime` setting).' }),
  }

  async run(): Promise<DoctorResult> {
    const { args, flags } = await this.parse(Doctor)
    const kernel = await this.kernel()
    const { doctor } = await import('@omh/kernel')
    const harnesses = args.harness ? [args.harness] : (await kernel.adapterSources()).map((s) => s.name)
    const reports: DoctorReport[] = []
    const err = this.errStyle
    for (const harness of harnesses) {
      const report = await doctor(
        kernel,
        { harness, checkers: CHECKERS, ...(flags.account ? { account: flags.account } : {}), ...(flags.runtime ? { engine: flags.runtime } : {}) },
        {
          context: { env: process.env, verbose: this.verbose, progress: (line) => this.notice(err.dim(line)) },
          notice: (line) => this.notice(`${err.bold('omh:')} ${line}`),
        },
      )
      reports.push(report)
      if (!this.jsonEnabled()) this.log(describe(report, this.style, this.verbose))
    }
    const failed = reports.filter((r) => !r.ok)
    if (failed.length) {
      const checks = failed.reduce((n, r) => n + r.failed, 0)
      const total = failed.reduce((n, r) => n + r.checks.length, 0)
      throw OmhError.of(DOCTOR_FAILED, {
        args: [failed.map((r) => r.harness).join(', '), checks, total],
        hintArgs: [failed[0]!.harness],
        details: { reports },
      })
    }
    return { reports }
  }
}

const KIND_LABEL: Readonly<Record<DoctorCheck['kind'], string>> = {
  staged: 'staged',
  entry: 'entry',
  syntax: 'parses',
  bin: 'binary',
  token: 'login',
  probe: 'probe',
  harness: 'harness',
}

/** The checklist of one harness: a line per check, then what each class came to. */
export function describe(report: DoctorReport, s: Style, verbose: boolean): string {
  const rows = report.checks.map((c) => [c.ok ? s.green('✓') : s.red('✗'), s.dim(KIND_LABEL[c.kind]), c.name, c.ok ? s.dim(c.detail) : c.detail])
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
  const dropped = droppedSummary(report.dropped)
  if (dropped) lines.push(s.dim(`  ${dropped}`))
  lines.push(
    report.ok
      ? `  ${s.green(`all ${report.checks.length} checks passed`)}: ${report.harness} shows every item omh staged for it`
      : `  ${s.red(`${report.failed} of ${report.checks.length} checks failed`)}`,
  )
  return `${lines.join('\n')}\n`
}
