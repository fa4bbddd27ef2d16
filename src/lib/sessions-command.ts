import { Flags } from './oclif.js'
import { NOT_A_REPOSITORY, OmhError, SESSION_NOT_FOUND, isOmhError, type RuntimeContext } from '@omh/plugin-api'
import { type ResolvedRuntime } from '@omh/kernel'
import { listSessions, repository, type Repository } from '@omh/sandbox'
import { OmhCommand } from './omh-command.js'

/** The commands under `omh sessions`: they work on the sessions of the repository omh runs in. */
export abstract class SessionsCommand<T> extends OmhCommand<T> {
  static runtimeFlag = Flags.string({ summary: 'The container engine to ask (default: the `runtime` setting).', helpValue: '<engine>' })

  protected async repository(): Promise<Repository> {
    const kernel = await this.kernel()
    if (!kernel.repoRoot) throw OmhError.of(NOT_A_REPOSITORY, { args: [process.cwd()] })
    return repository(kernel.repoRoot)
  }

  /** The session named, or the most recent one. */
  protected async session(sid: string | undefined): Promise<string> {
    const kernel = await this.kernel()
    const repo = await this.repository()
    const known = await listSessions(kernel.omhHome, repo)
    const chosen = sid ?? known.at(-1)
    if (!chosen || !known.includes(chosen)) throw OmhError.of(SESSION_NOT_FOUND, { args: [sid, repo.root], hintArgs: [known] })
    return chosen
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
