import { Args, Flags } from '../../lib/oclif.js'
import { OmhError, SESSION_UNSAVED_WORK } from '@omh/plugin-api'
import { LABEL, branchOf, clearMountpoints, removeSession, removeVolumes, sessionPaths, unsavedWork } from '@omh/sandbox'
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
    const work = await unsavedWork(kernel.omhState, repo, sid, process.env)
    const held = [
      work.commits === 'unknown' ? 'commits omh could not count' : work.commits ? `${work.commits} commit${work.commits === 1 ? '' : 's'} on ${branchOf(sid)} no other branch has` : '',
      work.uncommitted === 'unknown' ? 'files git could not check' : work.uncommitted ? `${work.uncommitted} uncommitted file${work.uncommitted === 1 ? '' : 's'}` : '',
    ].filter(Boolean)
    if (held.length && !flags.force) throw OmhError.of(SESSION_UNSAVED_WORK, { args: [sid, held.join(' and ')], hintArgs: [sid] })

    const resolved = await this.runtime(flags.runtime, true)
    if (resolved) {
      const context = this.runtimeContext()
      const labels = { [LABEL.repo]: repo.id, [LABEL.session]: sid }
      for (const c of await resolved.runtime.list(labels, context)) await resolved.runtime.down(c.id, context)
      await removeVolumes(resolved.runtime, labels, sessionPaths(kernel.omhState, repo, sid).run, context)
    } else {
      this.warn(`If a container of ${sid} remains, remove it with your engine (its name is omh-${repo.id}-${sid}).`)
    }
    await clearMountpoints(sessionPaths(kernel.omhState, repo, sid).run)
    await removeSession(kernel.omhState, repo, sid, process.env, { deleteBranch: true })
    if (!this.jsonEnabled()) this.log(`removed ${sid} and its branch ${branchOf(sid)}`)
    return { session: sid, branch: branchOf(sid), discarded: work }
  }
}
