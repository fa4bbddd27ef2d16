// npm run bench: every benchmark, one run, figures as ratios to a floor measured alongside.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { compare, report } from './lib.js'
import { profileBench } from './profile.js'
import { benchRuntimes } from './runtimes.js'
import { benchSessions } from './sessions.js'

const root = path.resolve(import.meta.dirname, '..')
const bin = path.join(root, 'bin/run.js')
const home = mkdtempSync(path.join(os.tmpdir(), 'omh-bench-'))
const env = { ...process.env, OMH_HOME: home, NO_COLOR: '1' }
const runs = Number(process.env.OMH_BENCH_RUNS ?? 15)

try {
  report(
    `CLI start-up (median of ${runs} runs each, interleaved)`,
    compare(
      { label: 'node -e 0', argv: [process.execPath, '-e', '0'] },
      [
        { label: 'omh --version', argv: [process.execPath, bin, '--version'], target: 1.5 },
        { label: 'omh adapters ls', argv: [process.execPath, bin, 'adapters', 'ls'], target: 1.5 },
        // A Tab in the shell: commands and flags from the manifest alone, then the harness names omh finds.
        { label: 'Tab: omh sessions <Tab>', argv: [process.execPath, bin, '__complete', 'sessions', ''], target: 1.5 },
        { label: 'Tab: omh doctor <Tab>', argv: [process.execPath, bin, '__complete', 'doctor', ''] },
      ],
      { runs, env, cwd: home },
    ),
  )
  const profile = await profileBench({ root, runs })
  console.log('\nProfile: 500 skills, 200 MCP servers, 50 rules sections; resolve + render for claude, opencode, codex')
  const met = (ok) => (ok ? 'met' : 'MISSED')
  console.log(`  in process, median of ${runs}        ${profile.ms.toFixed(1).padStart(8)} ms  (target ≤ 50 ms ${met(profile.ms <= 50)})`)
  console.log(`  first stage: files and links written  ${String(profile.first).padStart(6)}`)
  console.log(`  re-stage of the unchanged profile     ${String(profile.again).padStart(6)}     (target 0 ${met(profile.again === 0)})`)
  benchRuntimes({ runs })
} finally {
  rmSync(home, { recursive: true, force: true })
}

// Sessions on each engine; OMH_BENCH_ENGINES=docker limits it to one.
const sessionRuns = Number(process.env.OMH_BENCH_SESSION_RUNS ?? 9)
for (const engine of (process.env.OMH_BENCH_ENGINES ?? 'docker,podman').split(',').filter(Boolean)) {
  report(`Session launch on ${engine} (median of ${sessionRuns} runs each, interleaved)`, benchSessions(engine, sessionRuns))
}
