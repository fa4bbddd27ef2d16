import { Args, Flags } from '../../lib/oclif.js'
import { pushSession, resolveBase } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'

export interface SessionsPushResult {
  session: string
  branch: string
  remote: string
  url: string
  commit: string
  /** The forge's page comparing the branch with the default branch; null when the remote is no forge omh knows. */
  compare: string | null
}

export default class SessionsPush extends SessionsCommand<SessionsPushResult> {
  static override summary = "Push a session's branch omh/<sid> to a remote of your repository, from the host."
  static override description =
    "The agent never has your remotes or credentials: the push runs here, with your git and your credential helper or ssh agent, to the branch of the same name. Without --remote: the remote the branch tracks, else origin, else the only one. On GitHub, GitLab, Bitbucket, Codeberg and Gitea/Forgejo, prints the page comparing the branch with the default branch. Git hooks do not run, as for every git omh runs on a session's work."
  static override args = { session: Args.string({ description: 'Session id, e.g. s01 (default: the most recent).' }) }
  static override flags = { remote: Flags.string({ summary: 'The remote to push to.' }), runtime: SessionsCommand.runtimeFlag }

  async run(): Promise<SessionsPushResult> {
    const { args, flags } = await this.parse(SessionsPush)
    const repo = await this.repository()
    const sid = await this.session(args.session)
    await this.bringHome(sid, flags.runtime)
    const base = await resolveBase(repo, process.env).catch(() => undefined)
    const pushed = await pushSession(repo, sid, flags.remote, base?.name, process.env)
    if (!this.jsonEnabled()) {
      this.log(`pushed ${pushed.branch} (${pushed.commit.slice(0, 8)}) to ${pushed.remote}`)
      if (pushed.compare) this.log(`compare: ${pushed.compare}`)
    }
    return { session: sid, branch: pushed.branch, remote: pushed.remote, url: pushed.url, commit: pushed.commit, compare: pushed.compare ?? null }
  }
}
