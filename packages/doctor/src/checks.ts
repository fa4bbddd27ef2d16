/**
 * `omh doctor`, the pure part: what to measure inside the container, and the
 * verdicts on what was measured. The container run itself belongs to the
 * caller; nothing here does I/O or knows a harness.
 */
import type { Adapter, RenderReport } from '@omh/kernel'
import { CAPABILITY_CLASSES, type CapabilityClass, type ProfileItems } from '@omh/plugin-api'
import { DEFAULT_TIMEOUT, judgeProbes, probesNeeded, type CapabilityUnderTest, type ExpectedItem } from './judge.js'
import type { RunnerPlan, RunnerReport } from './runner.js'

/** What one capability class came to in a doctor run. */
export type ClassVerdict =
  /** The harness itself showed every staged item. */
  | 'proved'
  /** A check about the class failed. */
  | 'failed'
  /** The adapter cannot express the class, or its renderer dropped every item. */
  | 'dropped'
  /** Items were staged and mounted, but the adapter names no evidence, so the harness was not asked. */
  | 'unproved'
  /** The profile has nothing of this class. */
  | 'empty'

export type CheckKind = 'staged' | 'entry' | 'syntax' | 'bin' | 'token' | 'probe' | 'harness' | 'turn'

export interface DoctorCheck {
  readonly kind: CheckKind
  readonly name: string
  readonly ok: boolean
  readonly detail: string
  readonly capability?: CapabilityClass
  /** Profile items the check speaks for. */
  readonly items?: readonly string[]
  /** The guest path the check is about. */
  readonly path?: string
  /**
   * Not a failure but worth saying (`ok` stays true): an MCP server the
   * harness loaded but could not connect, with the reason in `detail`.
   */
  readonly warning?: boolean
}

export interface DoctorInput {
  readonly adapter: Adapter
  readonly render: RenderReport
  readonly profile: ProfileItems
  /**
   * Syntax checkers by staged document syntax: the command a document is
   * handed to (its path appended), e.g. a JavaScript one to `node --check`.
   */
  readonly checkers?: Readonly<Record<string, readonly string[]>>
  /** The container has a network (`--network`): a remote MCP server can be reached. */
  readonly network?: boolean
}

/** The capabilities under test: each bound class with the items its renderer kept. */
export function capabilitiesUnderTest(input: Pick<DoctorInput, 'adapter' | 'render' | 'profile'>): CapabilityUnderTest[] {
  return input.adapter.bindings.map((binding) => {
    const dropped = new Set(input.render.dropped.filter((d) => d.capability === binding.capability).map((d) => d.name))
    const items: readonly ExpectedItem[] = input.profile[binding.capability].filter((item) => !dropped.has(item.name))
    return { capability: binding.capability, path: binding.path, expect: binding.expect ?? [], items }
  })
}

/** Guest paths of tree entries, each with the host source it must resolve to. */
export function treeEntries(render: Pick<RenderReport, 'files'>): { guest: string; source: string }[] {
  return render.files.flatMap((f) => (f.kind === 'tree' ? f.entries.map((e) => ({ guest: `${f.guest}/${e.name}`, source: e.source })) : []))
}

/** What the runner measures inside the container for this adapter and render. */
export function doctorPlan(input: DoctorInput): RunnerPlan {
  const files = input.render.files.filter((f) => f.kind === 'file')
  const probes = probesNeeded(input.adapter.probes, capabilitiesUnderTest(input))
  return {
    digest: [...files.map((f) => f.guest), ...treeEntries(input.render).map((e) => e.guest)],
    syntax: files.flatMap((f) => {
      const argv = f.syntax === undefined ? undefined : input.checkers?.[f.syntax]
      return argv ? [{ path: f.guest, argv }] : []
    }),
    // Every stdio MCP server's command too: a server that cannot connect because its command is not
    // in the image is told apart from one that started and failed.
    bins: [...new Set([input.adapter.bin, ...input.profile.mcp.flatMap((m) => (m.transport === 'stdio' ? [m.command] : []))])],
    renames: [...input.adapter.token],
    probes: Object.fromEntries(
      probes.map((key) => {
        const p = input.adapter.probes[key]!
        return [key, { run: p.run, timeout: p.timeout ?? DEFAULT_TIMEOUT, ...(p.send ? { send: p.send } : {}), ...(p.env ? { env: p.env } : {}) }]
      }),
    ),
  }
}

/** The class a guest path belongs to: the binding whose path (or `also`) it is, or lies under. */
function classOf(adapter: Adapter, guest: string): CapabilityClass | undefined {
  const owns = (p: string) => guest === p || guest.startsWith(`${p}/`)
  return adapter.bindings.find((b) => owns(b.path) || b.also.some(owns))?.capability
}

/**
 * Every verdict on what the runner reported. `expected` holds the digest of
 * each measured path as omh staged it: a file's bytes, a tree entry's source.
 */
