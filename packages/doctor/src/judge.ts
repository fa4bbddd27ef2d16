/**
 * Judging what a harness said about itself. `omh doctor` runs each probe an
 * adapter declares inside the container and hands the captured output here;
 * everything in this module is pure: output and expected items in, checks out.
 *
 * A probe is data in the adapter, never a branch per harness: the adapter says
 * which command to run, what to write to its stdin, and what each staged item
 * must look like in the output. Nothing here knows any harness.
 */
import { stripVTControlCharacters } from 'node:util'
import type { CapabilityClass } from '@omh/plugin-api'
import { PLACEHOLDERS, parseSelector, type Evidence, type Expectation, type Probe, type Selector } from '@omh/kernel'
import { compilePattern, fillPattern, scalarAt, select } from './evidence.js'

/** What running a probe produced, as the container reports it. */
export interface ProbeRun {
  /** The exit status; `null` when the process was killed or never started. */
  readonly exit: number | null
  readonly stdout: string
  readonly stderr: string
  /** Set when the probe was killed for running past its timeout. */
  readonly timedOut?: boolean
  /** Set when the command could not be started at all. */
  readonly error?: string
}

/** An item omh staged and expects the harness to report; its other string fields fill placeholders (`origin`). */
export interface ExpectedItem {
  readonly name: string
}

/** One capability's part in a doctor run: its binding's path, its probes' evidence, its staged items. */
export interface CapabilityUnderTest {
  readonly capability: CapabilityClass
  /** The binding's guest path, `{{path}}` in patterns. */
  readonly path: string
  readonly expect: readonly Expectation[]
  /** Items staged for the harness: the capability's profile items minus what the renderer dropped. */
  readonly items: readonly ExpectedItem[]
}

/** A verdict, worded for the checklist. */
export interface ProbeCheck {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
  readonly probe: string
  readonly capability?: CapabilityClass
  /** The items this check speaks for. Items whose evidence is the same text share one check. */
  readonly items?: readonly string[]
  /** Evidence of a connection was missing: worth saying, not a failure (`ok` stays true). */
  readonly warning?: boolean
}

/** The probes a doctor run needs: every probe a capability with items names, and every probe with evidence of its own. */
export function probesNeeded(probes: Readonly<Record<string, Probe>>, capabilities: readonly CapabilityUnderTest[]): string[] {
  const needed = new Set<string>()
  for (const c of capabilities) if (c.items.length) for (const e of c.expect) needed.add(e.probe)
  for (const [key, probe] of Object.entries(probes)) if (probe.expect?.length) needed.add(key)
  return Object.keys(probes).filter((k) => needed.has(k))
}

/**
 * Judges every probe's output: first whether the probe itself worked (it ran,
 * exited as expected, printed something), then each piece of evidence. A probe
 * that printed nothing fails every check that reads it: silence is never a pass.
 */
export function judgeProbes(
  probes: Readonly<Record<string, Probe>>,
  capabilities: readonly CapabilityUnderTest[],
  runs: Readonly<Record<string, ProbeRun>>,
): ProbeCheck[] {
  const checks: ProbeCheck[] = []
  const broken = new Map<string, string>()
  for (const key of probesNeeded(probes, capabilities)) {
    const probe = probes[key]!
    const run = runs[key]
    const fault = run ? faultOf(probe, run) : 'was not run'
    if (fault) broken.set(key, fault)
    checks.push({ name: key, ok: !fault, detail: `\`${commandOf(probe)}\` ${fault ?? 'answered'}`, probe: key })
    if (fault) continue
    const output = new Output(run!)
    for (const evidence of probe.expect ?? []) {
      const verdict = judge(evidence, output, {})
      checks.push({ name: `${key}: ${describe(evidence, {})}`, ok: verdict.ok, detail: verdict.detail, probe: key })
    }
  }
  for (const c of capabilities) {
    if (!c.items.length) continue
    for (const expectation of c.expect) {
      const groups = new Map<string, { values: Record<string, string>; items: string[] }>()
      for (const item of c.items) {
        const values = valuesOf(c, item)
        const key = describe(expectation, values)
        const group = groups.get(key) ?? { values, items: [] }
        group.items.push(item.name)
        groups.set(key, group)
      }
      for (const { values, items } of groups.values()) {
        // Two pieces of evidence for one item (loaded, connected) are two checks, each named for what it shows.
        const base = { probe: expectation.probe, capability: c.capability, items, name: `${c.capability}${expectation.connected ? ' connection' : ''}: ${items.join(', ')}` }
        const fault = broken.get(expectation.probe)
        if (fault) {
          checks.push({ ...base, ok: false, detail: `cannot tell: probe ${expectation.probe} ${fault}` })
          continue
        }
        const output = new Output(runs[expectation.probe]!)
        const verdict = judge(expectation, output, values)
        if (!expectation.connected || verdict.ok) checks.push({ ...base, ...verdict })
        else checks.push({ ...base, ok: true, warning: true, detail: `does not connect${said(output, items, expectation)}` })
      }
    }
  }
  return checks
}

