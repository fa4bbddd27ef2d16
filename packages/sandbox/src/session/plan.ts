import { createHash } from 'node:crypto'
import path from 'node:path'
import { credentialHostPath } from '../accounts.js'
import { userSpec, type AgentUser } from '../agent-user.js'
import { GUEST_SOCKETS, TOOLSET_NODE, TOOLSET_SCRIPT, TOOLSET_SLEEP } from '@omh/image'
import { GUEST_HOME, GUEST_WORK, type ContainerSpec, type Mount, type ResourceLimits, type StagedEntry, type VolumeMount } from '@omh/plugin-api'
import { byText } from '@omh/plugin-kit'
import { LABEL, containerName } from '../host/layout.js'
import type { Repository } from '../host/repo.js'
import { GUEST_SHADOW } from './shadow.js'

/** A read-only mount from staging, and whether its source is a file or a directory. */
export interface StagedMount extends Mount {
  readonly kind: 'file' | 'directory'
}

/** A credential path of the adapter, and where the account keeps it on the host. */
export interface CredentialMount {
  readonly host: string
  readonly guest: string
  /** Directories are mounted whole, because renaming a file over a file mount fails (EBUSY). */
  readonly kind: 'file' | 'directory'
}

export interface SessionPlanInput {
  readonly repo: Repository
  readonly session: string
  readonly harness: string
  readonly image: string
  readonly worktree: string
  readonly shadow: string
  readonly staged: readonly StagedMount[]
  readonly credentials: readonly CredentialMount[]
  /** Variables the rendered files need (from the render report). */
  readonly env: Readonly<Record<string, string>>
  /**
   * Digest of each staged document's bytes, by guest path. A running
   * container keeps the file a file mount was made from, so new content
   * needs a new container: the digest covers it.
   */
  readonly contents: Readonly<Record<string, string>>
  /** Guest ports published on the host's 127.0.0.1 (sshd for `omh attach`), at host ports the engine picks unless named. */
  readonly ports?: ContainerSpec['ports']
  /** The engine network to join; absent: the engine's default. */
  readonly network?: string
  /** Ceilings on memory, processes and CPUs (`[session] memory`, `pids`, `cpus`). */
  readonly limits?: ResourceLimits
  /** Who runs in the container, and whose files the writable mounts are (`agentUser()`). */
  readonly agent: AgentUser
  /** Volumes the engine keeps, mounted as they are (the repository's dependency caches). */
  readonly volumes?: readonly VolumeMount[]
  /** The container's first command, in place of the keeper (which it must end by running). */
  readonly keeper?: readonly string[]
}

/** A host path that must exist before the engine mounts over it, and that omh removes once the container is gone. */
export interface Mountpoint {
  /** The writable host directory it lies in (the worktree, a credentials directory): nothing below it may be a link. */
  readonly root: string
  readonly host: string
  readonly kind: 'file' | 'directory'
}

/** The session container, described completely before anything runs. */
export interface SessionPlan {
  readonly spec: ContainerSpec
  /** Digest of everything that fixes the container's view; stamped on it as a label. */
  readonly digest: string
  /** Paths relative to the worktree that omh mounts over: never the agent's work. */
  readonly worktreeTargets: readonly string[]
  /** Mountpoints inside writable host directories, which the engine would otherwise create as root. */
  readonly mountpoints: readonly Mountpoint[]
}

/** What keeps a session container alive between harnesses. */
export const KEEPER = [TOOLSET_SLEEP, 'infinity'] as const

/**
 * Credential mounts for an adapter's `creds`, under the account's directory:
 * guest paths below the guest home keep their relative path, others are kept
 * under `_root/`. A trailing `/` names a directory.
 */
export function credentialMounts(creds: readonly string[], accountDir: string): CredentialMount[] {
  return creds.map((guest) => {
    const kind = guest.endsWith('/') ? ('directory' as const) : ('file' as const)
    return { host: credentialHostPath(accountDir, guest), guest: path.posix.normalize(guest).replace(/\/$/, ''), kind }
  })
}

const inside = (guest: string, dir: string) => guest === dir || guest.startsWith(`${dir}/`)

/**
 * Plans the session container. Pure: the same input gives the same spec and
 * digest. Writable: the worktree, the shadow git directory and credentials;
 * nothing else.
 */
