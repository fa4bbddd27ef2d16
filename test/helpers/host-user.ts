// A host user who is not root, for end-to-end tests of omh run by someone
// other than root: made once (idempotently) by the test that needs it, with
// what rootless Podman needs (subordinate IDs, a runtime directory, its own
// copy of the test base image) and membership of the `docker` group.
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { chownSync, copyFileSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import path from 'node:path'
import { finished, type Ran } from './run.js'

export interface HostUser {
  readonly name: string
  readonly uid: number
  readonly gid: number
  readonly home: string
  /** `XDG_RUNTIME_DIR`: where rootless Podman keeps its sockets and state. */
  readonly runtimeDir: string
  /** A directory holding a `node` this user can run. */
  readonly nodeDir: string
}

export type RanAs = Omit<Ran, 'json'>

/** The agent's UID in omh's images as root builds them: the user made here must differ from it. */
const AGENT_UID = 1000
/** How many subordinate IDs the user gets, as useradd gives by default. */
const SUBORDINATE_COUNT = 65536

const sh = (program: string, args: readonly string[]): SpawnSyncReturns<string> => {
  const result = spawnSync(program, args, { encoding: 'utf8' })
  if (result.error) throw new Error(`${program} ${args.join(' ')}: ${result.error.message}`)
  return result
}

const must = (program: string, args: readonly string[]): string => {
  const result = sh(program, args)
  if (result.status !== 0) throw new Error(`${program} ${args.join(' ')} exited ${result.status}: ${result.stderr.trim()}`)
  return result.stdout.trim()
}

/**
 * Makes `name` a user with a home, a UID other than the agent's, a range of
 * subordinate IDs, a runtime directory and membership of `docker`, as far as
 * each is missing. Needs root; a machine without `newuidmap` (the `uidmap`
 * package, which scripts/setup.sh installs) cannot run rootless Podman.
 */
export function ensureHostUser(name: string): HostUser {
  // The engines' test projects run side by side, and two of them adding
  // subordinate ranges at once would both take the same free one.
  return exclusively(() => makeHostUser(name))
}

const USERS_LOCK = '/run/omh-e2e-users.lock'

function exclusively<T>(work: () => T): T {
  const deadline = Date.now() + 180_000
  for (;;) {
    try {
      mkdirSync(USERS_LOCK)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      if (Date.now() > deadline) throw new Error(`${USERS_LOCK} was held for three minutes: remove it if no test run is making users`, { cause: error })
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200)
    }
  }
  try {
    return work()
  } finally {
    rmSync(USERS_LOCK, { recursive: true, force: true })
  }
}

function makeHostUser(name: string): HostUser {
  if (process.getuid?.() !== 0) throw new Error(`the tests of a non-root user make the user ${name}, which needs root; run the end-to-end tests as root`)
  for (const tool of ['useradd', 'usermod', 'runuser', 'newuidmap', 'newgidmap']) {
    if (sh('sh', ['-c', `command -v ${tool}`]).status !== 0) throw new Error(`${tool} is missing: install the passwd and uidmap packages (scripts/setup.sh does)`)
  }
  // From 1100 up: on a fresh machine useradd would otherwise take 1000, the agent's own UID.
  if (sh('id', ['-u', name]).status !== 0) must('useradd', ['--create-home', '--shell', '/bin/sh', '-K', 'UID_MIN=1100', '-K', 'GID_MIN=1100', name])
  const uid = Number(must('id', ['-u', name]))
  const gid = Number(must('id', ['-g', name]))
  if (uid === AGENT_UID) throw new Error(`the user ${name} has UID ${AGENT_UID}, the agent's: remove it (userdel -r ${name}) and run again`)
  if (sh('getent', ['group', 'docker']).status === 0) must('usermod', ['--append', '--groups', 'docker', name])
  for (const [file, flag] of [
    ['/etc/subuid', '--add-subuids'],
    ['/etc/subgid', '--add-subgids'],
  ] as const) {
    const start = freeSubordinateStart(file, name, uid)
    if (start !== undefined) must('usermod', [flag, `${start}-${start + SUBORDINATE_COUNT - 1}`, name])
  }
  const home = must('sh', ['-c', `getent passwd ${name} | cut -d: -f6`])
  // No login session makes it here (no logind), so it is made as pam_systemd would.
  const runtimeDir = `/run/user/${uid}`
  mkdirSync(runtimeDir, { recursive: true, mode: 0o700 })
  chownSync(runtimeDir, uid, gid)
  return { name, uid, gid, home, runtimeDir, nodeDir: nodeFor({ name, uid, gid, home }) }
}

