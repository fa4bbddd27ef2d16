import type { LaunchPreview } from '@omh/sandbox'
import type { Style } from './style.js'
import { table } from './table.js'

/** The plan as `--dry-run --json` prints it: environment values stay out, because they may be secrets. */
export type PlanJson = ReturnType<typeof planJson>

export function planJson(p: LaunchPreview) {
  return {
    harness: p.harness,
    session: p.session,
    branch: p.branch,
    create: p.create,
    base: p.base ?? null,
    worktree: p.worktree,
    container: { ...p.spec, env: Object.keys(p.spec.env).sort() },
    exec: p.exec,
    dropped: p.render.dropped,
  }
}

/** The plan for people: what would be created, and the container that would run. */
export function describePlan(p: LaunchPreview, s: Style): string {
  const spec = p.spec
  const hardening = [
    spec.capDrop?.length ? `capabilities dropped (${spec.capDrop.join(', ')})` : '',
    spec.noNewPrivileges ? 'no new privileges' : '',
    spec.init ? 'init' : '',
  ].filter(Boolean)
  const rows: string[][] = [
    [s.bold('session'), `${p.session} on ${p.branch}${p.base ? ` (new, from ${p.base.name} at ${p.base.commit.slice(0, 8)})` : ''}`],
    [s.bold('worktree'), p.worktree],
    [s.bold('container'), `${spec.name ?? ''} from ${spec.image}`],
    [s.bold('user'), [spec.user, ...hardening].join(', ')],
    [s.bold('env'), Object.keys(spec.env).sort().join(', ')],
    [s.bold('runs'), [...spec.argv].join(' ')],
    [s.bold('harness'), p.exec.map(quote).join(' ')],
  ]
  const mounts = spec.mounts.map((m) => ['  ' + (m.readOnly ? s.dim('ro') : s.yellow('rw')), m.guest, s.dim(m.host)])
  return `${table(rows)}\n${s.bold('mounts')}\n${table(mounts)}\n`
}

const quote = (arg: string) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)