export function planSession(input: SessionPlanInput): SessionPlan {
  const writable: Mount[] = [
    { host: input.worktree, guest: GUEST_WORK, readOnly: false },
    { host: input.shadow, guest: GUEST_SHADOW, readOnly: false },
    ...input.credentials.map((c) => ({ host: c.host, guest: c.guest, readOnly: false })),
  ]
  const mounts: Mount[] = [...writable, ...input.staged.map(({ host, guest }) => ({ host, guest, readOnly: true }))]
  const seen = new Map<string, Mount>()
  for (const m of mounts) {
    const clash = seen.get(m.guest)
    if (clash) throw new Error(`two mounts target ${m.guest}: ${clash.host} and ${m.host}`)
    seen.set(m.guest, m)
  }
  mounts.sort(mountOrder)

  const mountpoints: Mountpoint[] = []
  const worktreeTargets: string[] = []
  const rwDirs = writable.filter((m, n) => n < 2 || input.credentials[n - 2]!.kind === 'directory')
  for (const m of input.staged) {
    const under = rwDirs.filter((w) => m.guest !== w.guest && inside(m.guest, w.guest)).sort((a, b) => depth(b.guest) - depth(a.guest))[0]
    if (!under) continue
    const rel = path.posix.relative(under.guest, m.guest)
    mountpoints.push({ root: under.host, host: path.join(under.host, ...rel.split('/')), kind: m.kind })
    if (under.guest === GUEST_WORK) worktreeTargets.push(rel)
  }

  const env = {
    HOME: GUEST_HOME,
    OMH_SESSION: input.session,
    // The work tree and its git pointer are owned by whoever ran omh on the host, not always the
    // agent's UID; git inside would refuse the repository as someone else's. The sandbox is its own.
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'safe.directory',
    GIT_CONFIG_VALUE_0: GUEST_WORK,
    ...input.env,
  }
  const base = {
    image: input.image,
    name: containerName(input.repo, input.session),
    mounts,
    ...(input.volumes?.length ? { volumes: input.volumes } : {}),
    env,
    workdir: GUEST_WORK,
    user: userSpec(input.agent),
    ...(input.agent.hostUser ? { hostUser: input.agent.hostUser } : {}),
    argv: [...(input.keeper ?? KEEPER)],
    capDrop: ['ALL'],
    noNewPrivileges: true,
    init: true,
    ...(input.ports?.length ? { ports: input.ports } : {}),
    ...(input.network ? { network: input.network } : {}),
    ...(input.limits && Object.keys(input.limits).length ? { limits: input.limits } : {}),
  }
  const digest = planDigest(base, input.contents)
  const spec: ContainerSpec = {
    ...base,
    labels: {
      [LABEL.repo]: input.repo.id,
      [LABEL.session]: input.session,
      [LABEL.harness]: input.harness,
      [LABEL.plan]: digest,
      [LABEL.worktree]: input.worktree,
    },
  }
  return { spec, digest, worktreeTargets: worktreeTargets.sort(), mountpoints }
}

const depth = (guest: string) => guest.split('/').length

/** The order of a container's mounts: parents first, so a mount over a file inside a mounted directory lands on top of it. */
export const mountOrder = (a: Mount, b: Mount): number => depth(a.guest) - depth(b.guest) || byText(a.guest, b.guest)

/**
 * The digest of everything that fixes what a container sees: its spec (labels
 * left out, so stamping does not change it) and the bytes behind its file
 * mounts. Of a published port only the guest side counts: the host side is
 * the engine's pick, different for each container, and a new pick is no
 * reason to replace one.
 */
export function planDigest(spec: Omit<ContainerSpec, 'labels'> & { readonly labels?: unknown }, contents: Readonly<Record<string, string>>): string {
  const { labels: _labels, ports, ...rest } = spec
  const seen = ports ? { ...rest, ports: ports.map(({ guest }) => ({ guest })) } : rest
  return createHash('sha256').update(canonical({ spec: seen, contents })).digest('hex').slice(0, 16)
}

/** Digests of staged documents by guest path, for `SessionPlanInput.contents`. */
export function contentDigests(files: readonly StagedEntry[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const f of files) if (f.kind === 'file') out[f.guest] = createHash('sha256').update(f.content).update(String(f.mode ?? 0o644)).digest('hex')
  return out
}

/** JSON with sorted keys, so equal plans hash equal whatever order they were built in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(value)
}

/** What of an adapter the harness's command line comes from. */
export interface HarnessCommand {
  readonly name: string
  readonly bin: string
  /** The adapter's arguments for every session, which go before the user's. */
  readonly args: readonly string[]
}

/** How a harness meets the user: through pipes, with their terminal, or in the background. */
export type HarnessMode = 'pipe' | 'terminal' | 'detached'

