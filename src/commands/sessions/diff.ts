import { Args, Flags } from '../../lib/oclif.js'
import { resolveBase, sessionDiff } from '@omh/sandbox'
import { printable } from '../../lib/printable.js'
import { SessionsCommand, leftOutNotice } from '../../lib/sessions-command.js'

export interface SessionsDiffResult {
  session: string
  base: string
  files: { path: string; added: number | null; deleted: number | null }[]
  diff: string
  /** Directories holding a git repository of their own, which omh neither reads nor carries. */
  leftOut: string[]
}

export default class SessionsDiff extends SessionsCommand<SessionsDiffResult> {
  static override summary = "Show a session's changes against where it started: committed and not."
  static override description = "omh's own mounted files are left out. Without a session id, the most recent session."
  static override args = { session: Args.string({ description: 'Session id, e.g. s01.' }) }
  static override flags = { stat: Flags.boolean({ summary: 'Summarise by file instead of printing the patch.', default: false }), runtime: SessionsCommand.runtimeFlag }

  async run(): Promise<SessionsDiffResult> {
    const { args, flags } = await this.parse(SessionsDiff)
    const kernel = await this.kernel()
    const repo = await this.repository()
    const sid = await this.session(args.session)
    await this.bringHome(sid, flags.runtime)
    const base = await resolveBase(repo, process.env)
    const diff = await sessionDiff(kernel.omhState, repo, sid, base.commit, process.env, flags.stat ? 'stat' : 'patch')
    if (!this.jsonEnabled()) {
      // The agent wrote these bytes: on a terminal they are shown, never obeyed; a pipe gets the patch as it is.
      if (diff.text) this.answer(process.stdout.isTTY ? printable(diff.text) : diff.text)
      else this.notice(`No changes on omh/${sid} since ${base.name}.`)
      for (const dir of diff.leftOut) this.notice(leftOutNotice(dir))
    }
    return { session: sid, base: diff.base, files: [...diff.files], diff: diff.text, leftOut: [...diff.leftOut] }
  }
}
