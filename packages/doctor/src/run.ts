/**
 * `omh doctor`, run for real: render and stage the profile as a launch would,
 * start the harness image once with the real mounts in a scratch place (no
 * session, no branch, no network), measure inside, and judge on the host.
 */
import { execFile, type ExecFileException } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { type AccountChoice, accountDir, agentUser, type AgentUser, chooseAccount, chooseWay, clearMountpoints, contentDigests, copyPlan, createShadow, credentialMounts, fillVolumes, git, gitFailure, handToAgent, mountOrder, networkOn, planSession, prepareCredentials, prepareMountpoints, repository, type Repository, resolveBase, stagedMounts, stageForAgent, withGitfile, withLinks } from '@omh/sandbox/parts'
import {
  DOCTOR_NO_TURN,
  DOCTOR_RUNNER_FAILED,
  DOCTOR_WORKSPACE_FAILED,
  OmhError,
  type CapabilityClass,
  type ContainerSpec,
  type DroppedItem,
  type RunResult,
  type RuntimeContext,
  type RuntimePlugin,
  type TranslatedItem,
} from '@omh/plugin-api'
import { ensureImage, GUEST_OMH, imageOptions, type ImageOptions, planImages, TOOLSET_NODE } from '@omh/image'
import { statePath, type RenderReport } from '@omh/kernel'
import type { KernelView } from '@omh/sandbox'
import { classVerdicts, doctorChecks, doctorPlan, treeEntries, type ClassVerdict, type DoctorCheck, type DoctorInput } from './checks.js'
import { digestBytes, digestOf, type ProbeOutput, type RunnerPlan, type RunnerReport } from './runner.js'
import { hooksUnderTest, judgeTurn, turnChecks, turnScript, wordsToCall, type TurnReport } from './turn.js'

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
  /**
   * Run on the session's network (the `[session] network` setting, or the
   * engine's default) instead of none, so remote MCP servers can connect.
   */
  readonly network?: boolean
  /** `--turn`: drive the harness through a turn against the scripted model, after the probes. */
  readonly turn?: boolean
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
  /** Failed checks; the rest of `checks` passed. */
  readonly failed: number
  /** Checks that passed with a warning: MCP servers loaded but not connected. */
  readonly warnings: number
  readonly checks: readonly DoctorCheck[]
  /** What each capability class came to. */
  readonly classes: Readonly<Record<CapabilityClass, ClassVerdict>>
  /** Items the harness will not see, by design of its adapter or its renderers. */
  readonly dropped: readonly DroppedItem[]
  /** Items the harness sees as something else (a command as a skill), and what. */
  readonly translated: readonly TranslatedItem[]
  /** What each probe printed, as measured. */
  readonly probes: Readonly<Record<string, ProbeOutput>>
  /** With `--turn`: what the turn showed, per hook and per item. */
  readonly turn?: TurnReport
}

/** The scripted model's compiled file, copied into the container for `--turn`. */
export function modelFile(): string {
  return createRequire(import.meta.url).resolve('@omh/doctor/scripted-model')
}

/** The runner's compiled file, as the installed kernel package has it. */
export function runnerFile(): string {
  return createRequire(import.meta.url).resolve('@omh/doctor/runner')
}

