import path from 'node:path'
import { OmhError, USAGE } from '@omh/plugin-api'
import { Args, Flags } from '../../lib/oclif.js'
import { branchOf, commitSession, resolveBase, workState, type Repository } from '@omh/sandbox'
import { SessionsCommand, leftOutNotice, sessionAndRest } from '../../lib/sessions-command.js'

export interface SessionsCommitResult {
  session: string
  branch: string
  /** The branch's new tip. */
  commit: string
  /** The agent's own commits that landed, oldest first: `from` in the sandbox repository, `commit` on the branch. */
  kept: { from: string; commit: string; subject: string }[]
  /** The agent's commits left out because they change nothing on the branch. */
  skipped: { from: string; subject: string }[]
  /** The commit of the files left uncommitted, with your message; null when there were none. */
  rest: string | null
  /** Commits on the branch since the base; null when git could not count. */
  ahead: number | null
  /** Directories holding a git repository of their own, which omh neither reads nor carries. */
  leftOut: string[]
}

export default class SessionsCommit extends SessionsCommand<SessionsCommitResult> {
  static override summary = "Commit a session's work to its branch omh/<sid>: the agent's own commits, then the rest with your message."
  static override description =
    "Each commit the agent made in the sandbox repository since the last time lands on omh/<sid> with its message, the sandbox as author and you as committer; then whatever the agent left uncommitted lands as one commit with your message. The branch moves once, so all of them land or none do. omh's own mounted files are never committed. Git hooks do not run: the worktree is the agent's, and a hook would run what it wrote."
  static override strict = false
  static override args = { session: Args.string({ description: 'Session id, e.g. s01 (default: the most recent); paths to take go after --.' }) }
  static override examples = ['omh sessions commit -m "Parser"', 'omh sessions commit s02 -m "Only the parser" -- src/parser', 'omh sessions commit -m "All but the fixtures" --exclude test/fixtures']
  static override flags = {
    message: Flags.string({ char: 'm', summary: 'The message of the commit holding what the agent left uncommitted.', required: true }),
    squash: Flags.boolean({ summary: "Take the files as they stand, as one commit with your message; the agent's commits are not kept.", default: false }),
    exclude: Flags.string({ summary: 'Leave this path (a file, or a directory and all under it) in the session for a later commit; repeatable.', multiple: true, helpValue: '<path>' }),
    runtime: SessionsCommand.runtimeFlag,
  }

  async run(): Promise<SessionsCommitResult> {
    const { flags } = await this.parse(SessionsCommit)
    if (!flags.message.trim()) throw OmhError.of(USAGE, { args: ['The message of a commit cannot be empty: say what the work does, e.g. -m "Parse dates".'], hintArgs: ['sessions commit'] })
    const { session, rest } = sessionAndRest(this.argv, ['--runtime', '--message', '-m', '--exclude'], 'sessions commit')
    const kernel = await this.kernel()
    const repo = await this.repository()
    const sid = await this.session(session)
    const selection = { paths: rest.map((p) => inRepository(repo, p)), exclude: (flags.exclude ?? []).map((p) => inRepository(repo, p)) }
    await this.bringHome(sid, flags.runtime)
    const done = await commitSession(kernel.omhState, repo, sid, flags.message, process.env, {
      squash: flags.squash,
      ...(selection.paths.length || selection.exclude.length ? { selection } : {}),
    })
    const base = await resolveBase(repo, process.env).catch(() => undefined)
    const state = await workState(kernel.omhState, repo, sid, base?.commit, process.env)
    const ahead = state.ahead === 'unknown' ? null : state.ahead
    if (!this.jsonEnabled()) {
      const s = this.style
      for (const k of done.kept) this.log(`kept ${k.commit!.slice(0, 8)} ${k.subject} ${s.dim(`(the agent's ${k.from.slice(0, 8)})`)}`)
      for (const k of done.skipped) this.log(s.dim(`left out the agent's ${k.from.slice(0, 8)} ${k.subject}: it changes nothing on ${branchOf(sid)}`))
      for (const dir of done.leftOut) this.log(s.dim(leftOutNotice(dir)))
      const tally = ahead === null ? '' : ` (${ahead} commit${ahead === 1 ? '' : 's'} ahead of ${base!.name})`
      if (done.rest) this.log(`committed ${done.rest.slice(0, 8)} to ${branchOf(sid)}${tally}`)
      else this.log(`nothing left uncommitted; ${branchOf(sid)} is at ${done.commit.slice(0, 8)}${tally}`)
    }
    return {
      session: sid,
      branch: branchOf(sid),
      commit: done.commit,
      kept: done.kept.map((k) => ({ from: k.from, commit: k.commit!, subject: k.subject })),
      skipped: done.skipped.map((k) => ({ from: k.from, subject: k.subject })),
      rest: done.rest ?? null,
      ahead,
      leftOut: [...done.leftOut],
    }
  }
}

/** A path as typed (from where omh runs) as the repository names it; one outside it is a usage error. */
function inRepository(repo: Repository, typed: string): string {
  const relative = path.relative(repo.root, path.resolve(typed)).split(path.sep).join('/')
  if (!relative || relative === '..' || relative.startsWith('../') || path.isAbsolute(relative)) {
    throw OmhError.of(USAGE, { args: [`${typed} is not a path inside ${repo.root}: name files of the session's work as the repository does.`], hintArgs: ['sessions commit'] })
  }
  return relative
}
