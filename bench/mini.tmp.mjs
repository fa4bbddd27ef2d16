import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { compare, report } from './lib.js'
import { benchSessions } from './sessions.js'
const root = path.resolve(import.meta.dirname, '..')
const bin = path.join(root, 'bin/run.js')
const home = mkdtempSync(path.join(os.tmpdir(), 'omh-bench-'))
cpSync(path.join(root, 'examples/profile'), home, { recursive: true })
execFileSync('git', ['init', '-q'], { cwd: home })
const cache = mkdtempSync(path.join(os.tmpdir(), 'omh-bench-cache-'))
const env = { ...process.env, OMH_HOME: home, NO_COLOR: '1', XDG_CACHE_HOME: cache }
const runs = 15
const short = [['omh --help', ['--help']], ['omh adapters ls', ['adapters', 'ls']], ['omh render claude', ['render', 'claude']], ['omh sessions ls', ['sessions', 'ls']], ['omh plugins', ['plugins']]]
await new Promise((r) => setTimeout(r, 2100))
report(`CLI start-up, kept answers (median of ${runs})`, compare({ label: 'node -e 0', argv: [process.execPath, '-e', '0'] }, short.map(([n, a]) => ({ label: n, argv: [process.execPath, bin, ...a], target: 1.5 })), { runs, env, cwd: home }))
rmSync(home, { recursive: true, force: true }); rmSync(cache, { recursive: true, force: true })
for (const engine of (process.env.E ?? 'docker').split(',')) report(`Session launch on ${engine}`, benchSessions(engine, 7))
