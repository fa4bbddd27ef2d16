/**
 * Stopping idle session containers without a daemon: each launch leaves a
 * record beside the session's bookkeeping (`run/<repo>/<sid>/up.json`) naming
 * the engine, the container and how long it may sit idle; any omh command
 * then looks, at most once per CHECK_EVERY_MS and with nothing but a stat
 * until then, for records whose session has been idle that long, and stops
 * those containers as `omh sessions down` does. The worktree and branch stay.
 */
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { RuntimeContext, RuntimePlugin } from '@omh/plugin-api'
import { statePath } from '@omh/kernel/locations'
import { agentUser, userSpec } from '../agent-user.js'
import { egressDir, removeEgress } from '../network/egress.js'
import { SESSION_ID } from '../host/layout.js'
import { clearMountpoints } from './mountpoints.js'
import { liveProcesses } from './reuse.js'
import { UP, alive, touchUp, withDirLock } from './claim.js'
import { CHECKED } from './idle-due.js'
import { TOOLSET_SSHD } from '@omh/image'

export { touchUp } from './claim.js'
export { CHECK_EVERY_MS, idleCheckDue } from './idle-due.js'

/** How long a session container may sit with nothing run in it, when `[session] idle_stop` does not say. */
export const DEFAULT_IDLE_STOP = '4h'

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const

/** A duration as settings and flags write it: `90m`, `4h`, `2d`. */
export const DURATION = /^[1-9]\d*[smhd]$/

/** A DURATION in milliseconds. */
export const durationMs = (text: string): number => Number(text.slice(0, -1)) * UNIT_MS[text.slice(-1) as keyof typeof UNIT_MS]

/** What a launch records once its session's container is up. */
export interface UpRecord {
  readonly engine: string
  readonly container: string
  readonly idleStopMs: number
}

/** A session container found idle, with the record that named it. */
export interface IdleContainer extends UpRecord {
  readonly repo: string
  readonly session: string
  /** The session's bookkeeping directory. */
  readonly run: string
  readonly idleMs: number
}

export async function recordUp(run: string, record: UpRecord): Promise<void> {
  await writeFile(path.join(run, UP), `${JSON.stringify(record)}\n`)
  // The engine apart, written only when it changes: the up record is touched at every launch's end,
  // and a launch that reads only this file stays fit to be kept (bin/launches.js) while it holds.
  if ((await readEngine(run)) !== record.engine) await writeFile(path.join(run, ENGINE), `${record.engine}\n`)
}

/** Beside the up record: the engine the session's container is up on. */
const ENGINE = 'engine'

/** The engine the session's container is up on, as its launch recorded; undefined once it is down. */
export async function readEngine(run: string): Promise<string | undefined> {
  const text = await readFile(path.join(run, ENGINE), 'utf8').catch(() => '')
  return text.trim() || undefined
}

/** The record of the session's container while it is up: the engine it runs on above all. */
export async function readUp(run: string): Promise<UpRecord | undefined> {
  try {
    const record = JSON.parse(await readFile(path.join(run, UP), 'utf8')) as Partial<UpRecord>
    return typeof record.engine === 'string' && typeof record.container === 'string' ? (record as UpRecord) : undefined
  } catch {
    return undefined
  }
}

/** The container is gone (down, removed, reaped): nothing to stop any more. */
export async function forgetUp(run: string): Promise<void> {
  await rm(path.join(run, UP), { force: true })
  await rm(path.join(run, ENGINE), { force: true })
}

/**
 * The session containers idle for longer than their record allows, and no
 * omh process holds their session. Stamps the check, so the next command
 * within CHECK_EVERY_MS does not look again.
 */
export async function findIdle(state: string, now = Date.now()): Promise<IdleContainer[]> {
  const root = statePath(state, 'run')
  await writeFile(path.join(root, CHECKED), '')
  const idle: IdleContainer[] = []
  for (const repo of await readdir(root).catch(() => [])) {
    for (const session of await readdir(path.join(root, repo)).catch(() => [])) {
      if (!SESSION_ID.test(session)) continue
      const found = await idleOne(path.join(root, repo, session), now)
      if (found) idle.push({ ...found, repo, session, run: path.join(root, repo, session) })
    }
  }
  return idle
}

async function idleOne(run: string, now: number): Promise<(UpRecord & { idleMs: number }) | undefined> {
  let record: UpRecord
  let recorded: number
  try {
    record = JSON.parse(await readFile(path.join(run, UP), 'utf8')) as UpRecord
    recorded = (await stat(path.join(run, UP))).mtimeMs
  } catch {
    return undefined
  }
  if (await claimed(run)) return undefined
  const used = await stat(path.join(run, 'last-used')).then((s) => s.mtimeMs, () => 0)
  const idleMs = now - Math.max(recorded, used)
  return typeof record.idleStopMs === 'number' && idleMs >= record.idleStopMs ? { ...record, idleMs } : undefined
}

const claimed = async (run: string): Promise<boolean> => {
  const pid = await readFile(path.join(run, 'claim'), 'utf8').then((text) => (JSON.parse(text) as { pid?: number }).pid, () => undefined)
  return typeof pid === 'number' && alive(pid)
}

// The listener `omh attach` starts: alone it serves no one, so it does not keep a container busy.
const SSHD_LISTENER = `${TOOLSET_SSHD} -f /tmp/omh-sshd/sshd_config`

/**
 * Stops one idle container under its repository's session lock, so a launch
 * never has the container stopped under it: a launch that claimed the
 * session meanwhile, or a process still running in the container (an editor
 * over ssh), keeps it, and restarts its idle clock. Resolves whether it stopped.
 */
export async function stopIdle(found: IdleContainer, runtime: RuntimePlugin, context: RuntimeContext): Promise<boolean> {
  return withDirLock(path.join(path.dirname(found.run), '.lock'), async () => {
    if (!(await idleOne(found.run, Date.now()))) return false
    const processes = await liveProcesses(runtime, found.container, userSpec(agentUser()), context)
    if (processes?.some((cmd) => !cmd.startsWith(SSHD_LISTENER))) {
      await touchUp(found.run)
      return false
    }
    await runtime.down(found.container, context)
    // The proxy of a stopped session serves no one; the next launch starts both anew.
    await removeEgress(runtime, found.container, egressDir(found.run), context).catch(() => undefined)
    await clearMountpoints(found.run)
    await forgetUp(found.run)
    return true
  })
}
