// Pure translation of omh's container descriptions into a Docker-compatible
// client's arguments. Docker and Podman take the same flags for everything here.
import type { ContainerSpec, ExecOptions, HostUser, ImageRecipe, Mount, VolumeMount } from '@omh/plugin-api'

/** Arguments plus the variables the client needs in its own environment to pass values on. */
export interface ClientCall {
  readonly args: string[]
  readonly env: Record<string, string>
}

type Env = Readonly<Record<string, string | undefined>>

// Variables a container client reads for itself. A container variable of the
// same name must not be put into the client's environment, so it travels by value.
const CLIENT_VARIABLES =
  /^(PATH|HOME|USER|TMPDIR|SHELL|LANG|LC_.*|XDG_.*|DOCKER.*|CONTAINER.*|PODMAN.*|BUILDAH.*|BUILDKIT.*|REGISTRY.*|SSL_.*|HTTPS?_PROXY|NO_PROXY|ALL_PROXY)$/i

/**
 * `-e NAME` makes the client copy the value from its own environment, which
 * keeps secrets out of the host's process table. A name the client reads
 * itself, or one the host already sets differently, goes as `NAME=value`.
 */
export function envFlags(vars: Readonly<Record<string, string>>, hostEnv: Env): ClientCall {
  const args: string[] = []
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(vars)) {
    const byName = hostEnv[name] === value || (hostEnv[name] === undefined && !CLIENT_VARIABLES.test(name))
    args.push('-e', byName ? name : `${name}=${value}`)
    if (byName) env[name] = value
  }
  return { args, env }
}

/** The reason a mount cannot be expressed, if one of its paths cannot be. */
export function unmountable(mount: Mount): string | undefined {
  for (const p of [mount.host, mount.guest]) {
    if (!p.startsWith('/')) return `${p} is not an absolute path`
    // --mount is a comma-separated list of key=value pairs that neither client lets a value escape from.
    if (/[,\n]/.test(p)) return `${p} contains a comma or a line break, which a bind mount cannot name`
  }
  return undefined
}

// --mount, not -v: a missing host path fails instead of being created (as root)
// on the host, and a colon in a path is no separator.
const mountFlag = (m: Mount) => `type=bind,source=${m.host},target=${m.guest}${m.readOnly ? ',readonly' : ''}`

const volumeFlag = (v: VolumeMount) => `type=volume,source=${v.volume},target=${v.guest}${v.readOnly ? ',ro' : ''}`

/** The IDs of a `uid:gid` user; undefined for a name, which only the image can resolve. */
export function numericUser(user: string): HostUser | undefined {
  const ids = /^(\d+):(\d+)$/.exec(user)
  return ids ? { uid: Number(ids[1]), gid: Number(ids[2]) } : undefined
}

/**
 * Every flag `run` needs for a spec, then the image and argv. `attachedTTY`
 * says whether a requested terminal can be given: an attached process only
 * gets one when omh's own stdin is a terminal. `userFlags` map the host user
 * onto the container's (see `EngineDialect.mapUser`).
 */
export function containerArgs(spec: ContainerSpec, hostEnv: Env, attachedTTY: boolean, userFlags: readonly string[] = []): ClientCall {
  const args: string[] = ['--pull=never']
  if (spec.name) args.push('--name', spec.name)
  if (spec.init) args.push('--init')
  if (spec.interactive) args.push('-i')
  if (spec.tty && attachedTTY) args.push('-t')
  for (const v of spec.volumes ?? []) args.push('--mount', volumeFlag(v))
  for (const m of spec.mounts) args.push('--mount', mountFlag(m))
  const env = envFlags(spec.env, hostEnv)
  args.push(...env.args)
  for (const [key, value] of Object.entries(spec.labels)) args.push('--label', `${key}=${value}`)
  // Empty: the image's own (a service runs as its image says).
  if (spec.workdir) args.push('-w', spec.workdir)
  if (spec.user) args.push('-u', spec.user)
  args.push(...userFlags)
  if (spec.network) args.push('--network', spec.network)
  for (const alias of spec.aliases ?? []) args.push('--network-alias', alias)
  const { memory, pids, cpus } = spec.limits ?? {}
  // Swap equal to memory: no swap on top, so the ceiling is the one named.
  if (memory) args.push('--memory', String(memory), '--memory-swap', String(memory))
  if (pids) args.push('--pids-limit', String(pids))
  if (cpus) args.push('--cpus', String(cpus))
  for (const p of spec.ports ?? []) args.push('-p', `127.0.0.1:${p.host ?? ''}:${p.guest}`)
  for (const cap of spec.capDrop ?? []) args.push('--cap-drop', cap)
  if (spec.noNewPrivileges) args.push('--security-opt', 'no-new-privileges')
  args.push(spec.image, ...spec.argv)
  return { args, env: env.env }
}

export function execArgs(container: string, argv: readonly string[], options: ExecOptions, hostEnv: Env, attachedTTY: boolean): ClientCall {
  const args: string[] = []
  if (options.interactive) args.push('-i')
  if (options.tty && attachedTTY) args.push('-t')
  if (options.user) args.push('-u', options.user)
  if (options.workdir) args.push('-w', options.workdir)
  const env = envFlags(options.env ?? {}, hostEnv)
  args.push(...env.args, container, ...argv)
  return { args, env: env.env }
}

/** `build` flags for a recipe read from stdin (`-f -`) against `contextDir`, an empty directory. */
export function buildArgs(recipe: ImageRecipe, contextDir: string, extra: readonly string[]): string[] {
  const args = ['-t', recipe.tag, ...extra]
  for (const [key, value] of Object.entries(recipe.labels)) args.push('--label', `${key}=${value}`)
  if (recipe.network) args.push('--network', recipe.network)
  for (const [key, value] of Object.entries(recipe.buildArgs ?? {})) args.push('--build-arg', `${key}=${value}`)
  if (recipe.target) args.push('--target', recipe.target)
  args.push('-f', '-', recipe.context ?? contextDir)
  return args
}

/** `--filter` flags for labels; an empty value matches any value of that label. */
export const labelFilters = (labels: Readonly<Record<string, string>>): string[] =>
  Object.entries(labels).flatMap(([key, value]) => ['--filter', value === '' ? `label=${key}` : `label=${key}=${value}`])

/** `ps` flags listing the ids of every container, running or not, carrying all the labels. */
export function listArgs(labels: Readonly<Record<string, string>>): string[] {
  return ['ps', '-a', '--no-trunc', '--format', '{{.ID}}', ...labelFilters(labels)]
}
