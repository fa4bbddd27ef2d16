// Kept launches: a warm relaunch of a session goes straight to the engine's
// exec. A launch that reused its session's running container as it was is
// recorded (bin/record.js): every file it read, what it printed before the
// harness started, the exec the runtime ran, and the engine's answer about
// the containers it relies on. The next launch with the same key replays it
// while every one of those files is unchanged and the engine gives the same
// answer (the same container ids, still running: a container's plan, stamped
// on it as a label, cannot change without a new id); otherwise it runs as
// always, which restarts or recreates what is gone, and is recorded again.
// Like bin/answers.js, this module is on the path of every such launch, so it
// imports nothing that is not needed to decide.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { omhStateOf, statePath } from '@omh/kernel/locations'
import { answerKey, current, readEntry } from './answers.js'

/** Bumped whenever the entry format or the recording rules change. */
const FORMAT = 'omh-launch-1'

/** A session id or name, as packages/sandbox/src/host/layout.ts spells them. */
const SESSION_ID = /^(?:s\d{2,}|(?!s\d+$)[a-z](?:-?[a-z0-9]){0,39})$/
/** An engine's name, as a runtime plugin gives it. */
const ENGINE = /^[a-z][a-z0-9-]{0,39}$/

/**
 * `omh [--session <id>] [--runtime <engine>] <harness> [args…]`, the two options in either order
 * and either spelling (`--session s01`, `-s s01`, `--session=s01`), and no other before the harness:
 * the launches that are kept. Each order is a launch key of its own.
 */
export function keptCandidate(argv) {
  const seen = new Set()
  let at = 0
  while (argv[at]?.startsWith('-')) {
    const word = argv[at]
    const [flag, inline] = word.startsWith('--') && word.includes('=') ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word, undefined]
    const name = flag === '--session' || flag === '-s' ? 'session' : flag === '--runtime' ? 'runtime' : undefined
    if (!name || seen.has(name)) return false
    const value = inline ?? argv[at + 1]
    if (!(name === 'session' ? SESSION_ID : ENGINE).test(value ?? '')) return false
    seen.add(name)
    at += inline === undefined ? 2 : 1
  }
  const harness = argv[at]
  // A named session is launched into by its harness; without one, a word of omh's own is a command.
  return typeof harness === 'string' && /^[a-z][a-z0-9._-]*$/.test(harness) && (seen.has('session') || !commandWords().has(harness))
}

let words
/** The first words of omh's own commands, from the manifest the CLI is built with: never a harness. */
function commandWords() {
  words ??= new Set(['help', ...Object.keys(JSON.parse(readFileSync(new URL('../oclif.manifest.json', import.meta.url), 'utf8')).commands).map((id) => id.split(':')[0])])
  return words
}

/** Everything besides files that can change a launch: as for a kept answer. */
export const launchKey = (argv, env = process.env) => JSON.stringify({ format: FORMAT, answer: answerKey(argv, env) })

/** Where kept launches are: beside the sessions' bookkeeping in the state directory, per user. */
export const keptDir = (env = process.env) => statePath(omhStateOf(env), 'run', '.kept-launch')

/** Whether an entry has every part a replay reads, of the right kind. */
function whole(entry) {
  const { exec, check, offer, out } = entry
  const strings = (v) => Array.isArray(v) && v.every((s) => typeof s === 'string')
  return (
    Array.isArray(out) &&
    exec && typeof exec.file === 'string' && strings(exec.args) && strings(exec.unset) && strings(exec.stdio) &&
    exec.env && typeof exec.env === 'object' && Object.values(exec.env).every((v) => typeof v === 'string') &&
    check && strings(check.args) && typeof check.answer === 'string' &&
    offer && typeof offer.run === 'string' && typeof offer.harness === 'string' &&
    (offer.allowlist === undefined || (strings(offer.allowlist.files) && typeof offer.allowlist.dir === 'string'))
  )
}

/** Runs a program to its end; resolves its status, or why it did not run. */
function started(file, args, options) {
  let child
  const done = new Promise((resolve) => {
    let stdout = ''
    let failed
    child = spawn(file, args, options)
    child.stdout?.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
    child.on('error', (error) => (failed ??= error))
    child.on('close', (status, signal) => resolve({ status, signal, failed, stdout }))
  })
  return { child, done }
}

/**
 * Runs the launch kept for `key` and sets the exit code to the harness's,
 * when the entry stands; false, having started nothing, otherwise. An entry
 * that cannot be read, parsed or trusted is ignored (and replaced by the next
 * launch).
 */
export async function replayLaunch(key, dir) {
  const entry = readEntry(key, dir)
  if (!entry || !whole(entry)) return false
  const { exec, check, offer } = entry
  const env = { ...process.env, ...exec.env }
  for (const name of exec.unset) delete env[name]
  // The engine answers while the files are checked and the claim's code loads.
  const asked = started(exec.file, check.args, { env, stdio: ['ignore', 'pipe', 'ignore'] })
  if (!current(entry)) {
    asked.child.kill()
    return false
  }
  const claiming = import('@omh/sandbox/claim')
  const answer = await asked.done
  if (answer.status !== 0 || answer.stdout !== check.answer) return false

  const { claimRun, repoLock, touchUp, withDirLock } = await claiming
  const release = await withDirLock(repoLock(offer.run), () => claimRun(offer.run, offer.harness))
  let stop
  let ran
  try {
    for (const [fd, data, base64] of entry.out) (fd === 1 ? process.stdout : process.stderr).write(base64 ? Buffer.from(data, 'base64') : data)
    if (offer.allowlist) stop = await watchAllowlist(offer)
    ran = await started(exec.file, exec.args, { env, stdio: exec.stdio }).done
  } finally {
    stop?.()
    await release()
  }
  // A client that could not start ran nothing: the launch runs as always, and says why.
  if (ran.failed && ran.status === null && !ran.signal) return false
  await touchUp(offer.run)
  const code = ran.status ?? 1
  if (code !== 0) process.exitCode = code
  return true
}

/** While the harness runs, an edit to the allowlist reaches its proxy at once; omh loads only then. */
async function watchAllowlist(offer) {
  const { watchFiles } = await import('@omh/sandbox/watch-files')
  const { files, dir, container, engine } = offer.allowlist
  const root = fileURLToPath(new URL('..', import.meta.url))
  let running = Promise.resolve()
  return watchFiles(files, () => {
    running = running
      .then(async () => (await import('../dist/omh.js')).keptAllowlist(root, { harness: offer.harness, engine, container, dir }))
      .catch(() => undefined)
  })
}
