import { spawn } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN } from '../helpers/run.js'
import { adapterInput, catalogueInput, commandInput, hookInput, mcpInput, settingsInput } from './arbitraries.js'
import { layFiles } from './files.js'
import { FAMILIES, type Family, type FuzzInput, type Verdict } from './input.js'
import { FuzzProcess } from './pool.js'

// OMH_FUZZ_SEED replays a run; OMH_FUZZ_SCALE multiplies every count (0.1 for a quick look).
const SEED = Number(process.env['OMH_FUZZ_SEED'] ?? Date.now() % 2 ** 31)
const SCALE = Number(process.env['OMH_FUZZ_SCALE'] ?? 1)
/** Per input: far above the slowest one seen (about 200 ms on a busy 2-core machine). */
const TIMEOUT = 10_000

const ARBITRARIES: Record<Family, [fc.Arbitrary<FuzzInput>, number]> = {
  adapter: [adapterInput, 2500],
  settings: [settingsInput, 1500],
  mcp: [mcpInput, 2000],
  hooks: [hookInput, 1800],
  catalogue: [catalogueInput, 2000],
  command: [commandInput, 400],
}
/** Whole command lines through bin/run.js: the error path as a user meets it. */
const CLI_RUNS = Math.round(60 * SCALE)

type Kind = Verdict['kind']
const KINDS: Kind[] = ['refused', 'accepted', 'internal', 'unclean', 'hang']
const tally = new Map<string, Record<Kind, number>>()
/** The longest any one input took, by family. */
const slowest = new Map<string, number>()
const defects: { family: string; verdict: Verdict; input: FuzzInput }[] = []

function count(family: string, verdict: Verdict, input: FuzzInput): void {
  const row = tally.get(family) ?? { refused: 0, accepted: 0, internal: 0, unclean: 0, hang: 0 }
  row[verdict.kind]++
  tally.set(family, row)
  slowest.set(family, Math.max(slowest.get(family) ?? 0, verdict.ms ?? 0))
  if (verdict.kind !== 'refused' && verdict.kind !== 'accepted') defects.push({ family, verdict, input })
}

/** The defects of one family, each with the input that showed it, for the failure message. */
function described(family: string): string[] {
  return defects
    .filter((d) => d.family === family)
    .slice(0, 5)
    .map((d) => `${d.verdict.kind} ${d.verdict.code ?? ''}: ${d.verdict.detail?.slice(0, 600)}\n  input: ${show(d.input)}`)
}

const show = (input: FuzzInput) =>
  JSON.stringify(input, (_k, v) => (v instanceof Uint8Array || (v && v.type === 'Buffer') ? `bytes:${Buffer.from(v.data ?? v).toString('hex')}` : v)).slice(0, 1500)

/** Two lanes, each its own fuzz process: the machines this runs on have two cores. */
let lanes: FuzzProcess[] = []

/** Runs `check` on every item, two at a time. */
async function inLanes<T>(items: readonly T[], check: (item: T, lane: number) => Promise<void>): Promise<void> {
  const queue = [...items]
  await Promise.all([0, 1].map(async (lane) => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await check(next, lane)
  }))
}

beforeAll(async () => {
  lanes = await Promise.all([FuzzProcess.start(), FuzzProcess.start()])
})

afterAll(() => {
  for (const lane of lanes) lane.stop()
  const rows = [...tally.entries()]
  const total = (kind: Kind) => rows.reduce((n, [, r]) => n + r[kind], 0)
  const inputs = KINDS.reduce((n, k) => n + total(k), 0)
  const line = (name: string, r: Record<Kind, number>) =>
    `  ${name.padEnd(10)} ${String(KINDS.reduce((n, k) => n + r[k], 0)).padStart(6)} inputs  ${KINDS.map((k) => `${r[k]} ${k}`).join(', ')}; slowest ${Math.round(slowest.get(name) ?? 0)} ms`
  process.stdout.write(
    [
      '',
      `fuzz (seed ${SEED}): ${inputs} inputs, ${total('refused')} refused, ${total('accepted')} accepted, ${total('internal')} INTERNAL, ${total('unclean')} unclean, ${total('hang')} hangs`,
      ...rows.map(([name, r]) => line(name, r)),
      '',
    ].join('\n'),
  )
})

describe('hostile input ends as a clean refusal or a correct acceptance', () => {
  FAMILIES.forEach((family, n) => {
    const [arbitrary, runs] = ARBITRARIES[family]
    it(`${family} files`, async () => {
      const inputs = fc.sample(arbitrary, { numRuns: Math.max(1, Math.round(runs * SCALE)), seed: SEED + n })
      await inLanes(inputs, async (input, lane) => count(family, await lanes[lane]!.check(input, TIMEOUT), input))
      expect(described(family)).toEqual([])
    })
  })

  it('whole command lines, through the CLI', async () => {
    const lines: [string[], FuzzInput][] = fc
      .sample(fc.tuple(fc.oneof(adapterInput, settingsInput, mcpInput, hookInput, catalogueInput), fc.constantFrom<string[]>(['render', 'claude'], ['adapters', 'ls'], ['config', 'mcp', 'ls']), fc.boolean()), {
        numRuns: CLI_RUNS,
        seed: SEED - 1,
      })
      .map(([input, args, json]) => [json ? [...args, '--json'] : args, input])
    await inLanes(lines, async (line) => {
      const started = performance.now()
      count('cli', { ...(await cliRun(...line)), ms: performance.now() - started }, line[1])
    })
    expect(described('cli')).toEqual([])
  })
})

/** One run of bin/run.js on an input's files, judged by its exit code, stdout and stderr. */
async function cliRun(args: string[], input: FuzzInput): Promise<Verdict> {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-fuzz-cli-')))
  try {
    layFiles(root, [...input.files, { path: 'repo/.git/HEAD', content: 'ref: refs/heads/main\n' }])
    const ran = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        cwd: path.join(root, 'repo'),
        env: { ...process.env, OMH_HOME: path.join(root, 'home'), HOME: root, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 30_000,
        killSignal: 'SIGKILL',
      })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => (stdout += d))
      child.stderr.on('data', (d) => (stderr += d))
      child.on('close', (status) => resolve({ status, stdout, stderr }))
    })
    if (ran.status === null) return { kind: 'hang', detail: `${args.join(' ')} did not end in 30 s` }
    // eslint-disable-next-line no-control-regex
    const acts = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e]/
    const code = args.includes('--json') ? (JSON.parse(ran.stdout || '{}').error?.code as string | undefined) : /^Code: (\w+)$/m.exec(ran.stderr)?.[1]
    if (code === 'INTERNAL') return { kind: 'internal', code, detail: ran.stderr || ran.stdout }
    if (/\n\s+at \S.*:\d+:\d+/.test(ran.stderr)) return { kind: 'unclean', detail: `a stack trace: ${ran.stderr}` }
    if (acts.test(ran.stderr) || (!args.includes('--json') && acts.test(ran.stdout))) return { kind: 'unclean', detail: `a control character: ${JSON.stringify(ran.stderr)}` }
    if (ran.status === 0) return { kind: 'accepted' }
    return ran.status === 2 ? { kind: 'refused', ...(code ? { code } : {}) } : { kind: 'unclean', detail: `exit ${ran.status}: ${ran.stderr}` }
  } catch (error) {
    return { kind: 'unclean', detail: `stdout is not one JSON document: ${(error as Error).message}` }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
