import { OmhError, SESSION_UNRESPONSIVE, type ContainerInfo, type RuntimePlugin } from '@omh/plugin-api'
import { LABEL, backgroundHarnesses, sessionRows, type SessionRow, type SessionRows } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'
import { sessionsTable } from '../../lib/session-state.js'
import type { AnsweredAgain } from '@omh/fast-path'

export type { SessionRow }

export type SessionsLsResult = SessionRows

export default class SessionsLs extends SessionsCommand<SessionsLsResult> {
  /** Answered again while the files it read are unchanged: kept only while it asks git nothing but refs and asks no engine (a repository without sessions). */
  static answeredAgain: AnsweredAgain = {}
  static override summary = "List this repository's sessions: what each harness does, when it was last active, commits ahead, uncommitted work."
  static override description =
    "STATE is what the harness's own hooks last said (working, or waiting for you), finished with its exit status once it exits, or, for a harness whose adapter binds no hook moment, running as its process shows (`running (process)`); unknown when what the session holds is not something omh reads. The agent could lie about its state; omh only reads it as data. A count git cannot give is shown as unknown, never as zero. Uncommitted work leaves out the files omh mounts into the worktree. Files that two sessions have both changed since the default branch, committed or not, are named with the other session, so you can see a conflict coming before either is merged."
  static override flags = { runtime: SessionsCommand.runtimeFlag }

  async run(): Promise<SessionsLsResult> {
    const { flags } = await this.parse(SessionsLs)
    const kernel = await this.kernel()
    const repo = await this.repository()
    const engines = new Map<string, RuntimePlugin>()
    const context = this.runtimeContext()
    const result = await sessionRows(kernel.omhState, repo, {
      env: process.env,
      warn: (line) => this.warn(line),
      containers: (ids) => this.containersOf(repo.id, ids, flags.runtime, engines),
      // What a container's harness says of itself is read as data, and a container that does not answer leaves it unknown.
      harnesses: (id, container) => {
        const runtime = engines.get(id)
        if (!runtime) return Promise.resolve(undefined)
        return backgroundHarnesses(runtime, container.id, context, { session: id }).catch((error: unknown) => {
          if (error instanceof OmhError && error.code === SESSION_UNRESPONSIVE.code) this.warn(error.message)
          return undefined
        })
      },
    })
    if (!this.jsonEnabled()) this.print(result)
    return result
  }

  /** Each session's containers, asked of the engine it runs on; one that does not answer leaves its sessions unknown. */
  private async containersOf(repoId: string, ids: readonly string[], runtime: string | undefined, engines: Map<string, RuntimePlugin>): Promise<Map<string, ContainerInfo[] | undefined>> {
    const containers = new Map<string, ContainerInfo[] | undefined>()
    for (const [engine, group] of await this.byEngine([...ids], runtime)) {
      const resolved = await this.runtime(engine, true)
      const found = resolved
        ? await resolved.runtime.list({ [LABEL.repo]: repoId }, this.runtimeContext()).catch((error: Error) => {
            this.warn(`${resolved.runtime.engine} did not list containers: ${error.message}`)
            return undefined
          })
        : undefined
      for (const sid of group) {
        containers.set(sid, found?.filter((c) => c.labels[LABEL.session] === sid))
        if (resolved && found) engines.set(sid, resolved.runtime)
      }
    }
    return containers
  }

  private print(result: SessionsLsResult): void {
    const s = this.style
    if (!result.sessions.length) {
      this.notice('No sessions yet; start one with `omh <harness>`.')
      return
    }
    this.log(sessionsTable(result.sessions, s, Date.now() / 1000))
    // Each pair once, from the lower id's side.
    for (const r of result.sessions) {
      const byOther = new Map<string, string[]>()
      for (const f of r.shared ?? []) for (const other of f.with) if (other > r.id) byOther.set(other, [...(byOther.get(other) ?? []), f.path])
      for (const [other, files] of byOther) {
        const named = files.slice(0, 5).join(', ') + (files.length > 5 ? ` and ${files.length - 5} more` : '')
        this.log(s.yellow(`${r.id} and ${other} both changed ${files.length === 1 ? '' : `${files.length} files: `}${named}`))
      }
    }
  }
}