export function doctorChecks(input: DoctorInput, expected: Readonly<Record<string, string>>, report: RunnerReport): DoctorCheck[] {
  const { adapter } = input
  const checks: DoctorCheck[] = []
  const plan = doctorPlan(input)
  const entries = new Set(treeEntries(input.render).map((e) => e.guest))

  for (const guest of plan.digest ?? []) {
    const kind = entries.has(guest) ? 'entry' : 'staged'
    const capability = classOf(adapter, guest)
    const at = { kind, path: guest, ...(capability ? { capability } : {}) } as const
    const seen = report.digest[guest]
    const want = expected[guest]
    if (!seen || 'error' in seen) {
      const why = seen ? seen.error : 'was not measured'
      checks.push({ ...at, name: guest, ok: false, detail: kind === 'entry' ? `does not resolve: ${why}` : `is not there: ${why}` })
    } else if (seen.sha256 !== want) {
      checks.push({ ...at, name: guest, ok: false, detail: `holds other content than omh staged (${seen.kind} ${seen.sha256.slice(0, 12)}, staged ${want?.slice(0, 12) ?? 'nothing'})` })
    } else {
      checks.push({ ...at, name: guest, ok: true, detail: kind === 'entry' ? 'resolves to what omh staged' : 'holds what omh staged' })
    }
  }

  for (const { path, argv } of plan.syntax ?? []) {
    const r = report.syntax[path]
    const command = argv.join(' ')
    const capability = classOf(adapter, path)
    checks.push({
      kind: 'syntax',
      name: path,
      path,
      ...(capability ? { capability } : {}),
      ok: r?.ok === true,
      detail: r?.ok ? `parses (${command})` : `does not parse (${command}): ${firstLines(r?.output ?? 'was not checked')}`,
    })
  }

  const bin = report.bins[adapter.bin]
  checks.push({
    kind: 'bin',
    name: adapter.bin,
    ok: Boolean(bin?.path),
    detail: bin?.path ? `is ${bin.path}` : `is not on PATH in the image: the adapter's install (${adapter.file}) did not put it there`,
  })

  for (const token of adapter.token) {
    const r = report.renames[token]
    checks.push({
      kind: 'token',
      name: token,
      path: token,
      ok: r?.ok === true,
      detail: `${
        r?.ok
          ? `can be renamed over, so a login saved there persists (${r.detail})`
          : `cannot be renamed over, so a login saved there would not persist: ${r?.detail ?? 'was not checked'}`
      }; ${loginKept(adapter, token)}`,
    })
  }

  for (const c of judgeProbes(adapter.probes, capabilitiesUnderTest(input), report.probes)) {
    checks.push({
      kind: c.capability ? 'harness' : 'probe',
      name: c.name,
      ok: c.ok,
      detail: c.warning ? whyNotConnected(input, report, c.items ?? [], c.detail) : c.detail,
      ...(c.capability ? { capability: c.capability } : {}),
      ...(c.items ? { items: c.items } : {}),
      ...(c.warning ? { warning: true } : {}),
    })
  }
  return checks
}

/** Whether a subscription login in `token` is kept outside a session behind the allowlist, and where its tokens may go. */
export function loginKept(adapter: Pick<Adapter, 'logins'>, token: string): string {
  const login = adapter.logins.find((l) => l.file === token)
  return login
    ? `a subscription login there is kept outside the session: its tokens go to ${login.hosts.join(', ')} only${login.refresh_url ? `, its refresh to ${new URL(login.refresh_url).host}` : ''}`
    : 'a login there stays inside the session, where the agent can read it (the adapter names no [[logins]] for it)'
}

/**
 * Why an MCP server the harness loaded did not connect, when doctor can tell:
 * a remote one without network, a stdio one whose command is not in the
 * image. Otherwise, what the harness said (an exit, an error).
 */
function whyNotConnected(input: DoctorInput, report: RunnerReport, items: readonly string[], said: string): string {
  const servers = input.profile.mcp.filter((m) => items.includes(m.name))
  const missing = servers.flatMap((m) => (m.transport === 'stdio' && !report.bins[m.command]?.path ? [m.command] : []))
  if (missing.length) return `does not connect: its command \`${missing[0]}\` is not found in the image`
  if (!input.network && servers.some((m) => m.transport !== 'stdio')) {
    return 'does not connect: doctor runs without network (`--network` runs it on the session\'s network)'
  }
  return said
}

/** What each capability class came to, for the matrix and the summary line. */
export function classVerdicts(input: DoctorInput, checks: readonly DoctorCheck[]): Record<CapabilityClass, ClassVerdict> {
  const under = capabilitiesUnderTest(input)
  const out = {} as Record<CapabilityClass, ClassVerdict>
  for (const capability of CAPABILITY_CLASSES) {
    const profiled = input.profile[capability].length
    const tested = under.find((c) => c.capability === capability)
    if (!profiled) out[capability] = 'empty'
    else if (!tested || !tested.items.length) out[capability] = 'dropped'
    else if (checks.some((c) => c.capability === capability && !c.ok)) out[capability] = 'failed'
    else if (!tested.expect.length) out[capability] = 'unproved'
    else out[capability] = 'proved'
  }
  return out
}

function firstLines(text: string): string {
  const lines = text.trim().split('\n').slice(0, 3).join(' | ')
  return lines.length > 300 ? `${lines.slice(0, 299)}…` : lines
}
