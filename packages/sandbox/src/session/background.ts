/**
 * Harnesses in the background (`omh --detach`): which ones run in a session's container, and the
 * commands that bring one to a terminal or read what it printed. Everything here runs inside the
 * container through the engine; what comes back is the agent's output, so the host treats it as
 * text to show, never as anything to act on.
 */
import { GUEST_SOCKETS, TOOLSET_NODE } from '@omh/image'
import { OmhError, SESSION_UNRESPONSIVE, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import { HARNESS_LOG_BYTES, harnessFiles } from './plan.js'
import { STATE_FILE_BYTES, type HarnessFiles } from './state.js'

/** A harness name as an adapter spells it: anything else found beside the sockets is not omh's. */
const HARNESS_NAME = /^[a-z0-9][a-z0-9-]*$/

/** A harness's state in the session, as its files there show it. */
export interface BackgroundHarness extends HarnessFiles {
  /** Whether dtach still holds it: `running`, or `exited` with the status its supervisor kept. */
  readonly process: 'running' | 'exited'
}

/**
 * Prints one line per harness found beside the sockets (at most 64): its name, whether its socket
 * still answers, and its kept exit status, state file and log, each read as the agent may have
 * left it: never through a link, never from anything but a regular file (a FIFO would hang the
 * read), never more than a few KB, and each with its mtime. Node is omh's own, so the answer does
 * not depend on the project's image; the whole listing gives up after a few seconds.
 */
export const LIST = `const fs = require('fs'), net = require('net'), path = require('path'); const [dir, limit] = process.argv.slice(1);
setTimeout(() => process.exit(0), 5000).unref();
let names = []; try { names = fs.readdirSync(dir).filter((n) => /\\.(sock|status|state)$/.test(n)).map((n) => n.replace(/\\.(sock|status|state)$/, '')) } catch {}
const alive = (s) => new Promise((done) => { const c = net.connect(s); const t = setTimeout(() => { c.destroy(); done(false) }, 1000); c.on('connect', () => { clearTimeout(t); c.destroy(); done(true) }).on('error', () => { clearTimeout(t); done(false) }) });
const read = (f) => { let fd; try { fd = fs.openSync(f, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK) } catch (e) { return e.code === 'ENOENT' ? null : 'unreadable' }
  try { const st = fs.fstatSync(fd); if (!st.isFile() || st.size > Number(limit)) return 'unreadable'; const b = Buffer.alloc(Number(limit) + 1); const n = fs.readSync(fd, b, 0, b.length, 0);
    return n > Number(limit) ? 'unreadable' : { text: b.subarray(0, n).toString('utf8'), at: Math.floor(st.mtimeMs / 1000) } } catch { return 'unreadable' } finally { fs.closeSync(fd) } };
const mtime = (f) => { try { const st = fs.lstatSync(f); return st.isFile() ? Math.floor(st.mtimeMs / 1000) : null } catch { return null } };
(async () => { for (const h of [...new Set(names)].sort().slice(0, 64)) {
  process.stdout.write(JSON.stringify({ harness: h, running: await alive(path.join(dir, h + '.sock')), status: read(path.join(dir, h + '.status')), state: read(path.join(dir, h + '.state')), log: mtime(path.join(dir, h + '.log')) }) + '\\n') } })()`

/**
 * How long the host waits for the listing. The listing gives up by itself after five seconds, but
 * only once it runs: in a container whose processes fill its pids limit (a fork bomb the agent
 * started) nothing new starts, and the engine's exec waits for ever.
 */
export const LISTING_TIMEOUT_MS = 15_000

/** The harnesses that ran in a container, running or exited, with what their files say. */
export async function backgroundHarnesses(
  runtime: RuntimePlugin,
  container: string,
  context: RuntimeContext,
  { session = container, timeoutMs = LISTING_TIMEOUT_MS }: { readonly session?: string; readonly timeoutMs?: number } = {},
): Promise<BackgroundHarness[]> {
  const timeout = AbortSignal.timeout(timeoutMs)
  const signal = context.signal ? AbortSignal.any([context.signal, timeout]) : timeout
  try {
    const ran = await runtime.exec(container, [TOOLSET_NODE, '-e', LIST, GUEST_SOCKETS, String(STATE_FILE_BYTES)], { tty: false, capture: true }, { ...context, signal })
    return parseListing(ran.stdout)
  } catch (error) {
    if (timeout.aborted && !context.signal?.aborted) throw OmhError.of(SESSION_UNRESPONSIVE, { args: [session, timeoutMs / 1000], hintArgs: [session], cause: error })
    throw error
  }
}

/**
 * The listing's lines as data. The agent can put anything beside the sockets and could, in
 * principle, answer in the listing's place, so every line is checked: a name an adapter could
 * have, a status of one to three digits, times that are whole seconds; anything else is left out.
 */
export function parseListing(stdout: string): BackgroundHarness[] {
  const out: BackgroundHarness[] = []
  for (const line of stdout.slice(0, 64 * (2 * STATE_FILE_BYTES + 1024)).split('\n')) {
    let entry: { harness?: unknown; running?: unknown; status?: unknown; state?: unknown; log?: unknown }
    try {
      entry = JSON.parse(line) as typeof entry
    } catch {
      continue
    }
    if (typeof entry !== 'object' || entry === null || typeof entry.harness !== 'string' || !HARNESS_NAME.test(entry.harness)) continue
    const running = entry.running === true
    const kept = fileOf(entry.status)
    const status = typeof kept === 'object' && /^\d{1,3}\n?$/.test(kept.text) ? Number(kept.text.trim()) : undefined
    const state = fileOf(entry.state)
    out.push({
      harness: entry.harness,
      running,
      process: running ? 'running' : 'exited',
      ...(status !== undefined && !running ? { status, ...(typeof kept === 'object' && kept.at !== undefined ? { statusAt: kept.at } : {}) } : {}),
      ...(state !== undefined ? { state } : {}),
      ...(seconds(entry.log) !== undefined ? { logAt: seconds(entry.log)! } : {}),
    })
  }
  return out
}

const seconds = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined)