/** Runs doctor for one harness and reports every check; throws only when the container itself could not run. */
export async function doctor(kernel: KernelView, request: DoctorRequest, host: DoctorHost): Promise<DoctorReport> {
  const adapter = await kernel.adapter(request.harness)
  const choice = await chooseAccount(kernel.omhState, adapter, { flag: request.account, setting: kernel.settings.account?.value })
  const { runtime, info } = await kernel.resolveRuntime(request.engine, host.context)
  const agent = agentUser()
  const images = planImages(adapter, { ...(host.images ?? imageOptions(kernel.settings)), agent })
  const image = (await ensureImage(runtime, images, host.context, adapter.file)).tag

  const scratch = statePath(kernel.omhState, 'scratch', `doctor-${adapter.name}-${randomBytes(4).toString('hex')}`)
  const run = path.join(scratch, 'run')
  try {
    const work = path.join(scratch, 'work')
    const repo = await workspace(kernel, work, path.join(scratch, 'base.tar'))
    const render = await kernel.renderHarness(adapter, work)
    const { profile } = render
    // As a launch: /work/.git names the sandbox's own repository, never the checkout's.
    const shadow = path.join(scratch, 'shadow.git')
    await createShadow(shadow, work, [], kernel.options.env)
    const files = withGitfile(render.files)
    const staged = await stageForAgent(files, path.join(scratch, 'stage'))

    const credentials = credentialMounts(adapter.creds, choice.account ? accountDir(kernel.omhState, adapter.name, choice.account) : path.join(scratch, 'creds'))
    await prepareCredentials(credentials)
    // The plan a launch would run, in the scratch place: the same mounts, environment and hardening.
    const plan = planSession({
      repo,
      session: 'doctor',
      harness: adapter.name,
      image,
      worktree: work,
      shadow,
      staged: stagedMounts(staged),
      credentials,
      env: render.env,
      contents: contentDigests(files),
      agent,
    })
    await prepareMountpoints(run, plan.mountpoints)

    const input: DoctorInput = { adapter, render, profile, ...(request.checkers ? { checkers: request.checkers } : {}), ...(request.network ? { network: true } : {}) }
    const network = request.network ? await networkOn(kernel.settings, runtime, host.context) : undefined
    const doctorDir = path.join(scratch, 'doctor')
    await mkdir(doctorDir, { recursive: true })
    const hooks = hooksUnderTest(profile, render.dropped)
    const turn = request.turn && adapter.turn ? adapter.turn : undefined
    if (request.turn && !turn) throw OmhError.of(DOCTOR_NO_TURN, { args: [adapter.name, adapter.file] })
    if (turn) {
      await writeFile(path.join(doctorDir, 'model.mjs'), await readFile(modelFile()))
      await writeFile(path.join(doctorDir, 'script.json'), JSON.stringify(turnScript(adapter, hooks)))
    }
    const runnerPlan: RunnerPlan = {
      ...doctorPlan(input),
      ...(turn
        ? { turn: { model: `${GUEST_DOCTOR}/model.mjs`, script: `${GUEST_DOCTOR}/script.json`, port: turn.port, run: turn.run, args: adapter.args, ...(turn.env ? { env: turn.env } : {}), timeout: turn.timeout ?? 180 } }
        : {}),
    }
    await writeFile(path.join(doctorDir, 'plan.json'), JSON.stringify(runnerPlan))
    await writeFile(path.join(doctorDir, 'runner.mjs'), await readFile(runnerFile()))
    for (const dir of [work, shadow]) await handToAgent(dir)

    const spec: ContainerSpec = {
      ...plan.spec,
      name: `omh-${path.basename(scratch)}`,
      mounts: [...plan.spec.mounts, { host: doctorDir, guest: GUEST_DOCTOR, readOnly: true }].sort(mountOrder),
      labels: { 'omh.doctor': adapter.name },
      argv: [TOOLSET_NODE, `${GUEST_DOCTOR}/runner.mjs`, `${GUEST_DOCTOR}/plan.json`],
      // No network: nothing a probe starts can reach a model, whatever the harness does. With
      // --network, the session's own, where the probes (which list and never prompt) reach MCP servers.
      ...(request.network ? (network ? { network } : {}) : { network: 'none' }),
    }
    host.notice(`checking ${adapter.name} in ${image} on ${info.engine}${request.network ? `, on ${network ? `network ${network}` : "the engine's default network"}` : ''}${choice.account ? ` with the login of account "${choice.account}"` : ', with an empty credential store (no account captured)'}…`)
    const wanted = kernel.settings.last((s) => s.session?.files)?.value ?? 'auto'
    const result =
      (await chooseWay(runtime, image, wanted, scratch, host.context)) === 'mounted'
      ? await runtime.run(spec, host.context).finally(() => clearMountpoints(run))
      : await runCopied(runtime, spec, agent, host.context)
    const report = parseReport(result, adapter.name)

    let checks = doctorChecks(input, expectedDigests(render), report)
    let turnReport: TurnReport | undefined
    if (turn) {
      const out = report.turn ?? { output: { exit: null, stdout: '', stderr: '' }, requests: [], trace: [], error: 'the runner did not run the turn' }
      turnReport = judgeTurn(hooks, profile, render.dropped, out, wordsToCall(hooks, turn.calls).unreached, turn.mcp_named)
      // A server the probes found loaded but not connected has no tools to offer: the turn repeats that warning.
      const unconnected = new Map(checks.filter((c) => c.warning && c.capability === 'mcp').flatMap((c) => (c.items ?? []).map((name) => [name, c.detail] as const)))
      checks = [...checks, ...turnChecks(turnReport, out, hooks, unconnected)]
    }
    const failed = checks.filter((c) => !c.ok).length
    const warnings = checks.filter((c) => c.warning).length
    return {
      harness: adapter.name,
      adapter: adapter.file,
      engine: info.engine,
      image,
      account: choice.account ?? null,
      accountBy: choice.by,
      ok: failed === 0,
      failed,
      warnings,
      checks,
      classes: classVerdicts(input, checks),
      dropped: render.dropped,
      translated: render.translated,
      probes: report.probes,
      ...(turnReport ? { turn: turnReport } : {}),
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
 * `/work` for the doctor: the files a new session would start from (the
 * repository's base commit), copied, so no branch is made and the checkout is
 * only read; outside a repository, an empty directory. Resolves the
 * repository the plan is named after.
 */
async function workspace(kernel: KernelView, work: string, archive: string): Promise<Repository> {
  await mkdir(work, { recursive: true })
  if (!kernel.repoRoot) return repository(work)
  const repo = repository(kernel.repoRoot)
  const env = kernel.options.env
  const base = await resolveBase(repo, env)
  const at = `${base.name} (${base.commit.slice(0, 8)})`
  // Through a file rather than a pipe: each tool fails on its own, with its own message, and
  // neither is left writing into a pipe the other has closed.
  await git(['archive', '--format=tar', '-o', archive, base.commit], { cwd: repo.root, env }).catch(gitFailure(`archiving ${at} for the doctor`, repo.root))
  const untar = await new Promise<{ error: ExecFileException | null; stderr: string }>((resolve) =>
    execFile('tar', ['-x', '-f', archive, '-C', work], { env: { ...env }, encoding: 'utf8' }, (error, _stdout, stderr) => resolve({ error, stderr })),
  )
  if (untar.error) {
    const why = untar.error.code === 'ENOENT' ? 'tar is not on PATH' : untar.stderr.trim().split('\n').pop() || untar.error.message
    throw OmhError.of(DOCTOR_WORKSPACE_FAILED, { args: [repo.root, at, why], hintArgs: [path.dirname(work)], cause: untar.error })
  }
  await rm(archive, { force: true })
  return repo
}

/** Runs the doctor's container on an engine that does not share this disk: its volumes made for this run alone, and removed after. */
async function runCopied(runtime: RuntimePlugin, spec: ContainerSpec, agent: AgentUser, context: RuntimeContext): Promise<RunResult> {
  const labels = { ...spec.labels, 'omh.doctor.run': spec.name! }
  const plan = await copyPlan(spec, spec.name!, { uid: agent.uid, gid: agent.gid })
  try {
    await fillVolumes(runtime, plan, labels, context)
    return await runtime.run(withLinks(plan), context)
  } finally {
    for (const v of plan.volumes) await runtime.volumes!.remove(v.volume, context).catch(() => undefined)
  }
}
