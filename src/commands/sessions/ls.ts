import type { ContainerInfo } from '@omh/plugin-api'
import { LABEL, branchOf, changedFiles, listSessions, readClaim, resolveBase, sessionPaths, workState, type Count } from '@omh/sandbox'
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
  /** Files this session changed (committed or not) that other sessions of the repository changed too; null when git could not tell. */
  shared: { path: string; with: string[] }[] | null
}

export interface SessionsLsResult {
  base: { name: string; commit: string } | null
  sessions: SessionRow[]
}

export default class SessionsLs extends SessionsCommand<SessionsLsResult> {
  static override summary = "List this repository's sessions: container, branch, commits ahead, uncommitted work."
  static override description =
    'A count git cannot give is shown as unknown, never as zero. Uncommitted work leaves out the files omh mounts into the worktree. Files that two sessions have both changed since the default branch, committed or not, are named with the other session, so you can see a conflict coming before either is merged.'
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
    // Each session's container is asked of the engine it runs on; one that does not answer leaves its sessions unknown.
    const containers = new Map<string, ContainerInfo[] | undefined>()
    for (const [engine, group] of await this.byEngine(ids, flags.runtime)) {
      const resolved = await this.runtime(engine, true)
      const found = resolved
        ? await resolved.runtime.list({ [LABEL.repo]: repo.id }, this.runtimeContext()).catch((error: Error) => {
            this.warn(`${resolved.runtime.engine} did not list containers: ${error.message}`)
            return undefined
          })
        : undefined
      for (const sid of group) containers.set(sid, found?.filter((c) => c.labels[LABEL.session] === sid))
    }
    const sessions: SessionRow[] = []
    const changed = new Map<string, string[] | undefined>()
    if (base) for (const id of ids) changed.set(id, await changedFiles(kernel.omhState, repo, id, base.commit, process.env))
    for (const id of ids) {
      const listed = containers.get(id)
      const c = listed?.find((x) => x.running) ?? listed?.[0]
      const state = await workState(kernel.omhState, repo, id, base?.commit, process.env)
      sessions.push({
        id,
        branch: branchOf(id),
        container: listed === undefined ? 'unknown' : c ? (c.running ? 'running' : 'stopped') : 'none',
        harness: c?.labels[LABEL.harness] ?? null,
        inUse: Boolean(await readClaim(kernel.omhState, repo, id)),
        ahead: state.ahead,
        uncommitted: state.uncommitted,
        worktree: sessionPaths(kernel.omhState, repo, id).worktree,
        shared: shared(id, changed),
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

/** The files `id` changed that other sessions changed too, each with those sessions; null when git could not tell for `id`. */
function shared(id: string, changed: ReadonlyMap<string, string[] | undefined>): SessionRow['shared'] {
  const mine = changed.get(id)
  if (!mine) return null
  const sets = new Map([...changed].map(([other, files]) => [other, new Set(files)] as const))
  const out: { path: string; with: string[] }[] = []
  for (const file of mine) {
    const others = [...sets].filter(([other, files]) => other !== id && files.has(file)).map(([other]) => other)
    if (others.length) out.push({ path: file, with: others })
  }
  return out
}