/** A file as the listing read it: absent, its text and mtime, or unreadable (a link, a FIFO, too large). */
function fileOf(value: unknown): HarnessFiles['state'] {
  if (value === null || value === undefined) return undefined
  if (typeof value !== 'object' || typeof (value as { text?: unknown }).text !== 'string') return 'unreadable'
  const { text, at } = value as { text: string; at?: unknown }
  if (text.length > STATE_FILE_BYTES) return 'unreadable'
  return { text, ...(seconds(at) !== undefined ? { at: seconds(at)! } : {}) }
}

/** Attaches the terminal to a harness under dtach; Ctrl-\ detaches again and leaves it running. */
export const attachArgv = (harness: string): string[] => ['dtach', '-a', harnessFiles(harness).socket, '-r', 'winch', '-z']

/** The exit status a harness left, once an attach returned because it exited. */
export const statusArgv = (harness: string): string[] => [TOOLSET_NODE, '-e', "try { process.stdout.write(require('fs').readFileSync(process.argv[1], 'utf8')) } catch {}", harnessFiles(harness).status]

/**
 * Prints what a harness printed, the older half first; following, it keeps printing what comes,
 * across the rotation that keeps the log within its bound.
 */
const SHOW = `const fs = require('fs'); const [log, follow] = process.argv.slice(1);
const read = (f, from = 0) => { try { const b = fs.readFileSync(f); return b.subarray(Math.min(from, b.length)) } catch { return Buffer.alloc(0) } };
process.stdout.write(read(log + '.1')); let at = 0; const more = () => { const b = read(log, at); if (b.length) { process.stdout.write(b); at += b.length } };
more(); if (follow === 'follow') setInterval(() => { let size = 0; try { size = fs.statSync(log).size } catch {} if (size < at) at = 0; more() }, 250)`

/** Prints a harness's kept output, and with `follow` keeps printing it until interrupted. */
export const logsArgv = (harness: string, follow: boolean): string[] => [TOOLSET_NODE, '-e', SHOW, harnessFiles(harness).log, follow ? 'follow' : 'once']

/** How much of a harness's output a session keeps. */
export const KEPT_OUTPUT_BYTES = HARNESS_LOG_BYTES
