/**
 * `omh auth`: the harness's own login, run in its image with the adapter's
 * `creds` mounted read-write from the account's directory, then checked on
 * the host. Directories are mounted, not token files: a harness saves a token
 * by renaming a new file over the old one, and a rename over a bind-mounted
 * file fails (EBUSY), so the login would silently not persist.
 *
 * An engine that does not share this disk gets the account's files copied
 * into volumes made for this login alone; what the harness saved comes back
 * beside the account, and replaces it only once its token is filled.
 */
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { accountDir, accountToCapture, capturedAccounts, credentialHostPath, unfilledTokens } from './accounts.js'
import { agentUser, userSpec, type AgentUser } from './agent-user.js'
import { AUTH_UNSUPPORTED, LOGIN_INCOMPLETE, OmhError, GUEST_HOME, GUEST_WORK, type ContainerSpec, type RunResult, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import { ensureImage, imageOptions, type ImageOptions, planImages } from '@omh/image'
import type { KernelView } from './kernel-view.js'
import { exists } from './host-files.js'
import { credentialMounts, type CredentialMount } from './session/plan.js'
import { prepareCredentials } from './session/prepare.js'
import { chooseWay, copyPlan, fillVolumes, mirror, readVolumes, withLinks } from './engine-files/copied.js'
import { handToAgent } from './host/ownership.js'
import { plannedLogins, vaultDir } from './network/logins.js'

export interface AuthRequest {
  readonly harness: string
  /** The account argument. */
  readonly account?: string
  /** `-a`. */
  readonly flag?: string
  /** `auto` or an engine name; absent: the `runtime` setting. */
  readonly engine?: string
  /** Give the harness the user's terminal. */
  readonly tty: boolean
}

export interface AuthHost {
  readonly context: RuntimeContext
  notice(line: string): void
  /** Image options instead of the settings' (tests start from an offline base). */
  readonly images?: ImageOptions
}

export interface AuthResult {
  readonly harness: string
  readonly account: string
  /** The account held a login before, and was logged into again. */
  readonly reauthenticated: boolean
  /** Every `token` file holds real content. False only for an adapter without `token`, which cannot tell. */
  readonly confirmed: boolean
  /** The files hold a login the adapter names (`[[logins]]`): sessions behind the allowlist hold placeholders, not the login. */
  readonly keptOutside: boolean
  /** The harness's exit status. */
  readonly status: number
  /** Where the login is kept on the host. */
  readonly directory: string
  /** Every captured account of the harness, this one included. */
  readonly accounts: readonly string[]
}

export async function authenticate(kernel: KernelView, request: AuthRequest, host: AuthHost): Promise<AuthResult> {
  const adapter = await kernel.adapter(request.harness)
  if (!adapter.creds.length) throw OmhError.of(AUTH_UNSUPPORTED, { args: [adapter.name, adapter.file] })
  const { account, captured } = await accountToCapture(kernel.omhState, adapter, {
    argument: request.account,
    flag: request.flag,
    setting: kernel.settings.account?.value,
  })
  const { runtime } = await kernel.resolveRuntime(request.engine, host.context)
  const agent = agentUser()
  const image = (await ensureImage(runtime, planImages(adapter, { ...(host.images ?? imageOptions(kernel.settings)), agent }), host.context, adapter.file)).tag

  const dir = accountDir(kernel.omhState, adapter.name, account)
  const existed = await exists(dir)
  const reauthenticated = captured.includes(account)
  const mounts = credentialMounts(adapter.creds, dir)
  let status: number
  let output: string
  // Where the login is checked: the account itself, or, copied, the copy that came back beside it.
  let landed = dir
  try {
    await prepareCredentials(mounts)
    const spec: ContainerSpec = {
      image,
      name: `omh-auth-${adapter.name}-${account}-${process.pid}`,
      mounts: mounts.map((m) => ({ host: m.host, guest: m.guest, readOnly: false })),
      env: { HOME: GUEST_HOME },
      labels: { 'omh.auth': adapter.name },
      workdir: GUEST_WORK,
      user: userSpec(agent),
      ...(agent.hostUser ? { hostUser: agent.hostUser } : {}),
      argv: [adapter.bin],
      tty: request.tty,
      interactive: true,
      capDrop: ['ALL'],
      noNewPrivileges: true,
      init: true,
    }
    host.notice(`${reauthenticated ? 'logging in again' : 'logging in'} to ${adapter.name} as account "${account}"${adapter.login ? `: ${adapter.login}` : ''}`)
    const wanted = kernel.settings.last((s) => s.session?.files)?.value ?? 'auto'
    const copied = (await chooseWay(runtime, image, wanted, path.dirname(dir), host.context)) === 'copied'
    if (copied) landed = await mkdtemp(path.join(path.dirname(dir), '.omh-login-'))
    const result = copied ? await loginCopied(runtime, spec, agent, (at) => path.join(landed, path.relative(dir, at)), host.context) : await runtime.run(spec, host.context)
    status = result.exitCode
    // Without a terminal the harness's output was captured: the user still needs to read it.
    output = `${result.stdout}${result.stderr}`.trim()
    if (output) host.notice(`${adapter.name} said:\n${output.split('\n').map((l) => `  ${l}`).join('\n')}`)
  } catch (error) {
    if (landed !== dir) await rm(landed, { recursive: true, force: true })
    if (!existed) await rm(dir, { recursive: true, force: true })
    throw error
  }

  let unfilled: string[]
  try {
    unfilled = await unfilledTokens(adapter, landed)
    if (!unfilled.length && landed !== dir) await keepLogin(mounts, dir, landed)
  } finally {
    if (landed !== dir) await rm(landed, { recursive: true, force: true })
  }
  if (unfilled.length) {
    // Nothing is recorded: a new account's directory goes again. A re-login leaves the old login as it was.
    if (!existed) await rm(dir, { recursive: true, force: true })
    throw OmhError.of(LOGIN_INCOMPLETE, {
      args: [adapter.name, account, unfilled, status],
      hintArgs: [adapter.name, account, adapter.login],
      details: { status, unfilled, output: output.slice(-2000) },
    })
  }
  return {
    harness: adapter.name,
    account,
    reauthenticated,
    confirmed: adapter.token.length > 0,
    // What the files hold decides, not the adapter alone: one file may hold a login omh keeps and a key it does not.
    keptOutside: (await plannedLogins(adapter.logins, (guest) => credentialHostPath(dir, guest), vaultDir(kernel.omhState, adapter.name, account), `${adapter.name}/${account}`)).length > 0,
    status,
    directory: dir,
    accounts: await capturedAccounts(kernel.omhState, adapter),
  }
}

/** The login in volumes made for this run alone, read back through `where` before they are removed. */
async function loginCopied(runtime: RuntimePlugin, spec: ContainerSpec, agent: AgentUser, where: (host: string) => string, context: RuntimeContext): Promise<RunResult> {
  const plan = await copyPlan(spec, spec.name!, { uid: agent.uid, gid: agent.gid })
  try {
    await fillVolumes(runtime, plan, { ...spec.labels, 'omh.auth.run': spec.name! }, context)
    const result = await runtime.run(withLinks(plan), context)
    await readVolumes(runtime, plan, where, context)
    return result
  } finally {
    for (const v of plan.volumes) await runtime.volumes!.remove(v.volume, context).catch(() => undefined)
  }
}

/**
 * Moves a login that came back into the account, entry by entry: its
 * directories stay the same directories, so a running local session that
 * mounts them sees the new login too.
 */
async function keepLogin(mounts: readonly CredentialMount[], dir: string, landed: string): Promise<void> {
  for (const m of mounts) {
    const from = path.join(landed, path.relative(dir, m.host))
    if (m.kind === 'directory') {
      await mkdir(m.host, { recursive: true, mode: 0o700 })
      await mirror(from, m.host, new Set())
    } else {
      await rename(from, m.host).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
      })
    }
  }
  await handToAgent(dir)
}
