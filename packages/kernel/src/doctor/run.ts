/**
 * `omh doctor`, run for real: render and stage the profile as a launch would,
 * start the harness image once with the real mounts in a scratch place (no
 * session, no branch, no network), measure inside, and judge on the host.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { lstat, mkdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { accountDir, chooseAccount, credentialHostPath, type AccountChoice } from '../accounts.js'
import type { Adapter } from '../adapter/load.js'
import { DOCTOR_RUNNER_FAILED, OmhError } from '../errors.js'
import { GUEST_OMH, ensureImage, imageOptions, planImages, type ImageOptions } from '../image.js'
import type { Kernel, RenderReport } from '../kernel.js'
import { GUEST_GID, GUEST_HOME, GUEST_UID, GUEST_WORK, type CapabilityClass } from '../model.js'
import type { ContainerSpec, DroppedItem, Mount, RuntimeContext } from '../plugin.js'
import { projectRulesOf, resolveProfile } from '../profile/resolve.js'
import { stage } from '../stage.js'
import { exists, handToGuest } from '../host-files.js'
import { classVerdicts, doctorChecks, doctorPlan, treeEntries, type ClassVerdict, type DoctorCheck, type DoctorInput } from './checks.js'
import { digestBytes, digestOf, type ProbeOutput, type RunnerReport } from './runner.js'

/** Where the doctor's own files (the runner and its plan) appear in the container. */
export const GUEST_DOCTOR = `${GUEST_OMH}/doctor`

export interface DoctorRequest {
  readonly harness: string
  /** `-a`: the account whose login to mount. */
  readonly account?: string
  /** `auto` or an engine name; absent: the `runtime` setting. */
  readonly engine?: string
  /** Syntax checkers by staged document syntax (see `DoctorInput.checkers`). */
  readonly checkers?: Readonly<Record<string, readonly string[]>>
}

export interface DoctorHost {
  readonly context: RuntimeContext
  /** A progress line for the user (stderr). */
  notice(line: string): void
  /** Image options instead of the settings' (tests start from an offline base). */
  readonly images?: ImageOptions
}

export interface DoctorReport {
  readonly harness: string
  readonly adapter: string
  readonly engine: string
  readonly image: string
  /** The account whose login was mounted; `null` when none is captured (an empty credential store was mounted). */
  readonly account: string | null
  readonly accountBy: AccountChoice['by']
  readonly ok: boolean
  readonly passed: number
  readonly failed: number
  readonly checks: readonly DoctorCheck[]
  /** What each capability class came to. */
  readonly classes: Readonly<Record<CapabilityClass, ClassVerdict>>
  /** Items the harness will not see, by design of its adapter or its renderers. */
  readonly dropped: readonly DroppedItem[]
  /** What each probe printed, as measured. */
  readonly probes: Readonly<Record<string, ProbeOutput>>
}

/** The runner's compiled file, as the installed kernel package has it. */
export function runnerFile(): string {
  return createRequire(import.meta.url).resolve('@omh/kernel/runner')
}

