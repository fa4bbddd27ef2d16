#!/usr/bin/env node
/**
 * `npm run drift`: does the newest release of each bundled harness still read what omh writes?
 *
 * For every adapter with a `[release]`, asks the npm registry for the package's newest version and,
 * when it differs from the pin, runs `omh doctor <harness>` (with `--turn` where the adapter drives
 * one) twice on one engine: on the pinned release, and on the newest through a personal copy of the
 * adapter whose `install` names it. The profile is test/fixtures/doctor, something in every class.
 * Prints, per harness and class, "same", "changed" (what the harness showed differs; the evidence
 * follows the table) or "broken" (the pin proves the class and the newest does not), and exits 1
 * when anything broke. The newest release changes under a run, so this is no CI step: it is how a
 * pin is raised (docs/adapters.md).
 *
 *   npm run drift [-- --engine docker|podman] [--against VERSION] [claude codex …]
 *
 * `--against VERSION` compares the pin with that release instead of the newest (one harness named):
 * how a pin is lowered, or a suspect release examined.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parse } from 'smol-toml'

const ROOT = path.resolve(import.meta.dirname, '..')
const CLASSES = ['rules', 'skills', 'mcp', 'commands', 'subagents', 'hooks']
const args = process.argv.slice(2)
const engineAt = args.indexOf('--engine')
const engine = engineAt === -1 ? (process.env.OMH_DRIFT_ENGINE ?? 'docker') : args[engineAt + 1]
const againstAt = args.indexOf('--against')
const against = againstAt === -1 ? undefined : args[againstAt + 1]
const valueAt = new Set([engineAt, againstAt].filter((n) => n !== -1).map((n) => n + 1))
const only = args.filter((a, n) => !a.startsWith('--') && !valueAt.has(n))
if (against && only.length !== 1) {
  process.stderr.write('drift: --against compares one harness: name it (npm run drift -- --against 1.2.3 gemini)\n')
  process.exit(2)
}
const base = process.env.OMH_TEST_BASE ?? 'localhost/omh-base:debian'

/** The registry's newest version of a package, or why there is none. */
function newest(pkg) {
  const ran = spawnSync('npm', ['view', pkg, 'version'], { encoding: 'utf8' })
  return ran.status === 0 ? { version: ran.stdout.trim() } : { error: ran.stderr.trim().split('\n').pop() }
}

/** A profile with something in every class, and a repository, both of their own. */
function scratch() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'omh-drift-'))
  const home = path.join(dir, 'omh')
  const fixture = path.join(ROOT, 'test/fixtures/doctor')
  cpSync(path.join(fixture, 'profile'), home, { recursive: true })
  writeFileSync(path.join(home, 'settings.toml'), `runtime = "${engine}"\n\n[image]\nbase = "${base}"\nnetwork = "host"\n`)
  const repo = path.join(dir, 'repo')
  cpSync(path.join(fixture, 'project'), repo, { recursive: true })
  const git = (...a) => execFileSync('git', ['-c', 'user.name=drift', '-c', 'user.email=drift@omh', ...a], { cwd: repo, stdio: 'pipe' })
  git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('commit', '-q', '-m', 'drift')
  return { dir, home, repo }
}

/** One doctor run's report, passed or failed, or what stopped it. */
function doctor(harness, turn, at) {
  const ran = spawnSync(process.execPath, [path.join(ROOT, 'bin/run.js'), 'doctor', harness, ...(turn ? ['--turn'] : []), '--json'], {
    cwd: at.repo,
    env: { ...process.env, OMH_HOME: at.home, NO_COLOR: '1' },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  })
  try {
    const doc = JSON.parse(ran.stdout)
    const report = doc.status === 0 ? doc.result.reports[0] : doc.error?.details?.reports?.[0]
    if (report) return report
    return { error: doc.error?.message ?? `exit ${ran.status}` }
  } catch {
    return { error: (ran.stderr || ran.stdout).trim().split('\n').slice(-3).join(' | ') || `exit ${ran.status}` }
  }
}

/** What the harness itself showed for one class: its checks, each as `name: ok detail`. */
const evidence = (report, capability) =>
  (report.checks ?? []).filter((c) => c.capability === capability && c.kind !== 'mount').map((c) => `${c.name}: ${c.ok ? 'ok' : 'FAILED'}${c.warning ? ' (warning)' : ''} ${c.detail}`)

