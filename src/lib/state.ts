import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { OmhError, STATE_MOVE_FAILED, type RuntimeContext } from '@omh/plugin-api'
import type { Kernel } from '@omh/kernel'
import { MOVE_JOURNAL, STATE_ENTRIES, omhHomeOf, omhStateOf } from '@omh/kernel/locations'
import { idleCheckDue } from '@omh/sandbox/idle-due'

type Env = Readonly<Record<string, string | undefined>>

/**
 * Whether the profile still holds omh's state, or a move of it was cut
 * short: a readdir and a stat, cheap enough for every command.
 */
function stateToMove(home: string, state: string): boolean {
  if (home === state) return false
  if (existsSync(path.join(state, MOVE_JOURNAL))) return true
  try {
    return readdirSync(home).some((name) => (STATE_ENTRIES as readonly string[]).includes(name))
  } catch {
    return false
  }
}

/**
 * Run before every command: moves state left in the profile by an older omh
 * into the state directory, once, and says so.
 */
export async function settleState(env: Env, notice: (text: string) => void): Promise<void> {
  const home = omhHomeOf(env)
  const state = omhStateOf(env)
  if (!existsSync(state)) {
    try {
      // It will hold logins and keys: readable by the user alone from the start.
      mkdirSync(state, { recursive: true, mode: 0o700 })
    } catch {
      // A command that needs state reports the directory it cannot write; the rest need none.
    }
  }
  if (!stateToMove(home, state)) return
  const { moveState } = await import('@omh/sandbox/state')
  try {
    const move = await moveState(home, state, env)
    if (move.moved.length) notice(`omh: moved omh's state (${move.moved.length} ${move.moved.length === 1 ? 'part' : 'parts'}) from ${home} to ${state}; your profile stays in ${home}.`)
    for (const part of move.conflicts) {
      notice(`omh: ${path.join(home, part)} stays where it is: ${path.join(state, part)} already exists. Keep one of them and remove the other.`)
    }
  } catch (error) {
    throw OmhError.of(STATE_MOVE_FAILED, { args: [home, state, (error as Error).message], hintArgs: [state], cause: error })
  }
}

/**
 * Run before every command: stops session containers idle for longer than
 * their `[session] idle_stop`, in any repository, as `omh sessions down`
 * does. A stat decides whether to look at all; the engine is asked only
 * about containers found idle. It never fails the command it runs before.
 */
export async function reapIdle(env: Env, kernel: () => Promise<Kernel>, context: RuntimeContext, notice: (text: string) => void): Promise<void> {
  const state = omhStateOf(env)
  if (!idleCheckDue(state)) return
  const { findIdle, stopIdle } = await import('@omh/sandbox/state')
  try {
    const idle = await findIdle(state)
    for (const found of idle) {
      const { runtime } = await (await kernel()).resolveRuntime(found.engine, context)
      if (await stopIdle(found, runtime, context)) {
        notice(`omh: stopped the idle container of omh/${found.session} (${found.repo}), unused for ${Math.round(found.idleMs / 60_000)} minutes; its worktree and branch stay.`)
      }
    }
  } catch (error) {
    // The command the user asked for still runs; an engine or settings it cannot reach it reports itself.
    notice(`omh: idle session containers were left running: ${(error as Error).message}`)
  }
}
