import type { SessionRow, SessionRows } from '@omh/sandbox'
import { repositoryRows } from '../../lib/session-board.js'
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
    const result = await repositoryRows(repo, {
      omhState: kernel.omhState,
      context: this.runtimeContext(),
      engine: flags.runtime,
      runtime: async (engine) => (await this.runtime(engine, true))?.runtime,
      warn: (line) => this.warn(line),
    })
    if (!this.jsonEnabled()) this.print(result)
    return result
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