/** Per class: same, changed (with what changed), broken, or not run, as the newest release stands beside the pin. */
function compare(pinned, latest) {
  return CLASSES.map((capability) => {
    const was = pinned.classes?.[capability]
    const now = latest.classes?.[capability]
    if (was === 'proved' && now !== 'proved') return { capability, verdict: 'broken', why: [`${was} → ${now ?? latest.error}`, ...evidence(latest, capability).filter((e) => e.includes('FAILED'))] }
    // A release whose doctor did not run shows nothing for the classes the pin does not prove either.
    if (latest.error) return { capability, verdict: 'not run', why: [] }
    const before = evidence(pinned, capability)
    const after = evidence(latest, capability)
    const gone = before.filter((e) => !after.includes(e))
    const added = after.filter((e) => !before.includes(e))
    if (was !== now || gone.length || added.length) return { capability, verdict: 'changed', why: [...(was !== now ? [`${was} → ${now}`] : []), ...gone.map((e) => `- ${e}`), ...added.map((e) => `+ ${e}`)] }
    return { capability, verdict: 'same', why: [] }
  })
}

const adapters = readdirSync(path.join(ROOT, 'adapters'))
  .filter((f) => f.endsWith('.toml'))
  .map((f) => ({ file: path.join(ROOT, 'adapters', f), text: readFileSync(path.join(ROOT, 'adapters', f), 'utf8') }))
  .map((a) => ({ ...a, data: parse(a.text) }))
  .filter((a) => a.data.release && (!only.length || only.includes(a.data.name)))

const rows = []
const notes = []
for (const adapter of adapters) {
  const { name, release } = adapter.data
  const turn = adapter.data.turn !== undefined
  const latest = against ? { version: against } : newest(release.package)
  if (latest.error) {
    rows.push([name, release.version, '?', ...CLASSES.map(() => '?')])
    notes.push(`${name}: the registry did not answer for ${release.package}: ${latest.error}`)
    continue
  }
  if (latest.version === release.version) {
    rows.push([name, release.version, latest.version, ...CLASSES.map(() => 'same')])
    continue
  }
  process.stderr.write(`drift: ${name} ${release.version} and ${latest.version} on ${engine}${turn ? ', with a turn' : ''}\n`)
  const at = scratch()
  try {
    const pinned = doctor(name, turn, at)
    mkdirSync(path.join(at.home, 'adapters'), { recursive: true })
    const pin = `${release.package}@${release.version}`
    const raised = adapter.text.replaceAll(pin, `${release.package}@${latest.version}`).replace(/(release\s*=\s*\{[^}]*version\s*=\s*")[^"]*(")/, `$1${latest.version}$2`)
    writeFileSync(path.join(at.home, 'adapters', `${name}.toml`), raised)
    const next = doctor(name, turn, at)
    if (pinned.error) notes.push(`${name} ${release.version}: doctor did not run: ${pinned.error}`)
    if (next.error) notes.push(`${name} ${latest.version}: doctor did not run: ${next.error}`)
    const verdicts = compare(pinned, next)
    rows.push([name, release.version, latest.version, ...verdicts.map((v) => v.verdict)])
    for (const v of verdicts) if (v.why.length) notes.push(`${name} ${v.capability} ${v.verdict}:\n  ${v.why.join('\n  ')}`)
    if (next.image && next.image !== pinned.image) spawnSync(engine, ['rmi', next.image], { stdio: 'ignore' })
  } finally {
    rmSync(at.dir, { recursive: true, force: true })
  }
}

const header = ['harness', 'pinned', against ? 'against' : 'newest', ...CLASSES]
const widths = header.map((h, n) => Math.max(h.length, ...rows.map((r) => String(r[n]).length)))
const line = (cells) => cells.map((c, n) => String(c).padEnd(widths[n])).join('  ').trimEnd()
process.stdout.write(`${[line(header), ...rows.map(line)].join('\n')}\n`)
if (notes.length) process.stdout.write(`\n${notes.join('\n\n')}\n`)
process.exitCode = rows.some((r) => r.includes('broken')) ? 1 : 0
