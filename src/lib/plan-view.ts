import type { EnvironmentView, LaunchPreview } from '@omh/sandbox'
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
    environment: (p.environment ?? null) as EnvironmentView | null,
    carryIn: p.carryIn,
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
  if (p.carryIn.length) rows.push([s.bold('carry in'), p.carryIn.join(', ')])
  const env = p.environment
  if (env) {
    rows.push([s.bold('environment'), env.describe])
    if (env.setup.length) rows.push([s.bold('setup'), `${env.setup.length} step${env.setup.length === 1 ? '' : 's'}${env.setupDone ? ' (done)' : ', once, before the harness'}`])
    for (const step of env.setup) rows.push(['', `${s.dim(step.from)} ${commandText(step.command)}`])
    if (env.ports.length) rows.push([s.bold('ports'), `${env.ports.join(', ')} on 127.0.0.1`])
    if (env.test) rows.push([s.bold('tests'), env.test])
  }
  const mounts = [
    ...spec.mounts.map((m) => ['  ' + (m.readOnly ? s.dim('ro') : s.yellow('rw')), m.guest, s.dim(m.host)]),
    ...(spec.volumes ?? []).map((v) => ['  ' + (v.readOnly ? s.dim('ro') : s.yellow('rw')), v.guest, s.dim(`volume ${v.volume}`)]),
  ]
  return `${table(rows)}\n${s.bold('mounts')}\n${table(mounts)}\n`
}

export const quote = (arg: string) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)

/** A setup command as one line: a shell line as it is, an argv joined, named ones by name. */
function commandText(command: string | readonly string[] | Readonly<Record<string, string | readonly string[]>>): string {
  if (typeof command === 'string') return command
  if (Array.isArray(command)) return command.map(quote).join(' ')
  return Object.entries(command as Record<string, string | readonly string[]>)
    .map(([name, c]) => `${name}: ${typeof c === 'string' ? c : c.map(quote).join(' ')}`)
    .join('; ')
}