/** Runs doctor for one harness and reports every check; throws only when the container itself could not run. */
export async function doctor(kernel: Kernel, request: DoctorRequest, host: DoctorHost): Promise<DoctorReport> {
  const adapter = await kernel.adapter(request.harness)
  const choice = await chooseAccount(kernel.omhHome, adapter, { flag: request.account, setting: kernel.settings.account?.value })
  const { runtime, info } = await kernel.resolveRuntime(request.engine ?? kernel.settings.runtime?.value ?? 'auto', host.context)
  const images = planImages(adapter, host.images ?? imageOptions(kernel.settings))
  const image = (await ensureImage(runtime, images, host.context, adapter.file)).tag

  const scratch = path.join(kernel.omhHome, 'scratch', `doctor-${adapter.name}-${randomBytes(4).toString('hex')}`)
  try {
    const work = path.join(scratch, 'work')
    await workspace(kernel.repoRoot, work)
    const profile = await resolveProfile({
      omhHome: kernel.omhHome,
      projectDir: work,
      projectRules: projectRulesOf(adapter),
      use: kernel.settings.use,
    })
    const render = await kernel.render(adapter, profile)
    const staged = await stage(render, path.join(scratch, 'stage'))

    const creds = choice.account
      ? credentials(adapter, accountDir(kernel.omhHome, adapter.name, choice.account), false)
      : credentials(adapter, path.join(scratch, 'creds'), true)
    const writable: Mount[] = [{ host: work, guest: GUEST_WORK, readOnly: false }, ...creds.map((c) => ({ host: c.host, guest: c.guest, readOnly: false }))]
    await prepareCredentials(creds)
    const placeholders = await prepareMountpoints(writable, creds, staged.mounts)

    const input: DoctorInput = { adapter, render, profile, ...(request.checkers ? { checkers: request.checkers } : {}) }
    const doctorDir = path.join(scratch, 'doctor')
    await mkdir(doctorDir, { recursive: true })
    await writeFile(path.join(doctorDir, 'plan.json'), JSON.stringify(doctorPlan(input)))
    await writeFile(path.join(doctorDir, 'runner.mjs'), await readFile(runnerFile()))
    for (const dir of [work, ...creds.filter((c) => c.scratch).map((c) => c.host)]) await handToGuest(dir)

    const spec: ContainerSpec = {
      image,
      name: path.basename(scratch),
      mounts: sortMounts([...writable, ...staged.mounts, { host: doctorDir, guest: GUEST_DOCTOR, readOnly: true }]),
      env: { HOME: GUEST_HOME, ...render.env },
      labels: { 'omh.doctor': adapter.name },
      workdir: GUEST_WORK,
      user: `${GUEST_UID}:${GUEST_GID}`,
      argv: ['node', `${GUEST_DOCTOR}/runner.mjs`, `${GUEST_DOCTOR}/plan.json`],
      // No network: nothing a probe starts can reach a model, whatever the harness does.
      network: 'none',
      capDrop: ['ALL'],
      noNewPrivileges: true,
      init: true,
    }
    host.notice(`checking ${adapter.name} in ${image} on ${info.engine}${choice.account ? ` with the login of account "${choice.account}"` : ', with an empty credential store (no account captured)'}…`)
    const result = await runtime.run(spec, host.context).finally(() => removePlaceholders(placeholders))
    const report = parseReport(result, adapter.name)

    const checks = doctorChecks(input, expectedDigests(render), report)
    const failed = checks.filter((c) => !c.ok).length
    return {
      harness: adapter.name,
      adapter: adapter.file,
      engine: info.engine,
      image,
      account: choice.account ?? null,
      accountBy: choice.by,
      ok: failed === 0,
      passed: checks.length - failed,
      failed,
      checks,
      classes: classVerdicts(input, checks),
      dropped: render.dropped,
      probes: report.probes,
    }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

function parseReport(result: { exitCode: number; stdout: string; stderr: string }, harness: string): RunnerReport {
  try {
    if (result.exitCode === 0) return JSON.parse(result.stdout) as RunnerReport
  } catch {
    // Reported below with what the container printed.
  }
  const said = (result.stderr || result.stdout).trim().split('\n').slice(0, 3).join(' | ')
  throw OmhError.of(DOCTOR_RUNNER_FAILED, { args: [harness, result.exitCode, said], details: { stdout: result.stdout, stderr: result.stderr } })
}

/** What each measured path must digest to: a staged file's bytes, a tree entry's host source. */
function expectedDigests(render: RenderReport): Record<string, string> {
  const out: Record<string, string> = {}
  for (const f of render.files) if (f.kind === 'file') out[f.guest] = digestBytes(f.content)
  for (const e of treeEntries(render)) {
    const d = digestOf(e.source)
    if ('sha256' in d) out[e.guest] = d.sha256
  }
  return out
}

/**
 * `/work` for the doctor: the repository's committed tree (what a new session
 * starts from), in a fresh git repository of its own so the harness sees a
 * project root; outside a repository, an empty one. The user's checkout is
 * only read.
 */
async function workspace(repoRoot: string | undefined, work: string): Promise<void> {
  await mkdir(work, { recursive: true })
  if (repoRoot && (await run('git', ['-C', repoRoot, 'rev-parse', '--verify', '-q', 'HEAD'])).code === 0) {
    const archive = spawn('git', ['-C', repoRoot, 'archive', '--format=tar', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] })
    const tar = spawn('tar', ['-x', '-C', work], { stdio: ['pipe', 'ignore', 'pipe'] })
    archive.stdout.pipe(tar.stdin)
    const [a, t] = await Promise.all([exitOf(archive), exitOf(tar)])
    if (a !== 0 || t !== 0) throw new Error(`could not copy ${repoRoot} at HEAD into ${work} (git archive ${a}, tar ${t})`)
  }
  await run('git', ['-C', work, 'init', '-q'])
}

const exitOf = (child: ReturnType<typeof spawn>) => new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)))