/**
 * What the harness said about these items: the first line of its output that
 * names one or, for JSON evidence, the first value found there that does.
 */
function said(output: Output, items: readonly string[], e: Evidence): string {
  const word = (name: string) => new RegExp(`(^|[^\\w.-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^\\w.-]|$)`)
  const names = (text: string) => items.some((name) => word(name).test(text))
  const clip = (text: string) => (text.length > 300 ? `${text.slice(0, 299)}…` : text)
  if (e.json === undefined) {
    const line = output.lines.map((l) => l.trim()).find(names)
    return line === undefined ? '' : `: it says ${JSON.stringify(clip(line))}`
  }
  const value = output.documents.flatMap((d) => select(d, parseSelector(e.json!) as Selector)).find((v) => names(JSON.stringify(v)))
  if (value === undefined) return ''
  // A value's own error fields say why, where the whole value would mostly say what it is.
  const errors = isRecord(value) ? Object.entries(value).filter(([k, v]) => /error/i.test(k) && typeof v === 'string' && v) : []
  return `: it says ${clip(errors.length ? errors.map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(', ') : JSON.stringify(value))}`
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function valuesOf(c: CapabilityUnderTest, item: ExpectedItem): Record<string, string> {
  const values: Record<string, string> = { path: c.path }
  for (const key of PLACEHOLDERS[c.capability]) {
    const value = (item as unknown as Record<string, unknown>)[key]
    if (typeof value === 'string') values[key] = value
  }
  return values
}

function faultOf(probe: Probe, run: ProbeRun): string | undefined {
  if (run.error) return `could not be started: ${run.error}`
  if (run.timedOut) return `did not finish within ${probe.timeout ?? DEFAULT_TIMEOUT} s${tail(run)}`
  if (!run.stdout.trim() && !run.stderr.trim()) return 'printed nothing, and a silent probe is never a pass'
  const accepted = probe.exit ?? [0]
  if (run.exit === null || !accepted.includes(run.exit)) {
    return `${run.exit === null ? 'was killed' : `exited ${run.exit}`} (expected ${accepted.join(' or ')})${tail(run)}`
  }
  return undefined
}

/** Seconds a probe may run when its adapter says nothing. */
export const DEFAULT_TIMEOUT = 60

/** The command as one short line for messages: a multi-line script is named by its last line. */
export function commandOf(probe: Probe): string {
  const line = probe.run.trim().split('\n').at(-1)!.trim()
  return line.length > 100 ? `${line.slice(0, 99)}…` : line
}

/** What a failed probe said: the first line of each stream, where errors usually start. */
function tail(run: ProbeRun): string {
  const first = (text: string) => plain(text).split('\n').map((l) => l.trim()).find(Boolean)
  const said = [first(run.stderr), first(run.stdout)].filter((l): l is string => l !== undefined)
  return said.length ? `: ${said.map((l) => (l.length > 200 ? `${l.slice(0, 199)}…` : l)).join(' | ')}` : ''
}

const plain = (text: string) => stripVTControlCharacters(text).replace(/\r/g, '')

/** A probe's output, read lazily: as lines of text, and as JSON documents. */
class Output {
  #lines?: string[]
  #documents?: unknown[]
  constructor(readonly run: ProbeRun) {}

  /** stdout then stderr, one entry a line, terminal colours removed. */
  get lines(): string[] {
    return (this.#lines ??= [this.run.stdout, this.run.stderr].flatMap((s) => plain(s).split('\n')))
  }

  /** stdout as one JSON document or, failing that, one document a line (JSON Lines); other lines are skipped. */
  get documents(): unknown[] {
    if (this.#documents) return this.#documents
    const whole = parse(this.run.stdout.trim())
    this.#documents = whole.ok ? [whole.value] : this.run.stdout.split('\n').map((l) => parse(l.trim())).flatMap((r) => (r.ok ? [r.value] : []))
    return this.#documents
  }
}

function parse(text: string): { ok: true; value: unknown } | { ok: false } {
  if (!text) return { ok: false }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/** The evidence in words, with its placeholders filled: what was looked for. */
function describe(e: Evidence, values: Readonly<Record<string, string>>): string {
  const filled = (p: string) => JSON.stringify(fillPattern(p, values))
  if (e.line !== undefined) return `${e.absent ? 'no line' : 'a line'} ${filled(e.line)}`
  const what = `${e.json}${
          e.match === undefined
            ? ''
            : typeof e.match === 'string'
              ? ` = ${filled(e.match)}`
              : ` with ${Object.entries(e.match).map(([k, v]) => `${k} = ${filled(v)}`).join(', ')}`
    }`
  return e.absent ? `no ${what}` : what
}

function judge(e: Evidence, output: Output, values: Readonly<Record<string, string>>): { ok: boolean; detail: string } {
  const wanted = describe(e, values)
  if (e.line !== undefined) {
    const pattern = compilePattern(e.line, values)
    const hit = output.lines.find((l) => pattern.test(l))
    if (e.absent) return hit === undefined ? { ok: true, detail: `shows ${wanted}` } : { ok: false, detail: `shows ${JSON.stringify(hit.trim())}` }
    return hit !== undefined ? { ok: true, detail: `shows ${JSON.stringify(hit.trim())}` } : { ok: false, detail: `shows no line ${JSON.stringify(fillPattern(e.line, values))}` }
  }
  const selector = parseSelector(e.json!) as Selector
  const found = output.documents.flatMap((d) => select(d, selector))
  const fields = matchers(e.match, values)
  const hit = found.find((value) => fields.every(([path, pattern]) => test(value, path, pattern)))
  if (e.absent) return hit === undefined ? { ok: true, detail: `shows ${wanted}` } : { ok: false, detail: `shows ${shown(hit, fields)} at ${e.json}` }
  if (hit !== undefined) return { ok: true, detail: `shows ${shown(hit, fields)} at ${e.json}` }
  return { ok: false, detail: `does not show ${wanted}${nearMiss(found, fields, e.json!)}` }
}

type FieldMatcher = readonly [path: string | undefined, pattern: RegExp]

function matchers(match: Evidence['match'], values: Readonly<Record<string, string>>): FieldMatcher[] {
  if (match === undefined) return []
  if (typeof match === 'string') return [[undefined, compilePattern(match, values)]]
  return Object.entries(match).map(([path, pattern]) => [path, compilePattern(pattern, values)] as const)
}

function test(value: unknown, path: string | undefined, pattern: RegExp): boolean {
  const scalar = path === undefined ? scalarAt({ v: value }, 'v') : scalarAt(value, path)
  return scalar !== undefined && pattern.test(scalar)
}

/**
 * When nothing matched but something came close (one field right, another
 * wrong), says what the harness showed instead: "listed, but from another
 * path" is the most useful thing doctor can say about a wrong adapter path.
 */
function nearMiss(found: readonly unknown[], fields: readonly FieldMatcher[], selector: string): string {
  if (!found.length) return ` (${selector} found nothing)`
  if (fields.length < 2) return ''
  for (const value of found) {
    const right = fields.filter(([path, pattern]) => test(value, path, pattern))
    if (!right.length) continue
    const wrong = fields.filter((f) => !right.includes(f))
    const seen = wrong.map(([path]) => `${path} = ${JSON.stringify(path === undefined ? value : scalarAt(value, path) ?? null)}`)
    return `; it shows ${right.map(([path]) => `${path} = ${JSON.stringify(scalarAt(value, path!))}`).join(', ')} with ${seen.join(', ')}`
  }
  return ''
}

/** What a matching value showed, in the terms of the match: its matched fields, or itself when short. */
function shown(value: unknown, fields: readonly FieldMatcher[]): string {
  const named = fields.filter(([path]) => path !== undefined)
  const clip = (text: string) => (text.length > 100 ? `${text.slice(0, 99)}…"` : text)
  return named.length
    ? named.map(([path]) => `${path} = ${clip(JSON.stringify(scalarAt(value, path!)))}`).join(', ')
    : clip(JSON.stringify(value))
}
