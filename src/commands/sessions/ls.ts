import { LABEL, branchOf, listSessions, readClaim, resolveBase, sessionPaths, workState, type Count } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'
import { table } from '../../lib/table.js'

export interface SessionRow {
  id: string
  branch: string
  /** `running`, `stopped`, `none` (no container), or `unknown` (no engine answered). */
  container: 'running' | 'stopped' | 'none' | 'unknown'
  /** The harness the container was set up for. */
  harness: string | null
  /** An omh process on this machine is launched into it right now. */
  inUse: boolean
  ahead: Count
  uncommitted: Count
  worktree: string
}

export interface SessionsLsResult {
  base: { name: string; commit: string } | null
  sessions: SessionRow[]
}

export default class SessionsLs extends SessionsCommand<SessionsLsResult> {
  static override summary = "List this repository's sessions: container, branch, commits ahead, uncommitted work."
  static override description =
    'A count git cannot give is shown as unknown, never as zero. Uncommitted work leaves out the files omh mounts into the worktree.'
  static override flags = { runtime: SessionsCommand.runtimeFlag }

  async run(): Promise<SessionsLsResult> {
    const { flags } = await this.parse(SessionsLs)
    const kernel = await this.kernel()
    const repo = await this.repository()
    const ids = await listSessions(kernel.omhState, repo)
    const base = await resolveBase(repo, process.env).catch((error: Error) => {
      this.warn(`${error.message} Commits ahead are shown as unknown.`)
      return undefined
    })
    const resolved = ids.length ? await this.runtime(flags.runtime, true) : undefined
    const containers = resolved
      ? await resolved.runtime.list({ [LABEL.repo]: repo.id }, this.runtimeContext()).catch((error: Error) => {
          this.warn(`${resolved.runtime.engine} did not list containers: ${error.message}`)
          return undefined
        })
      : undefined
    const sessions: SessionRow[] = []
    for (const id of ids) {
      const c = containers?.find((x) => x.labels[LABEL.session] === id)
      const state = await workState(kernel.omhState, repo, id, base?.commit, process.env)
      sessions.push({
        id,
        branch: branchOf(id),
        container: containers === undefined ? 'unknown' : c ? (c.running ? 'running' : 'stopped') : 'none',
        harness: c?.labels[LABEL.harness] ?? null,
        inUse: Boolean(await readClaim(kernel.omhState, repo, id)),
        ahead: state.ahead,
        uncommitted: state.uncommitted,
        worktree: sessionPaths(kernel.omhState, repo, id).worktree,
      })
    }
    const result = { base: base ?? null, sessions }
    if (!this.jsonEnabled()) this.print(result)
    return result
  }

  private print(result: SessionsLsResult): void {
    const s = this.style
    if (!result.sessions.length) {
      this.notice('No sessions yet; start one with `omh <harness>`.')
      return
    }
    const count = (n: Count, what: string) => (n === 'unknown' ? s.yellow(`${what} unknown`) : n === 0 ? s.dim(`0 ${what}`) : `${n} ${what}`)
    const against = result.base ? `ahead of ${result.base.name}` : 'ahead'
    this.log(
      table(
        result.sessions.map((r) => [
          s.bold(r.id),
          r.branch,
          r.container === 'running' ? s.green(`running${r.harness ? ` (${r.harness})` : ''}`) : r.container === 'unknown' ? s.yellow('unknown') : s.dim(r.container),
          count(r.ahead, against),
          count(r.uncommitted, 'uncommitted'),
          r.inUse ? s.cyan('in use') : '',
        ]),
      ),
    )
  }
}
