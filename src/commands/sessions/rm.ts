import { Args, Flags } from '../../lib/oclif.js'
import { branchOf, removeWholeSession } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'

export interface SessionsRmResult {
  session: string
  branch: string
  /** What was given up with --force: commits and files that existed nowhere else ('unknown' where git could not tell). */
  discarded: { commits: number | 'unknown'; uncommitted: number | 'unknown' }
}

export default class SessionsRm extends SessionsCommand<SessionsRmResult> {
  static override summary = 'Remove a session: its container, worktree, branch and sandbox repository.'
  static override description =
    'Refused while the session holds work that exists nowhere else (commits on its branch no other ref has, uncommitted files), or while git cannot tell; --force removes it anyway.'
  static override args = { session: Args.string({ description: 'Session id, e.g. s01.', required: true }) }
  static override flags = {
    force: Flags.boolean({ summary: 'Remove it even with work that exists nowhere else.', default: false }),
    runtime: SessionsCommand.runtimeFlag,
  }

  async run(): Promise<SessionsRmResult> {
    const { args, flags } = await this.parse(SessionsRm)
    const kernel = await this.kernel()
    const repo = await this.repository()
    const sid = await this.session(args.session)
    const removal = await removeWholeSession(kernel.omhState, repo, sid, {
      force: flags.force,
      env: process.env,
      engine: async () => {
        const resolved = await this.runtimeFor(sid, flags.runtime, true)
        return resolved ? { runtime: resolved.runtime, context: this.runtimeContext() } : undefined
      },
    })
    for (const warning of removal.warnings) this.warn(warning)
    if (!this.jsonEnabled()) this.log(`removed ${sid} and its branch ${branchOf(sid)}`)
    return { session: sid, branch: branchOf(sid), discarded: removal.discarded }
  }
}
