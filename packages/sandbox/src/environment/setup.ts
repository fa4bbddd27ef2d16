/**
 * A new session's setup: the devcontainer's create commands and `[session]
 * setup`, run once in the worktree as the agent, after the container is up
 * and before the harness starts. Their output streams to the user and into a
 * log beside the session's bookkeeping; a failure keeps the session, and the
 * next launch runs the setup again until it succeeds once. Their network is
 * the session's: through its egress proxy, to the allowed hosts.
 */
import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { GUEST_WORK, OmhError, SETUP_FAILED, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import type { LifecycleCommand } from '@omh/kernel'
import type { SetupStep } from './project.js'
import { keepSetup, reuseSetup, setupKey, worktreeExtras, type SetupInputs } from './reuse-setup.js'

const DONE = 'setup-done.json'
export const SETUP_LOG = 'setup.log'

/** Whether the session's setup has succeeded once. */
export const setupDone = (run: string): Promise<boolean> =>
  readFile(path.join(run, DONE), 'utf8').then(
    () => true,
    () => false,
  )

/** One command as the engine runs it, and as the user reads it. */
interface Command {
  readonly argv: readonly string[]
  readonly shown: string
}

/** A lifecycle command's processes: a string through the shell, an array as it is, an object's entries side by side. */
export function commandsOf(command: LifecycleCommand): Command[][] {
  const one = (c: string | readonly string[]): Command => (typeof c === 'string' ? { argv: ['/bin/sh', '-c', c], shown: c } : { argv: c, shown: c.join(' ') })
  if (typeof command === 'string' || Array.isArray(command)) return [[one(command as string | readonly string[])]]
  return [Object.entries(command as Readonly<Record<string, string | readonly string[]>>).map(([, c]) => one(c))]
}

export interface SetupRun {
  readonly runtime: RuntimePlugin
  readonly container: string
  readonly user: string
  readonly steps: readonly SetupStep[]
  /** The session's run directory (the log and the done mark go there). */
  readonly run: string
  readonly session: string
  readonly context: RuntimeContext
  /**
   * Where the repository's kept setups are, and what this one starts from: a kept setup of the
   * same inputs is copied in instead of running, and this one is kept once it succeeds. Absent:
   * the setup runs, and is not kept (the container does not see the host's worktree, or
   * `[session] reuse_setup = false`).
   */
  readonly reuse?: { readonly store: string; readonly inputs: Omit<SetupInputs, 'steps'> }
}

/** Runs the setup unless it succeeded before; resolves whether it ran. */
export async function setUpSession(at: SetupRun): Promise<boolean> {
  if (!at.steps.length || (await setupDone(at.run))) return false
  await mkdir(at.run, { recursive: true })
  const log = path.join(at.run, SETUP_LOG)
  await writeFile(log, '')
  const begun = performance.now()
  const key = at.reuse ? await setupKey({ ...at.reuse.inputs, steps: at.steps }) : undefined
  if (at.reuse && key) {
    const kept = await reuseSetup(at.reuse.store, key, at.reuse.inputs.worktree).catch(() => undefined)
    if (kept) {
      const ms = Math.round(performance.now() - begun)
      at.context.progress(`Setting ${at.session} up: copied what ${kept.session}'s setup of the same inputs left (${kept.paths.join(', ')}) in ${(ms / 1000).toFixed(1)} s`)
      await appendFile(log, `# copied what ${kept.session}'s setup of the same inputs left: ${kept.paths.join(', ')}\n# reused after ${ms} ms\n`)
      await markDone(at.run, { from: kept.session })
      return true
    }
  }
  const before = at.reuse && key ? await worktreeExtras(at.reuse.inputs.worktree, at.reuse.inputs.env) : undefined
  at.context.progress(`Setting ${at.session} up (once): ${at.steps.length} step${at.steps.length === 1 ? '' : 's'}; the output is kept in ${log}`)
  for (const step of at.steps) {
    for (const group of commandsOf(step.command)) {
      // An object's commands run side by side, as the devcontainer spec runs them.
      const results = await Promise.all(
        group.map(async (command) => {
          at.context.progress(`$ ${command.shown}`)
          await appendFile(log, `$ ${command.shown}\n`)
          const started = performance.now()
          const lines: string[] = []
          const result = await at.runtime.exec(
            at.container,
            command.argv,
            { tty: false, capture: true, stream: true, user: at.user, workdir: GUEST_WORK },
            {
              ...at.context,
              progress: (line) => {
                lines.push(line)
                at.context.progress(`  ${line}`)
              },
            },
          )
          // A runtime that does not stream hands the output over at the end.
          const output = lines.length ? lines.join('\n') : [result.stdout, result.stderr].filter(Boolean).join('\n')
          if (!lines.length && output) for (const line of output.split('\n')) at.context.progress(`  ${line}`)
          const ms = Math.round(performance.now() - started)
          await appendFile(log, `${output ? `${output}\n` : ''}# exit status ${result.exitCode} after ${ms} ms\n`)
          if (result.exitCode === 0) at.context.progress(`  done in ${(ms / 1000).toFixed(1)} s`)
          return { command, exitCode: result.exitCode }
        }),
      )
      const failed = results.find((r) => r.exitCode !== 0)
      if (failed) {
        throw OmhError.of(SETUP_FAILED, { args: [at.session, step.from, failed.command.shown, failed.exitCode], hintArgs: [log, at.session] })
      }
    }
  }
  await markDone(at.run, {})
  if (at.reuse && key && before) {
    // Keeping is a saving for later sessions: one that fails leaves this session as it is.
    const after = await worktreeExtras(at.reuse.inputs.worktree, at.reuse.inputs.env)
    const kept = after ? await keepSetup({ store: at.reuse.store, key, worktree: at.reuse.inputs.worktree, session: at.session, before, after }).catch(() => undefined) : undefined
    if (kept) await appendFile(log, `# kept for the next session of the same inputs: ${kept.join(', ')}\n`)
  }
  return true
}

async function markDone(run: string, extra: { readonly from?: string }) {
  await writeFile(path.join(run, `${DONE}.tmp`), `${JSON.stringify({ at: new Date().toISOString(), ...extra })}\n`)
  await rename(path.join(run, `${DONE}.tmp`), path.join(run, DONE))
}
