// The fuzz process: receives inputs from the suite, lays each out as files,
// runs the kernel and the command code on them in this one process, and
// answers how each ended. The suite kills and restarts it when an input hangs.
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { Config } from '@oclif/core/config'
import { Kernel, openMcpDocument, planPut, projectRulesOf, readMcpFile, resolveProfile } from '@omh/kernel'
import { stage } from '@omh/sandbox'
import type { Adapter, RenderReport } from '@omh/kernel'
import { CAPABILITY_CLASSES, GUEST_HOME, GUEST_WORK, isOmhError, type ProfileItems } from '@omh/plugin-api'
import { readJson } from '@omh/plugin-kit'
import { guestPathProblem } from '../../packages/kernel/src/adapter/guest-path.js'
// What the kernel keeps to itself, read from its source: the suite bundles it from there anyway.
import type { KernelOptions } from '../../packages/kernel/src/kernel.js'
import { applyPlan } from '../../packages/kernel/src/profile/mcp-edit.js'
import { SERVER_NAME, serversOf } from '../../packages/kernel/src/profile/mcp-file.js'
import type { Decided } from '../../packages/kernel/src/settings/load.js'
import { COMMANDS } from '../../src/commands.js'
import { formatError, serializeError } from '../../src/lib/failure.js'
import { printableJson } from '../../src/lib/printable.js'
import { createStyle } from '../../src/lib/style.js'
import { layFiles } from './files.js'
import type { Family, FromDriver, FuzzInput, ToDriver, Verdict } from './input.js'

const ROOT = process.env['OMH_FUZZ_ROOT']!
const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-fuzz-')))
const home = path.join(scratch, 'home')
const repo = path.join(scratch, 'repo')
const HARNESSES = ['claude', 'codex', 'opencode']

// What a terminal would act on, besides tab and newline: nothing of it may reach a report.
// eslint-disable-next-line no-control-regex
const ACTS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/
const STACK = /\n\s+at \S.*:\d+:\d+/

const kernelOptions = (cwd: string): KernelOptions => ({
  cwd,
  env: { OMH_HOME: home, HOME: scratch },
  defaultsFile: path.join(ROOT, 'defaults/settings.toml'),
  bundledAdapters: path.join(ROOT, 'adapters'),
  bundledEditors: path.join(ROOT, 'editors'),
  fallbackDirs: [ROOT],
})

/** A small catalogue of every class, for inputs that vary something else. */
const SAMPLE: Record<string, string> = {
  'rules/style.md': '# Style\nShort lines.\n',
  'skills/deploy/SKILL.md': '---\nname: deploy\ndescription: Deploys.\n---\nRun it.\n',
  'commands/review.md': '---\ndescription: Review\n---\nReview $ARGUMENTS\n',
  'subagents/reviewer.md': '---\nname: reviewer\ndescription: Reviews.\ntools: read, search\n---\nYou review.\n',
  'mcp.json': JSON.stringify({ mcpServers: { docs: { command: 'npx', args: ['-y', 'srv'] }, web: { url: 'https://w/mcp' } } }),
  'hooks/fmt.json': JSON.stringify({ on: 'after-tool', tools: ['edit'], run: 'fmt "$OMH_TOOL_FILE"' }),
}

/** Empties $OMH_HOME and the repository; the repository itself stays, since commands run in it. */
function reset(): void {
  for (const dir of [home, repo]) {
    mkdirSync(dir, { recursive: true })
    for (const name of readdirSync(dir)) rmSync(path.join(dir, name), { recursive: true, force: true })
  }
  mkdirSync(path.join(repo, '.git'))
}

let base: Kernel
let config: Config

/** The OmhError as a refusal, or why it is not a clean one. */
function refusal(error: unknown): Verdict {
  if (!isOmhError(error)) {
    return { kind: 'internal', detail: error instanceof Error ? (error.stack ?? error.message) : String(error) }
  }
  if (error.code === 'INTERNAL') return { kind: 'internal', code: error.code, detail: error.message }
  const said = (why: string): Verdict => ({ kind: 'unclean', code: error.code, detail: `${why}: ${error.message}` })
  if (error.exit !== 2) return said(`exit ${error.exit}`)
  const human = formatError(error, createStyle(false), false)
  if (STACK.test(human)) return said('a stack trace')
  if (ACTS.test(human)) return said('a control character in the report')
  const carried = { status: error.exit, error: serializeError(error, false) }
  if (!isDeepStrictEqual(JSON.parse(printableJson(carried)), JSON.parse(JSON.stringify(carried)))) return said('--json changed what it carries')
  const named = [error.message, ...error.problems.map((p) => p.file ?? '')].some((t) => t.includes(scratch))
  if (!named) return said('names no file')
  const bare = error.problems.find((p) => !p.message || (!p.file && !p.path))
  if (bare) return said(`a problem says neither file nor key (${bare.message})`)
  return { kind: 'refused', code: error.code }
}