/** Where a session keeps what a harness under dtach leaves: its socket, its exit status and its output. */
export const harnessFiles = (harness: string) => ({
  socket: `${GUEST_SOCKETS}/${harness}.sock`,
  status: `${GUEST_SOCKETS}/${harness}.status`,
  log: `${GUEST_SOCKETS}/${harness}.log`,
  /** What the harness's own hooks last said it does (state.ts): written by the agent's user, read as data. */
  state: `${GUEST_SOCKETS}/${harness}.state`,
})

/** What of a harness's output a session keeps: the last half of this in `<harness>.log`, the half before in `.log.1`. */
export const HARNESS_LOG_BYTES = 2 * 1024 * 1024

/**
 * The command a harness runs under: its executable, the adapter's arguments, then the user's.
 * Through pipes it runs as is. With a terminal, or in the background, it runs inside dtach when
 * the image has it, so closing the terminal leaves it running and the next launch (or
 * `omh sessions attach`) attaches to it again (Ctrl-\ detaches); the harness's exit status is
 * kept in a file because dtach does not pass it on. A harness started there runs under `script`,
 * which keeps its terminal output for `omh sessions logs`, within HARNESS_LOG_BYTES.
 */
export function harnessArgv(harness: HarnessCommand, args: readonly string[], mode: HarnessMode): string[] {
  const argv = [harness.bin, ...harness.args, ...args]
  if (mode === 'pipe') return argv
  return ['sh', '-c', SUPERVISE, 'omh-launch', mode, harness.name, RECORD, KEEP_LOG, ...argv]
}

/** What a start in the background exits with when the harness already runs there, or the image has no dtach. */
export const DETACHED_ALREADY = 75
export const DETACHED_NO_DTACH = 70

/** Starts the harness in dtach, or attaches to the one already there. */
const SUPERVISE = `m=$1 h=$2 record=$3 keep=$4; shift 4
if ! command -v dtach >/dev/null 2>&1; then
  [ "$m" = detached ] && { echo "omh: the session's image has no dtach, which a harness in the background runs under" >&2; exit ${DETACHED_NO_DTACH}; }
  exec "$@"
fi
d=${GUEST_SOCKETS}; mkdir -p "$d"; s="$d/$h.sock"
if [ -S "$s" ] && ${TOOLSET_NODE} -e "require('net').connect(process.argv[1]).on('connect',()=>process.exit(0)).on('error',()=>process.exit(1))" "$s"; then
  [ "$m" = detached ] && { echo "omh: $h already runs in this session" >&2; exit ${DETACHED_ALREADY}; }
else
  rm -f "$s" "$d/$h.status" "$d/$h.state"
fi
# The harness's words as one line for script's shell, each single-quoted.
sq="'" q=
for a; do
  r=
  while :; do case $a in *"$sq"*) r="$r\${a%%"$sq"*}'\\\\''"; a=\${a#*"$sq"} ;; *) r="$r$a"; break ;; esac; done
  q="$q '$r'"
done
if [ "$m" = detached ]; then exec dtach -n "$s" -r winch -z sh -c "$record" omh-record "$d" "$h" "$q" "$keep"; fi
dtach -A "$s" -r winch -z sh -c "$record" omh-record "$d" "$h" "$q" "$keep"
if [ -f "$d/$h.status" ]; then exit "$(cat "$d/$h.status")"; fi
exit 0`

/** Runs the harness under script, its output through a FIFO to KEEP_LOG, and keeps its exit status. */
const RECORD = `d=$1 h=$2 q=$3 keep=$4
p="$d/$h.pipe"; rm -f "$p"; mkfifo -m 600 "$p" || exit 1
${TOOLSET_NODE} -e "$keep" "$d/$h.log" ${HARNESS_LOG_BYTES} < "$p" &
${TOOLSET_SCRIPT} -qfe -c "$q" "$p"
echo $? > "$d/$h.status"
wait
rm -f "$p"`

/** Keeps a harness's output in two files of half the limit each: the newest, and the one before. */
const KEEP_LOG = `const fs = require('fs'); const [log, limit] = process.argv.slice(1); const half = Number(limit) / 2;
let fd = fs.openSync(log, 'a'); let size = fs.fstatSync(fd).size;
process.stdin.on('data', (b) => { if (size + b.length > half) { fs.closeSync(fd); fs.renameSync(log, log + '.1'); fd = fs.openSync(log, 'w'); size = 0 } fs.writeSync(fd, b); size += b.length })`
