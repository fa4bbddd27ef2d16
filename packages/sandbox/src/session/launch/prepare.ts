/**
 * Phase 2 of a launch: everything the container is made of, settled before an engine is touched,
 * so a dry run can show it and a changed plan, and only that, restarts an idle container. Plugins'
 * `beforeLaunch` taps have their say here, and the plan digest is stamped after them.
 */
import path from 'node:path'
import type { ContainerSpec } from '@omh/plugin-api'
import type { Adapter } from '@omh/kernel'
import type { KernelView } from '../../kernel-view.js'
import { stage } from '../../stage.js'
import { cacheVolumes } from '../../environment/caches.js'
import { findSecret, resolveSecrets, secretsFile } from '../../secrets.js'
import { makeAuthority, sessionAuthority } from '../../network/authority.js'
import { boundSecrets, bundleKeeper, declaredSecrets, GUEST_AUTHORITY, secretHosts, withBound, withPlaceholders } from '../../network/bound-secrets.js'
import { proxiedKeys, sessionToken } from '../../network/credentials.js'
import { plannedLogins, restoreLogin, vaultDir } from '../../network/logins.js'
import { credentialHostPath } from '../../accounts.js'
import { egressOf, networkName, proxyEnv, type Egress } from '../../network/egress.js'
import { sessionLimits } from '../../network/limits.js'
import { GUEST_SSH_PORT } from '../../ssh.js'
import { carriedPaths } from '../../work/carry-in.js'
import { LABEL, branchOf, containerName, credentialsDir, stagingDir } from '../../host/layout.js'
import { contentDigests, credentialMounts, harnessArgv, KEEPER, planDigest, planSession, type CredentialMount } from '../plan.js'
import { prepareCredentials, stageForAgent, stagedMounts, withGitfile } from '../prepare.js'
import { hideMounts } from '../shadow.js'
import { stateHooks } from '../state.js'
import { inOrder } from './shared.js'
import type { Launch, Prepared } from './types.js'

