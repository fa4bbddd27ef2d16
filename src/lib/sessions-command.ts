import { OmhError, SESSION_NOT_RUNNING, USAGE, isOmhError, type ContainerInfo, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import { type ResolvedRuntime } from '@omh/kernel'
import { LABEL, Sessions, copyBack, readCopied, readEngine, sessionEngine, sessionPaths, type Repository } from '@omh/sandbox'
import { OmhCommand } from './omh-command.js'
import { sharedFlags } from './flags.js'
import { printable } from './printable.js'

/** The commands under `omh sessions`: they work on the sessions of the repository omh runs in. */
export abstract class SessionsCommand<T> extends OmhCommand<T> {
  static runtimeFlag = sharedFlags.runtime

  /** This repository's sessions; NOT_A_REPOSITORY outside one. */
  protected async sessions(): Promise<Sessions> {
    return Sessions.of(await this.kernel())
  }

  protected async repository(): Promise<Repository> {
    return (await this.sessions()).repo
  }

  /** The session named, or the current one: the one launched into last. */
  protected async session(sid: string | undefined): Promise<string> {
    return (await this.sessions()).current(sid)
  }

  /**
   * A session whose container runs on an engine that does not share this
   * disk keeps the agent's latest work in volumes there: brought home before
   * it is read. An engine that does not answer leaves the host's copy (from
   * the last launch) to be read, with a warning.
   */
  protected async bringHome(sid: string, engine?: string): Promise<void> {
    const kernel = await this.kernel()
    const run = sessionPaths(kernel.omhState, await this.repository(), sid).run
    if (!(await readCopied(run))) return
    const resolved = await this.runtimeFor(sid, engine, true)
    if (!resolved) {
      this.warn(`${sid} runs on an engine that does not share this disk, and it did not answer: this is the agent's work as the last launch brought it home.`)
      return
    }
    await copyBack(resolved.runtime, run, this.runtimeContext())
  }

  /**
   * The engine of session `sid`: the one its container is up on, whatever the
   * setting says (`--runtime` naming another is SESSION_ELSEWHERE); a session
   * not up takes `engine`, else the setting's.
   */
  protected async runtimeFor(sid: string, engine: string | undefined, optional: true): Promise<ResolvedRuntime | undefined>
  protected async runtimeFor(sid: string, engine: string | undefined, optional?: false): Promise<ResolvedRuntime>
  protected async runtimeFor(sid: string, engine: string | undefined, optional = false): Promise<ResolvedRuntime | undefined> {
    const kernel = await this.kernel()
    const run = sessionPaths(kernel.omhState, await this.repository(), sid).run
    const chosen = await sessionEngine(kernel, run, sid, engine, this.runtimeContext())
    return optional ? this.runtime(chosen, true) : this.runtime(chosen)
  }

  /** The session's running container on its engine, for a command run in it; SESSION_NOT_RUNNING without one. */
  protected async runningContainer(sid: string, engine: string | undefined): Promise<{ runtime: RuntimePlugin; container: ContainerInfo }> {
    const { runtime } = await this.runtimeFor(sid, engine)
    const repo = await this.repository()
    const container = (await runtime.list({ [LABEL.repo]: repo.id, [LABEL.session]: sid }, this.runtimeContext())).find((c) => c.running)
    if (!container) throw OmhError.of(SESSION_NOT_RUNNING, { args: [sid], hintArgs: [sid] })
    return { runtime, container }
  }

  /**
   * Sessions grouped by the engine each is up on; those not up go with
   * `engine` (undefined: the setting's). A command over several sessions asks
   * each engine once.
   */
  protected async byEngine(ids: readonly string[], engine: string | undefined): Promise<Map<string | undefined, string[]>> {
    const kernel = await this.kernel()
    const repo = await this.repository()
    const groups = new Map<string | undefined, string[]>()
    for (const sid of ids) {
      const up = (await readEngine(sessionPaths(kernel.omhState, repo, sid).run)) ?? engine
      groups.set(up, [...(groups.get(up) ?? []), sid])
    }
    return groups
  }

  protected runtimeContext(): RuntimeContext {
    return { env: process.env, verbose: this.verbose, progress: (line) => this.notice(this.errStyle.dim(line)) }
  }

  /** The container engine; with `optional`, its absence is a warning and the answer undefined. */
  protected async runtime(engine: string | undefined, optional: true): Promise<ResolvedRuntime | undefined>
  protected async runtime(engine: string | undefined, optional?: false): Promise<ResolvedRuntime>
  protected async runtime(engine: string | undefined, optional = false): Promise<ResolvedRuntime | undefined> {
    const kernel = await this.kernel()
    try {
      return await kernel.resolveRuntime(engine, this.runtimeContext())
    } catch (error) {
      if (!optional || !isOmhError(error)) throw error
      this.warn(`${error.message} Containers are shown as unknown.`)
      return undefined
    }
  }
}

/** What `diff` and `commit` say of a directory the agent made a repository of its own. */
export const leftOutNotice = (dir: string): string =>
  `left out ${printable(dir)}/: it holds a git repository of its own, which omh neither reads nor carries`

/**
 * The session id and the words after `--` from what follows a session
 * command (`exec`'s command, `commit`'s paths): before `--`, omh's flags
 * (`valued` ones with their value) and at most one session id.
 */
export function sessionAndRest(words: readonly string[], valued: readonly string[], command: string): { session?: string; rest: string[] } {
  const dashes = words.indexOf('--')
  const before = dashes < 0 ? words : words.slice(0, dashes)
  const rest = dashes < 0 ? [] : words.slice(dashes + 1)
  const positional: string[] = []
  for (let n = 0; n < before.length; n++) {
    const word = before[n]!
    if (valued.includes(word)) n++
    else if (!word.startsWith('-')) positional.push(word)
  }
  if (positional.length > 1) {
    throw OmhError.of(USAGE, { args: [`Give one session id, then the rest after --: omh ${command} ${positional[0]} -- ${positional.slice(1).join(' ')}`], hintArgs: [command] })
  }
  return { ...(positional[0] ? { session: positional[0] } : {}), rest }
}