async function run(cmd: string, args: readonly string[]): Promise<{ code: number }> {
  const child = spawn(cmd, args, { stdio: 'ignore' })
  return { code: await exitOf(child) }
}

interface Credential {
  readonly host: string
  readonly guest: string
  readonly kind: 'file' | 'directory'
  /** Made for this run (an empty store), as opposed to an account's. */
  readonly scratch: boolean
}

/** The adapter's `creds`, kept in an account's directory (or an empty scratch one). A trailing `/` names a directory. */
function credentials(adapter: Adapter, dir: string, scratch: boolean): Credential[] {
  return adapter.creds.map((guest) => ({
    host: credentialHostPath(dir, guest),
    guest: path.posix.normalize(guest).replace(/\/$/, ''),
    kind: guest.endsWith('/') ? ('directory' as const) : ('file' as const),
    scratch,
  }))
}

/** Credential sources exist before the engine mounts them; a new file starts as something its harness can parse. */
async function prepareCredentials(creds: readonly Credential[]): Promise<void> {
  for (const c of creds) {
    if (c.kind === 'directory') await mkdir(c.host, { recursive: true })
    else if (!(await exists(c.host))) {
      await mkdir(path.dirname(c.host), { recursive: true })
      await writeFile(c.host, c.host.endsWith('.json') ? '{}\n' : '', { flag: 'wx' })
    }
  }
}

/**
 * Mountpoints for staged mounts that land inside a writable host directory
 * (the work tree, a credential directory), made as the user running omh:
 * left to the engine they would be made as root. Resolves what was made, to
 * remove again.
 */
async function prepareMountpoints(writable: readonly Mount[], creds: readonly Credential[], staged: readonly Mount[]): Promise<string[]> {
  const dirs = writable.filter((w) => w.guest === GUEST_WORK || creds.some((c) => c.guest === w.guest && c.kind === 'directory'))
  const made: string[] = []
  for (const m of staged) {
    const under = dirs.filter((d) => m.guest.startsWith(`${d.guest}/`)).sort((a, b) => b.guest.length - a.guest.length)[0]
    if (!under) continue
    const target = path.join(under.host, ...path.posix.relative(under.guest, m.guest).split('/'))
    if (await exists(target)) continue
    for (let dir = path.dirname(target), missing: string[] = []; ; dir = path.dirname(dir)) {
      if (await exists(dir)) {
        for (const d of missing.reverse()) {
          await mkdir(d)
          made.push(d)
        }
        break
      }
      missing.push(dir)
    }
    if ((await lstat(m.host)).isDirectory()) await mkdir(target)
    else await writeFile(target, '', { flag: 'wx' })
    made.push(target)
  }
  return made
}

/** Removes the mountpoints made for the run; one that gained content is not a placeholder any more and stays. */
async function removePlaceholders(made: readonly string[]): Promise<void> {
  for (const p of [...made].reverse()) {
    const info = await lstat(p).catch(() => undefined)
    if (info?.isDirectory()) await rmdir(p).catch(() => undefined)
    else if (info?.isFile() && info.size === 0) await rm(p, { force: true })
  }
}

/** Parents first, so a mount over a file inside a mounted directory lands on top of it. */
const sortMounts = (mounts: readonly Mount[]) =>
  [...mounts].sort((a, b) => a.guest.split('/').length - b.guest.split('/').length || a.guest.localeCompare(b.guest))