/** Phase 2: renders and stages the profile, plans the container, and lets `beforeLaunch` taps change the plan. */
export async function prepare(at: Launch, sid: string, options: { dryRun?: boolean } = {}): Promise<Prepared> {
  const { kernel, sessions, adapter } = at
  const paths = sessions.paths(sid)
  const exists = !options.dryRun || (await sessions.list()).includes(sid)
  const [image, render, environment] = await inOrder(
    Promise.resolve(at.images.tag(adapter)),
    // omh's state hooks go with the user's (state.ts), and are never reported as theirs.
    kernel.renderHarness(adapter, exists ? paths.worktree : sessions.repo.root, stateHooks(adapter)),
    Promise.resolve(at.images.environment?.()),
  )
  const caches = environment && kernel.settings.last((s) => s.session?.caches)?.value !== false ? cacheVolumes(sessions.repo.id) : []
  const credentials = credentialsOf(kernel, adapter, at.account)
  const egress = egressOf(kernel.settings, adapter)
  // Keys stay outside only where the session's network is omh's: with egress open or none there is
  // no place beside the session for the proxy, and the harness keeps its mounted login. The keyring
  // is not asked: a locked one would prompt at every launch for a key the user may not have.
  const sources = { env: kernel.options.env, omhHome: kernel.omhHome, keyring: () => undefined }
  const find = (name: string) => findSecret(name, sources)
  const holds = egress.mode === 'allowlist' && adapter.keys.some((k) => find(k.variable) !== undefined)
  const hosts = egress.mode === 'allowlist' ? secretHosts(kernel.settings, render.profile.mcp) : new Map()
  // A subscription login the account holds is kept outside behind the same proxy (logins.ts).
  const accountDirectory = credentialsDir(kernel.omhState, adapter.name, at.account)
  const held = adapter.logins.length
    ? await plannedLogins(adapter.logins, (guest) => credentialHostPath(accountDirectory, guest), vaultDir(kernel.omhState, adapter.name, at.account), `${adapter.name}/${at.account}`)
    : []
  // With egress open or none no proxy stands beside the session: a kept login goes back into its files, as before.
  if (egress.mode !== 'allowlist' && !options.dryRun) for (const login of held) await restoreLogin(login)
  const logins = egress.mode === 'allowlist' ? held : []
  const token = holds || hosts.size || logins.length ? await sessionToken(paths.run, { make: !options.dryRun }) : undefined
  const bound = token
    ? boundSecrets(hosts, (name) => findSecret(name, { env: kernel.options.env, omhHome: kernel.omhHome }), token, (name) => `[secrets.${name}] or an MCP server's header`, secretsFile(kernel.omhHome))
    : undefined
  // A dry run makes nothing on disk: a throwaway authority shows where the session's goes.
  const authority = bound || logins.length ? (options.dryRun ? makeAuthority() : await sessionAuthority(paths.run)) : undefined
  const keys = holds && token ? proxiedKeys(adapter, find, token) : undefined
  const proxied = withBound(keys, bound, authority, token, logins)
  const files = withGitfile([...render.files, ...(authority ? [{ kind: 'file' as const, guest: GUEST_AUTHORITY, content: authority.cert, mode: 0o644 }] : [])])
  const dir = stagingDir(paths, adapter.name)
  const staged = options.dryRun ? await stage({ files }, dir, { dryRun: true }) : await stageForAgent(files, dir)
  const planned = planSession({
    repo: sessions.repo,
    session: sid,
    harness: adapter.name,
    image,
    worktree: paths.worktree,
    shadow: paths.shadow,
    staged: stagedMounts(staged),
    credentials,
    env: egress.mode === 'allowlist' ? { ...proxyEnv(), ...withPlaceholders(render.env, bound?.placeholders ?? new Map()), ...proxied?.env } : { ...declaredSecrets(kernel.settings), ...render.env },
    contents: contentDigests(files),
    // sshd for `omh attach` listens here once attached; publishing costs nothing until then. The
    // engine picks the host port: any fixed one may be taken, and a launch must not fail for it.
    // Behind the egress proxy the project's ports are published by a forwarder beside the session (beside.ts).
    ports: [{ guest: GUEST_SSH_PORT }, ...(egress.mode === 'open' ? (environment?.ports ?? []).map((guest) => ({ guest })) : [])],
    ...sessionNetwork(egress, containerName(sessions.repo, sid)),
    limits: sessionLimits(kernel.settings),
    agent: at.agent,
    volumes: caches.map(({ volume, guest, readOnly }) => ({ volume, guest, readOnly })),
    ...(authority ? { keeper: bundleKeeper(KEEPER) } : {}),
  })
  if (!options.dryRun) await prepareCredentials(credentials)
  const plan = await at.hooks.beforeLaunch.promise({
    harness: adapter.name,
    session: sid,
    render,
    repository: sessions.repo,
    branch: branchOf(sid),
    worktree: paths.worktree,
    spec: planned.spec,
    exec: harnessArgv(adapter, [...(proxied?.args ?? []), ...at.request.args], at.request.detach ? 'detached' : at.request.tty ? 'terminal' : 'pipe'),
  })
  const spec = stamp(plan.spec, { ...contentDigests(files), ...networkSettings(kernel.settings) })
  const withEnvironment = environment ? { environment } : {}
  // Resolved at a dry run too, and thrown away: a secret the launch would miss is refused now.
  const secretEnv = resolveSecrets(spec.env, { env: kernel.options.env, omhHome: kernel.omhHome }, (variable) => `${variable} of ${adapter.name}'s MCP servers, or [secrets.${variable}]`)
  if (options.dryRun) return { paths, render, planned, plan, spec, ...withEnvironment }
  await hideMounts(paths.shadow, paths.worktree, ['.git', ...planned.worktreeTargets, ...(await carriedPaths(paths.run))], kernel.options.env, path.join(paths.run, 'hidden.json'))
  return { paths, render, planned, plan, spec, secretEnv, ...(proxied ? { proxied } : {}), ...withEnvironment }
}

/**
 * The network a session joins: its own internal one behind the proxy, none, or with egress open
 * the engine's, named once the engine is known (`networkOn`).
 */
function sessionNetwork(egress: Egress, container: string): { network?: string } {
  if (egress.mode === 'allowlist') return { network: networkName(container) }
  if (egress.mode === 'none') return { network: 'none' }
  return {}
}

/**
 * The network settings of every engine, for the plan digest: which applies is known only once the
 * engine is, and a changed one must restart an idle container all the same.
 */
function networkSettings(settings: KernelView['settings']): Record<string, string> {
  const engines = Object.fromEntries(settings.layers.flatMap((l) => Object.keys(l.settings.runtimes ?? {})).map((engine) => [engine, settings.networkOn(engine)?.value]))
  const named = settings.sessionNetwork || Object.values(engines).some(Boolean)
  return named ? { '\0network': JSON.stringify({ session: settings.sessionNetwork?.value, engines }) } : {}
}

/** Re-stamps the plan digest after `beforeLaunch` taps had their say. */
function stamp(spec: ContainerSpec, contents: Readonly<Record<string, string>>): ContainerSpec {
  return { ...spec, labels: { ...spec.labels, [LABEL.plan]: planDigest(spec, contents) } }
}

function credentialsOf(kernel: KernelView, adapter: Adapter, account: string): CredentialMount[] {
  return credentialMounts(adapter.creds, credentialsDir(kernel.omhState, adapter.name, account))
}
