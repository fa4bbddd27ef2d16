/**
 * Harnesses in the background (`omh --detach`): which ones run in a session's container, and the
 * commands that bring one to a terminal or read what it printed. Everything here runs inside the
 * container through the engine; what comes back is the agent's output, so the host treats it as
 * text to show, never as anything to act on.
 */
import { GUEST_SOCKETS, TOOLSET_NODE } from '@omh/image'
import type { RuntimeContext, RuntimePlugin } from '@omh/plugin-api'
import { HARNESS_LOG_BYTES, harnessFiles } from './plan.js'

/** A harness name as an adapter spells it: anything else found beside the sockets is not omh's. */
const HARNESS_NAME = /^[a-z0-9][a-z0-9-]*$/

/** A harness's state in the session, as its files there show it. */
export interface BackgroundHarness {
  readonly harness: string
  /** Whether dtach still holds it: `running`, or `exited` with the status its supervisor kept. */
  readonly state: 'running' | 'exited'
  readonly status?: number
}

/**
 * Prints one line per harness that ran under dtach in the container: its name, whether its socket
 * still answers, and its kept exit status. Node is omh's own, so the answer does not depend on the
 * project's image.
 */
const LIST = `const fs = require('fs'), net = require('net'), path = require('path'); const dir = process.argv[1];
let names = []; try { names = fs.readdirSync(dir).filter((n) => n.endsWith('.sock') || n.endsWith('.status')).map((n) => n.replace(/\\.(sock|status)$/, '')) } catch {}
const alive = (s) => new Promise((done) => net.connect(s).on('connect', function () { this.destroy(); done(true) }).on('error', () => done(false)));
(async () => { for (const h of [...new Set(names)].sort()) { let status = ''; try { status = fs.readFileSync(path.join(dir, h + '.status'), 'utf8').trim() } catch {}
  process.stdout.write(JSON.stringify({ harness: h, running: await alive(path.join(dir, h + '.sock')), status }) + '\\n') } })()`

/** The harnesses that ran in the background in a container, running or exited. */
export async function backgroundHarnesses(runtime: RuntimePlugin, container: string, context: RuntimeContext): Promise<BackgroundHarness[]> {
  const ran = await runtime.exec(container, [TOOLSET_NODE, '-e', LIST, GUEST_SOCKETS], { tty: false, capture: true }, context)
  const out: BackgroundHarness[] = []
  for (const line of ran.stdout.split('\n')) {
    let entry: { harness?: unknown; running?: unknown; status?: unknown }
    try {
      entry = JSON.parse(line) as typeof entry
    } catch {
      continue
    }
    if (typeof entry.harness !== 'string' || !HARNESS_NAME.test(entry.harness)) continue
    const status = typeof entry.status === 'string' && /^\d{1,3}$/.test(entry.status) ? Number(entry.status) : undefined
    out.push({ harness: entry.harness, state: entry.running === true ? 'running' : 'exited', ...(status !== undefined && entry.running !== true ? { status } : {}) })
  }
  return out
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
