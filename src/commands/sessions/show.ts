import { Args } from '../../lib/oclif.js'
import { LABEL, ago, backgroundHarnesses, branchOf, readLaunch, resolveBase, sessionDiff, sessionPaths, stateOf, type HarnessState } from '@omh/sandbox'
import { SessionsCommand } from '../../lib/sessions-command.js'
import { stateCell } from '../../lib/session-state.js'
import { quote } from '../../lib/plan-view.js'
import { table } from '../../lib/table.js'

export interface SessionsShowResult {
  session: string
  branch: string
  /** The harness the session's container was set up for, or whose state is shown. */
  harness: string | null
  /** What its harness does (as in `omh sessions ls`); null when no container runs or it could not be asked. */
  state: HarnessState | null
  /** Unix seconds of its last activity, when known. */
  lastActive: number | null
  /** The arguments a harness started in the background was given, as typed; null when there were none. */
  prompt: string[] | null
  base: string
  files: { path: string; added: number | null; deleted: number | null }[]
  /** `git diff --stat`, as `omh sessions diff --stat` prints it. */
  stat: string
}

export default class SessionsShow extends SessionsCommand<SessionsShowResult> {
  static override summary = 'Show one session: what its harness does, its prompt, the files it changed.'
  static override description =
    "The state is what `omh sessions ls` shows; the prompt, the arguments a harness started with `omh --detach` was given, kept on the host when it started; the changes are counted against where the session started, as `omh sessions diff --stat` counts them, omh's own mounted files left out. Without a session id, the most recent session."
  static override args = { session: Args.string({ description: 'Session id, e.g. s01 (default: the most recent).' }) }
  static override flags = { runtime: SessionsCommand.runtimeFlag }
  static override examples = ['omh sessions show', 'omh sessions show s02 --json']

  async run(): Promise<SessionsShowResult> {
    const { args, flags } = await this.parse(SessionsShow)
    const kernel = await this.kernel()
    const repo = await this.repository()
    const sid = await this.session(args.session)
    await this.bringHome(sid, flags.runtime)
    const resolved = await this.runtimeFor(sid, flags.runtime, true)
    const context = this.runtimeContext()
    const containers = resolved
      ? await resolved.runtime.list({ [LABEL.repo]: repo.id, [LABEL.session]: sid }, context).catch((error: Error) => {
          this.warn(`${resolved.runtime.engine} did not list containers: ${error.message}`)
          return []
        })
      : []
    const container = containers.find((c) => c.running)
    const asked = resolved ? (_: string, c: { id: string }) => backgroundHarnesses(resolved.runtime, c.id, context, { session: sid }).catch(() => undefined) : undefined
    const state = (await stateOf(kernel.omhState, repo, sid, container, asked)) ?? null
    const harness = state?.harness ?? (container ?? containers[0])?.labels[LABEL.harness] ?? null
    const launched = harness ? await readLaunch(sessionPaths(kernel.omhState, repo, sid).run, harness) : undefined
    const base = await resolveBase(repo, process.env)
    const diff = await sessionDiff(kernel.omhState, repo, sid, base.commit, process.env, 'stat')
    const result: SessionsShowResult = {
      session: sid,
      branch: branchOf(sid),
      harness,
      state,
      lastActive: state?.lastActive ?? null,
      prompt: launched?.prompt ? [...launched.prompt] : null,
      base: diff.base,
      files: [...diff.files],
      stat: diff.text,
    }
    if (!this.jsonEnabled()) this.print(result, base.name)
    return result
  }

  private print(r: SessionsShowResult, baseName: string): void {
    const s = this.style
    const label = (text: string) => s.dim(text)
    const stateText = r.state ? stateCell(r.state, s) : s.dim('no harness running')
    const counts = (f: { added: number | null; deleted: number | null }) => (f.added === null ? s.dim('binary') : `${s.green(`+${f.added}`)} ${s.red(`-${f.deleted}`)}`)
    const added = r.files.reduce((n, f) => n + (f.added ?? 0), 0)
    const deleted = r.files.reduce((n, f) => n + (f.deleted ?? 0), 0)
    const rows: string[][] = [
      [label('session'), s.bold(r.session)],
      [label('harness'), r.harness ?? s.dim('none')],
      [label('state'), stateText],
      [label('last active'), r.lastActive !== null ? ago(r.lastActive, Date.now() / 1000) : s.dim('unknown')],
      [label('branch'), `${r.branch} ${s.dim(`(since ${baseName})`)}`],
      ...(r.prompt ? [[label('prompt'), r.prompt.map(quote).join(' ')]] : []),
      [label('changed'), r.files.length ? `${r.files.length} ${r.files.length === 1 ? 'file' : 'files'}, ${counts({ added, deleted })}` : s.dim('nothing')],
    ]
    // Paths and the prompt are shown as text: table() escapes anything a terminal would act on.
    this.log(table(rows))
    if (r.files.length) this.log(table(r.files.map((f) => [f.path, counts(f)]), '  '))
  }
}