/** Where a new range of subordinate IDs for the user starts, after every range in `file`; undefined when the user has one (by name or UID). */
function freeSubordinateStart(file: string, name: string, uid: number): number | undefined {
  let text = ''
  try {
    text = readFileSync(file, 'utf8')
  } catch {}
  let end = 100_000
  for (const line of text.split('\n')) {
    const [owner, start, count] = line.split(':')
    if (!owner || start === undefined || count === undefined) continue
    if (owner === name || owner === String(uid)) return undefined
    end = Math.max(end, Number(start) + Number(count))
  }
  return end
}

/** A `node` the user can run: this one where it can reach it, else a copy in its home. */
function nodeFor(user: Pick<HostUser, 'name' | 'uid' | 'gid' | 'home'>): string {
  const own = path.dirname(process.execPath)
  if (runAsSync(user.name, ['test', '-x', process.execPath]).status === 0) return own
  const dir = path.join(user.home, '.cache', 'omh-e2e', 'bin')
  const copy = path.join(dir, 'node')
  const source = statSync(process.execPath)
  const present = (() => {
    try {
      const s = statSync(copy)
      return s.size === source.size && s.mtimeMs === source.mtimeMs
    } catch {
      return false
    }
  })()
  if (!present) {
    mkdirSync(dir, { recursive: true })
    copyFileSync(process.execPath, copy)
    must('touch', ['-r', process.execPath, copy])
    must('chmod', ['755', copy])
    must('chown', ['-R', `${user.uid}:${user.gid}`, path.join(user.home, '.cache')])
  }
  return dir
}

/** Fails unless the user can read `file` (the checkout under test must be readable by others). */
export function requireReadable(user: HostUser, file: string): void {
  if (runAsSync(user.name, ['test', '-r', file]).status !== 0) {
    throw new Error(`${user.name} cannot read ${file}: the checkout under test must be readable by other users (move it out of /root)`)
  }
}

/**
 * Gives the user's rootless Podman the image root's Podman has under `tag`,
 * unless it already has that very image.
 */
export function shareImageWithRootless(user: HostUser, tag: string): void {
  const id = (ran: { status: number | null; stdout: string }) => (ran.status === 0 ? ran.stdout.trim() : undefined)
  const root = id(sh('podman', ['image', 'inspect', '--format', '{{.Id}}', tag]))
  if (!root) throw new Error(`root's podman has no ${tag} to copy`)
  if (id(runAsSync(user.name, ['podman', 'image', 'inspect', '--format', '{{.Id}}', tag], userEnv(user))) === root) return
  const archive = spawnSync('podman', ['save', tag], { maxBuffer: 2 * 1024 * 1024 * 1024 })
  if (archive.status !== 0) throw new Error(`podman save ${tag}: ${String(archive.stderr)}`)
  const loaded = spawnSync('runuser', ['-u', user.name, '--', 'env', '-i', ...envPairs(userEnv(user)), 'podman', 'load'], {
    input: archive.stdout,
    cwd: user.home,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  if (loaded.status !== 0) throw new Error(`loading ${tag} into ${user.name}'s podman: ${loaded.stderr}`)
}

/** The clean environment a login of the user would have, and nothing of root's. */
export function userEnv(user: HostUser, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: user.home,
    USER: user.name,
    LOGNAME: user.name,
    PATH: `${user.nodeDir}:/usr/local/bin:/usr/bin:/bin`,
    XDG_RUNTIME_DIR: user.runtimeDir,
    LANG: 'C.UTF-8',
    ...extra,
  }
}

const envPairs = (env: Record<string, string>) => Object.entries(env).map(([k, v]) => `${k}=${v}`)

function runAsSync(name: string, argv: readonly string[], env: Record<string, string> = {}): RanAs {
  const result = spawnSync('runuser', ['-u', name, '--', 'env', '-i', ...envPairs(env), ...argv], { encoding: 'utf8', cwd: '/' })
  return { status: result.status ?? -1, stdout: result.stdout ?? '', stderr: result.stderr ?? '' }
}

/** Runs argv as the user, in `cwd`, with only `env`; resolves when it exits, killing it after `timeoutMs`. */
export function runAs(user: HostUser, argv: readonly string[], options: { cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<RanAs> {
  const child = spawn('runuser', ['-u', user.name, '--', 'env', '-i', ...envPairs(options.env), ...argv], { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  return finished(child, options.timeoutMs ?? 600_000)
}
