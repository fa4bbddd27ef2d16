import { Args, Flags } from '../../lib/oclif.js'
import { branchOf, commitSession, resolveBase, workState } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'

export interface SessionsCommitResult {
  session: string
  branch: string
  commit: string
  /** Commits on the branch since the base; null when git could not count. */
  ahead: number | null
}

export default class SessionsCommit extends SessionsCommand<SessionsCommitResult> {
  static override summary = "Commit a session's work to its branch omh/<sid>, with your message."
  static override description =
    "Everything the agent changed in the worktree is committed on the host, as you; omh's own mounted files never are. Git hooks do not run: the worktree is the agent's, and a hook would run what it wrote."
  static override args = { session: Args.string({ description: 'Session id, e.g. s01 (default: the most recent).' }) }
  static override flags = { message: Flags.string({ char: 'm', summary: 'The commit message.', required: true }) }

  async run(): Promise<SessionsCommitResult> {
    const { args, flags } = await this.parse(SessionsCommit)
    const kernel = await this.kernel()
    const repo = await this.repository()
    const sid = await this.session(args.session)
    const commit = await commitSession(kernel.omhState, repo, sid, flags.message, process.env)
    const base = await resolveBase(repo, process.env).catch(() => undefined)
    const state = await workState(kernel.omhState, repo, sid, base?.commit, process.env)
    const ahead = state.ahead === 'unknown' ? null : state.ahead
    if (!this.jsonEnabled()) {
      const tally = ahead === null ? '' : ` (${ahead} commit${ahead === 1 ? '' : 's'} ahead of ${base!.name})`
      this.log(`committed ${commit.slice(0, 8)} to ${branchOf(sid)}${tally}`)
    }
    return { session: sid, branch: branchOf(sid), commit, ahead }
  }
}
