import { Args, Flags } from '../../lib/oclif.js'
import { OmhError, SESSION_UNSAVED_WORK } from '@omh/plugin-api'
import { branchOf, clearMountpoints, readCopied, removeSession, sessionPaths, takeDown, unsavedWork } from '@omh/sandbox'
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

    const run = sessionPaths(kernel.omhState, repo, sid).run
    // The record of a copied session's volumes goes with the session: the last time omh can name them.
    const volumes = (await readCopied(run))?.volumes.map((v) => v.volume) ?? []
    const resolved = await this.runtimeFor(sid, flags.runtime, true)
    if (resolved) {
      const removed = await takeDown(kernel.omhState, repo, sid, { runtime: resolved.runtime, context: this.runtimeContext(), bringHome: false })
      if (volumes.length && !removed) {
        this.warn(`${sid}'s files were copied into volumes on an engine that does not share this disk, and ${resolved.runtime.engine} here has none of them: remove them on the engine the session ran on (${volumes.join(', ')}).`)
      }
    } else {
      const also = volumes.length ? `, its volumes ${volumes.join(', ')}` : ''
      this.warn(`If a container of ${sid} remains, remove it with your engine (its name is omh-${repo.id}-${sid}${also}).`)
      await clearMountpoints(run)
    }
    await removeSession(kernel.omhState, repo, sid, process.env, { deleteBranch: true })
    if (!this.jsonEnabled()) this.log(`removed ${sid} and its branch ${branchOf(sid)}`)
    return { session: sid, branch: branchOf(sid), discarded: work }
  }
}