/** What must hold of a render a user's files produced; undefined when it does. */
function wrongRender(report: RenderReport): string | undefined {
  for (const f of report.files) {
    const inside = [GUEST_HOME, GUEST_WORK].some((root) => f.guest.startsWith(`${root}/`))
    if (!inside || path.posix.normalize(f.guest) !== f.guest) return `staged ${JSON.stringify(f.guest)}`
  }
  return undefined
}

/** What must hold of an adapter a user's file produced; undefined when it does. */
function wrongAdapter(adapter: Adapter): string | undefined {
  const paths = [...adapter.creds, ...adapter.token, ...adapter.bindings.flatMap((b) => [b.path, ...b.also])]
  const bad = paths.find((p) => guestPathProblem(p, { directory: true }))
  return bad === undefined ? undefined : `accepted the guest path ${JSON.stringify(bad)}`
}

/** What must hold of a profile read from a user's files; undefined when it does. */
function wrongProfile(profile: ProfileItems): string | undefined {
  for (const capability of CAPABILITY_CLASSES) {
    for (const item of profile[capability] as readonly { name: string }[]) {
      if (ACTS.test(item.name) || item.name.includes('\u2028') || item.name.includes('-->')) return `accepted the ${capability} name ${JSON.stringify(item.name)}`
    }
  }
  for (const server of profile.mcp) if (!SERVER_NAME.test(server.name)) return `accepted the server name ${JSON.stringify(server.name)}`
  return undefined
}

async function renderEach(kernel: Kernel, profileOf: (adapter: Adapter) => Promise<ProfileItems>, harnesses: readonly string[]): Promise<string | undefined> {
  for (const harness of harnesses) {
    const adapter = await kernel.adapter(harness)
    const profile = await profileOf(adapter)
    const report = await kernel.render(adapter, profile)
    const wrong = wrongProfile(profile) ?? wrongRender(report)
    if (wrong) return `${harness}: ${wrong}`
    await stage(report, path.join(scratch, 'stage'), { dryRun: true })
  }
  return undefined
}

/** The catalogue in $OMH_HOME selected by `use`, or by the kernel's settings. */
const catalogueProfile = (use: FuzzInput['use'], kernel: Kernel) => {
  const decided: Record<string, Decided<readonly string[]>> = use
    ? Object.fromEntries(Object.entries(use).map(([k, value]) => [k, { value, layer: 'personal', file: path.join(home, 'settings.toml') }]))
    : { ...kernel.settings.use }
  return (adapter: Adapter) => resolveProfile({ omhHome: home, projectDir: repo, projectRules: projectRulesOf(adapter), use: decided })
}

/** The servers `mcp.json` holds once `put` is planned in: what was there, and the new one as given. */
async function wrongEdit(): Promise<string | undefined> {
  const file = path.join(home, 'mcp.json')
  const doc = await openMcpDocument(file)
  const put = { name: 'fuzz-added', transport: 'stdio' as const, command: 'srv', args: ['-x'], env: {} }
  const text = applyPlan(doc, planPut(doc, [put]))
  const read = readJson(text, file)
  if (!read.ok) return 'applied a plan into text that is not JSON'
  const after = serversOf(read.doc).servers.find((s) => s.name === put.name)
  const { source: _source, ...kept } = after ?? { source: '' }
  if (JSON.stringify(kept) !== JSON.stringify(put)) return `put ${JSON.stringify(put)}, read back ${JSON.stringify(kept)}`
  return undefined
}

/** Each family's run: undefined when what it accepted holds, or what is wrong with it. */
const TARGETS: Record<Exclude<Family, 'command'>, (input: FuzzInput) => Promise<string | undefined>> = {
  async adapter() {
    for (const source of (await base.adapterSources()).filter((s) => s.origin === 'personal')) {
      const adapter = await base.adapter(source.name)
      const wrong = wrongAdapter(adapter)
      if (wrong) return wrong
      const profile = await catalogueProfile({}, base)(adapter)
      const report = await base.render(adapter, profile)
      if (wrongRender(report)) return wrongRender(report)
      await stage(report, path.join(scratch, 'stage'), { dryRun: true })
    }
    return undefined
  },
  async settings(input) {
    const kernel = await Kernel.create(kernelOptions(repo))
    return renderEach(kernel, catalogueProfile(input.use, kernel), ['claude'])
  },
  async mcp(input) {
    const read = await readMcpFile(path.join(home, 'mcp.json'))
    const wrong = await renderEach(base, catalogueProfile(input.use, base), HARNESSES)
    // A file the catalogue reads is one a plan may change: every server stays as read.
    return wrong ?? (read.problems.length ? undefined : wrongEdit())
  },
  hooks: (input) => renderEach(base, catalogueProfile(input.use, base), HARNESSES),
  catalogue: (input) => renderEach(base, catalogueProfile(input.use, base), HARNESSES),
}

