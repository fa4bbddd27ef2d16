/**
 * Kept launches: a warm relaunch of a session goes straight to the engine's exec. A launch that
 * reused its session's running container as it was is recorded (record.ts): every file it read,
 * what it printed before the harness started, the exec its runtime handed over, and the engine's
 * answer about the containers it relies on. The next launch with the same key replays it while
 * every one of those files is unchanged and the engine gives the same answer (the same container
 * ids, still running: a container's plan, stamped on it as a label, cannot change without a new
 * id); otherwise it runs as always, which restarts or recreates what is gone, and is recorded
 * again. Like answers.ts, this is on the path of every such launch, so it imports nothing that is
 * not needed to decide.
 */
import type { SpawnOptions } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { omhStateOf, statePath } from '@omh/kernel/locations'
import type { KeptLaunchOffer } from '@omh/sandbox/kept'
import { answerKey, current, readEntry, reprint, type Entry } from './answers.js'
import { commandWords, type Grammar } from './grammar.js'

/** Bumped whenever the entry format or the recording rules change. */
const FORMAT = 'omh-launch-2'

/** A session id or name, as packages/sandbox/src/host/layout.ts spells them. */
const SESSION_ID = /^(?:s\d{2,}|(?!s\d+$)[a-z](?:-?[a-z0-9]){0,39})$/
/** An engine's name, as a runtime plugin gives it. */
const ENGINE = /^[a-z][a-z0-9-]{0,39}$/

type Env = Readonly<Record<string, string | undefined>>

/** The harness's process as a relaunch starts it: the runtime's client, with the environment as a difference from this one. */
export interface KeptExec {
  readonly file: string
  readonly args: readonly string[]
  /** Set on top of this process's environment (the next run has the same: it is part of the key). */
  readonly env: Readonly<Record<string, string>>
  /** Taken out of it. */
  readonly unset: readonly string[]
  readonly stdio: readonly ('inherit' | 'ignore')[]
}

/** What a kept launch's entry holds besides what every entry does. */
export interface LaunchEntry extends Entry {
  readonly exec: KeptExec
  /** The runtime's question about the containers, and the answer it gave when the launch was kept. */
  readonly check: { readonly args: readonly string[]; readonly answer: string }
  readonly offer: KeptLaunchOffer
}

/**
 * `omh [--session <id>] [--runtime <engine>] <harness> [args…]`, the two options in either order
 * and any spelling the launch command gives them (`--session s01`, `-s s01`, `--session=s01`), and
 * no other before the harness: the launches that are kept. Answers the launch in one spelling
 * (`--session`, then `--runtime`, then the harness and its arguments as typed), so every spelling
 * of the same launch takes the same kept launch; undefined for any other line.
 */
export function keptLaunchArgs(argv: readonly string[], grammar: Grammar): string[] | undefined {
  const values = new Map<'session' | 'runtime', string>()
  let at = 0
  while (argv[at]?.startsWith('-')) {
    const word = argv[at]!
    const [flag, inline] = word.startsWith('--') && word.includes('=') ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word, undefined]
    const name = grammar.session.includes(flag) ? 'session' : grammar.runtime.includes(flag) ? 'runtime' : undefined
    if (!name || values.has(name)) return undefined
    const value = inline ?? argv[at + 1]
    if (value === undefined || !(name === 'session' ? SESSION_ID : ENGINE).test(value)) return undefined
    values.set(name, value)
    at += inline === undefined ? 2 : 1
  }
  const harness = argv[at]
  // A named session is launched into by its harness; without one, a word of omh's own is a command.
  if (typeof harness !== 'string' || !/^[a-z][a-z0-9._-]*$/.test(harness) || (!values.has('session') && commandWords(grammar).has(harness))) return undefined
  const session = values.get('session')
  const runtime = values.get('runtime')
  return [...(session ? ['--session', session] : []), ...(runtime ? ['--runtime', runtime] : []), ...argv.slice(at)]
}

/** Everything besides files that can change a launch: as for a kept answer. */
export const launchKey = (argv: readonly string[], env: Env = process.env): string => JSON.stringify({ format: FORMAT, answer: answerKey(argv, env) })

/** Where kept launches are: beside the sessions' bookkeeping in the state directory, per user. */
export const keptDir = (env: Env = process.env): string => statePath(omhStateOf(env), 'run', '.kept-launch')

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string')

/** Whether an entry has every part a replay reads, of the right kind. */
function whole(entry: Record<string, unknown>): entry is Record<string, unknown> & LaunchEntry {
  const { exec, check, offer, out } = entry as { exec?: Record<string, unknown>; check?: Record<string, unknown>; offer?: Record<string, unknown>; out?: unknown }
  const allowlist = offer?.['allowlist'] as Record<string, unknown> | undefined
  return Boolean(
    Array.isArray(out) &&
      exec && typeof exec['file'] === 'string' && strings(exec['args']) && strings(exec['unset']) && strings(exec['stdio']) &&
      exec['env'] && typeof exec['env'] === 'object' && Object.values(exec['env']).every((v) => typeof v === 'string') &&
      check && strings(check['args']) && typeof check['answer'] === 'string' &&
      offer && typeof offer['run'] === 'string' && typeof offer['harness'] === 'string' &&
      (allowlist === undefined || (strings(allowlist['files']) && typeof allowlist.dir === 'string')),
  )
}

interface Ran {
  readonly status: number | null
  readonly signal: NodeJS.Signals | null
  readonly failed?: Error
  readonly stdout: string
}

/** Runs a program to its end; resolves its status, or why it did not run. */
function started(file: string, args: readonly string[], options: SpawnOptions) {
  // Taken when a launch is replayed, not at every start: the boot file holds this module too.
  const child = process.getBuiltinModule('node:child_process').spawn(file, args, options)
  const done = new Promise<Ran>((resolve) => {
    let stdout = ''
    let failed: Error | undefined
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.on('error', (error) => (failed ??= error))
    child.on('close', (status, signal) => resolve({ status, signal, stdout, ...(failed ? { failed } : {}) }))
  })
  return { child, done }
}

/**
 * Runs the launch kept for `key` and sets the exit code to the harness's, when the entry stands;
 * false, having started nothing, otherwise. An entry that cannot be read, parsed or trusted is
 * ignored (and replaced by the next launch). `root`: omh's install, whose code reloads the
 * allowlist when it is edited during the run.
 */
export async function replayLaunch(key: string, dir: string, root: URL): Promise<boolean> {
  const entry = readEntry(key, dir)
  if (!entry || !whole(entry)) return false
  const { exec, check, offer } = entry
  const env: Record<string, string | undefined> = { ...process.env, ...exec.env }
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
  let stop: (() => void) | undefined
  let ran: Ran
  try {
    reprint(entry.out)
    if (offer.allowlist) stop = await watchAllowlist(offer, offer.allowlist, root)
    ran = await started(exec.file, exec.args, { env, stdio: [...exec.stdio] }).done
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
async function watchAllowlist(offer: KeptLaunchOffer, allowlist: NonNullable<KeptLaunchOffer['allowlist']>, root: URL): Promise<() => void> {
  const { watchFiles } = await import('@omh/sandbox/watch-files')
  const { files, dir, container, engine } = allowlist
  let running = Promise.resolve()
  return watchFiles(files, () => {
    running = running
      .then(async () => {
        const omh = (await import(new URL('dist/omh.js', root).href)) as { keptAllowlist(root: string, at: object): Promise<void> }
        await omh.keptAllowlist(fileURLToPath(root), { harness: offer.harness, engine, container, dir })
      })
      .catch(() => undefined)
  })
}
