import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { DoctorReport } from '@omh/doctor'
import { TEST_BASE, type Engine } from './engines.js'
import { ROOT } from './run.js'

/** The profile and project every doctor test checks. */
export const DOCTOR_FIXTURE = path.join(ROOT, 'test/fixtures/doctor')

/**
 * A scratch folder holding the doctor fixture's profile (`home`, set up for `engine` and the test
 * base image) and its project as a one-commit repository (`repo`).
 */
export function doctorScratch(engine: Engine, prefix: string): { scratch: string; home: string; repo: string } {
  const scratch = mkdtempSync(path.join(os.tmpdir(), prefix))
  const home = path.join(scratch, 'omh')
  cpSync(path.join(DOCTOR_FIXTURE, 'profile'), home, { recursive: true })
  writeFileSync(path.join(home, 'settings.toml'), `runtime = "${engine}"\n\n[image]\nbase = "${TEST_BASE}"\nnetwork = "host"\n`)
  const repo = path.join(scratch, 'repo')
  cpSync(path.join(DOCTOR_FIXTURE, 'project'), repo, { recursive: true })
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: repo, stdio: 'pipe' })
  git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('commit', '-q', '-m', 'init')
  return { scratch, home, repo }
}

/** The first report of `omh doctor --json`, passed or failed. */
export function doctorReport(stdout: string): DoctorReport {
  const doc = JSON.parse(stdout)
  return doc.status === 0 ? doc.result.reports[0] : doc.error.details.reports[0]
}
