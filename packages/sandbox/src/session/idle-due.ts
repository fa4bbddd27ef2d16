/**
 * When the next look for idle session containers is due (see idle.ts): kept
 * apart, with nothing but `node:fs` and the state layout, so a kept answer
 * can be given only while no look is due without loading the sandbox.
 */
import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import { statePath } from '@omh/kernel/locations'

/** How often a command looks for idle containers at most. */
export const CHECK_EVERY_MS = 10 * 60_000

/** Stamped by each look, in the state's `run` directory. */
export const CHECKED = '.idle-checked'

/** When a look is next due (ms since the epoch); undefined while no session was ever launched, so none ever is. */
export function idleCheckDueAt(state: string): number | undefined {
  const run = statePath(state, 'run')
  if (!existsSync(run)) return undefined
  return (statSync(path.join(run, CHECKED), { throwIfNoEntry: false })?.mtimeMs ?? 0) + CHECK_EVERY_MS
}

/** Whether a look for idle containers is due: one stat, so every command can afford to ask. */
export function idleCheckDue(state: string, now = Date.now()): boolean {
  const due = idleCheckDueAt(state)
  return due !== undefined && now >= due
}