/** One command line, run as the CLI runs it, judged by its stdout, stderr and exit code. */
async function runCommand(input: FuzzInput): Promise<Verdict> {
  const [id, argv] = commandOf(input.argv ?? [])
  const out: string[] = []
  const err: string[] = []
  const writes = { out: process.stdout.write, err: process.stderr.write }
  process.stdout.write = ((chunk: string) => out.push(String(chunk)) > 0) as typeof process.stdout.write
  process.stderr.write = ((chunk: string) => err.push(String(chunk)) > 0) as typeof process.stderr.write
  process.exitCode = undefined
  try {
    await (COMMANDS[id] as typeof COMMANDS['render']).run(argv, config)
  } catch (error) {
    // oclif's parse errors before run() are the only throws a command lets out.
    if (!(error as { oclif?: unknown }).oclif) throw error
  } finally {
    process.stdout.write = writes.out
    process.stderr.write = writes.err
  }
  const status = Number(process.exitCode ?? 0)
  process.exitCode = undefined
  const stdout = out.join('')
  const stderr = err.join('')
  const unclean = (detail: string): Verdict => ({ kind: 'unclean', detail })
  if (STACK.test(stderr) || STACK.test(stdout)) return unclean(`a stack trace: ${stderr}`)
  if (!argv.includes('--json')) {
    const code = /^Code: (\w+)$/m.exec(stderr)?.[1]
    if (ACTS.test(stdout) || ACTS.test(stderr)) return unclean(`a control character on a terminal: ${JSON.stringify(stderr || stdout).slice(0, 300)}`)
    if (code === 'INTERNAL') return { kind: 'internal', code, detail: stderr }
    if (status === 0) return { kind: 'accepted' }
    return status === 2 && code ? { kind: 'refused', code } : unclean(`exit ${status}: ${stderr}`)
  }
  let doc: { status: number; error?: { code: string; message: string } }
  try {
    doc = JSON.parse(stdout)
  } catch {
    return unclean(`stdout is not one JSON document: ${stdout.slice(0, 200)}`)
  }
  if (doc.status !== status) return unclean(`--json says ${doc.status}, the exit code is ${status}`)
  if (status === 0) return { kind: 'accepted' }
  if (doc.error?.code === 'INTERNAL') return { kind: 'internal', code: 'INTERNAL', detail: doc.error.message }
  return status === 2 ? { kind: 'refused', code: doc.error!.code } : unclean(`exit ${status} ${doc.error?.code}: ${doc.error?.message}`)
}

function commandOf(argv: readonly string[]): [keyof typeof COMMANDS, string[]] {
  const ids = Object.keys(COMMANDS) as (keyof typeof COMMANDS)[]
  for (let n = Math.min(argv.length, 3); n > 0; n--) {
    const id = argv.slice(0, n).join(':') as keyof typeof COMMANDS
    if (ids.includes(id)) return [id, argv.slice(n)]
  }
  return ['render', [...argv]]
}

async function judge(input: FuzzInput): Promise<Verdict> {
  reset()
  if (input.family === 'settings' || input.family === 'adapter') layFiles(scratch, Object.entries(SAMPLE).map(([p, content]) => ({ path: `home/${p}`, content })))
  layFiles(scratch, input.files)
  try {
    if (input.family === 'command') return await runCommand(input)
    const wrong = await TARGETS[input.family](input)
    return wrong ? { kind: 'unclean', detail: wrong } : { kind: 'accepted' }
  } catch (error) {
    return refusal(error)
  }
}

async function start(): Promise<void> {
  reset()
  base = await Kernel.create(kernelOptions(repo))
  config = await Config.load(ROOT)
  process.chdir(repo)
  process.env['OMH_HOME'] = home
  process.env['HOME'] = scratch
  process.env['NO_COLOR'] = '1'
  process.on('message', async (message: ToDriver) => {
    const verdict = await judge(message.input)
    process.send!({ id: message.id, verdict } satisfies FromDriver)
  })
  process.on('disconnect', () => {
    rmSync(scratch, { recursive: true, force: true })
    process.exit(0)
  })
  process.send!({ ready: true } satisfies FromDriver)
}

await start()
