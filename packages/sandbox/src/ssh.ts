/**
 * Attaching an editor to a session over SSH. The session container runs an
 * sshd as the agent user, reachable only on 127.0.0.1 at a port the engine
 * picked when the container started; the host keeps one key pair per
 * repository and one ssh config entry per session (with that port, written
 * again on each attach), included at the top of the user's `~/.ssh/config`
 * so an editor (or plain `ssh`) reaches the session by its alias.
 */
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { OmhError, SSH_KEY_FAILED, isOmhError, GUEST_USER, GUEST_WORK } from '@omh/plugin-api'
import { replaceFile, snapshot, statePath } from '@omh/kernel'
import { exists } from './host-files.js'
import { TOOLSET_SSHD, TOOLSET_SSH_KEYGEN } from '@omh/image'

/** The port sshd listens on inside the container. */
export const GUEST_SSH_PORT = 2222

/** The ssh alias of a session. */
export const sshAlias = (repoId: string, sid: string): string => `omh-${repoId}-${sid}`

/** The URL editors that take one open. */
export const sshUrl = (alias: string): string => `ssh://${alias}${GUEST_WORK}`

export interface SshPaths {
  /** The repository's private key; `.pub` beside it. */
  readonly key: string
  /** Directory of per-session config entries, one file each. */
  readonly hosts: string
  /** The line the user's ssh config starts with. */
  readonly include: string
}

export function sshPaths(omhState: string, repoId: string): SshPaths {
  const hosts = statePath(omhState, 'ssh', 'hosts')
  return { key: statePath(omhState, 'keys', repoId, 'id_ed25519'), hosts, include: `Include ${path.join(hosts, '*.conf')}` }
}

/**
 * The script that starts sshd inside a session container, as the agent user,
 * with a host key made on first start and the repository's public key from
 * `OMH_SSH_KEY` (an environment variable, not a mount: nothing of the host's
 * key store enters the container). Password logins are off. Running it again
 * leaves a running sshd alone, after refreshing the authorized key.
 */
export const SSHD_SCRIPT = `set -eu
d=/tmp/omh-sshd
mkdir -p "$d"
chmod 700 "$d"
[ -f "$d/host_ed25519" ] || ${TOOLSET_SSH_KEYGEN} -q -t ed25519 -N '' -f "$d/host_ed25519"
printf '%s\\n' "$OMH_SSH_KEY" > "$d/authorized_keys"
chmod 600 "$d/authorized_keys"
cat > "$d/sshd_config" <<CONF
Port ${GUEST_SSH_PORT}
HostKey $d/host_ed25519
AuthorizedKeysFile $d/authorized_keys
AllowUsers $(id -un)
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $d/sshd.pid
Subsystem sftp internal-sftp
SetEnv PATH=$PATH
CONF
if [ -f "$d/sshd.pid" ] && kill -0 "$(cat "$d/sshd.pid")" 2>/dev/null; then exit 0; fi
exec ${TOOLSET_SSHD} -f "$d/sshd_config" -E "$d/sshd.log"
`

/** The ssh config entry of one session. Host keys are made fresh in each container, so none is remembered. */
export function hostEntry(alias: string, port: number, key: string): string {
  return [
    `Host ${alias}`,
    '  HostName 127.0.0.1',
    `  Port ${port}`,
    `  User ${GUEST_USER}`,
    `  IdentityFile ${key}`,
    '  IdentitiesOnly yes',
    '  StrictHostKeyChecking no',
    '  UserKnownHostsFile /dev/null',
    '  LogLevel ERROR',
    '',
  ].join('\n')
}

/**
 * The repository's key pair, made with `ssh-keygen` on first use. Resolves the
 * public key. Attaches that run at once may each make a pair; the first to
 * land is the one every one of them uses.
 */
export async function ensureKeyPair(key: string, comment: string, env: Readonly<Record<string, string | undefined>> = process.env): Promise<string> {
  if (!(await whole(key))) await makeKeyPair(key, comment, env)
  return (await readFile(`${key}.pub`, 'utf8')).trim()
}

const whole = async (key: string) => (await exists(key)) && (await exists(`${key}.pub`))

/**
 * Makes the pair in a fresh directory beside the key's and renames that over
 * the key's directory, so the pair appears whole or not at all: two files
 * cannot be renamed at once, a directory can. A rename that finds the
 * directory already holding something lost the race, and the pair there is
 * used. ssh-keygen never sees an existing file, so it never asks to overwrite
 * one (there is no terminal to answer it).
 */
async function makeKeyPair(key: string, comment: string, env: Readonly<Record<string, string | undefined>>): Promise<void> {
  const dir = path.dirname(key)
  const fail = (why: string, cause?: unknown, missing = false) => OmhError.of(SSH_KEY_FAILED, { args: [key, why], hintArgs: [missing], cause })
  let temp: string | undefined
  try {
    await mkdir(path.dirname(dir), { recursive: true, mode: 0o700 })
    temp = await mkdtemp(path.join(path.dirname(dir), `.${path.basename(dir)}-`))
    await promisify(execFile)('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', path.join(temp, path.basename(key))], { env: { ...env } }).catch(
      (error: NodeJS.ErrnoException & { stderr?: string }) => {
        if (error.code === 'ENOENT') throw fail('there is no ssh-keygen on PATH', error, true)
        throw fail(`ssh-keygen failed: ${error.stderr?.trim().split('\n').pop() || error.message}`, error)
      },
    )
    await rename(temp, dir).catch(async (error: NodeJS.ErrnoException) => {
      if (!['ENOTEMPTY', 'EEXIST'].includes(error.code ?? '') || !(await whole(key))) throw error
    })
  } catch (error) {
    if (isOmhError(error)) throw error
    throw fail(error instanceof Error ? error.message : String(error), error)
  } finally {
    if (temp) await rm(temp, { recursive: true, force: true })
  }
}

/** Writes (or replaces) a session's ssh config entry. */
export async function writeHostEntry(paths: SshPaths, alias: string, entry: string): Promise<string> {
  const file = path.join(paths.hosts, `${alias}.conf`)
  await mkdir(paths.hosts, { recursive: true, mode: 0o700 })
  await replaceFile(await snapshot(file), entry, 0o600)
  return file
}

/** Removes a session's ssh config entry, if there is one. */
export async function removeHostEntry(paths: SshPaths, alias: string): Promise<void> {
  await rm(path.join(paths.hosts, `${alias}.conf`), { force: true })
}

export type IncludeChange = 'present' | 'added' | 'created'

/**
 * Puts the include line at the top of the user's ssh config (ssh takes the
 * first value it finds, so an entry after a `Host *` block would lose). The
 * file is read, the new content planned, and written whole through a renamed
 * temporary file, only if it did not change in between; everything else in it
 * stays as it was.
 */
export async function ensureInclude(sshConfig: string, include: string): Promise<IncludeChange> {
  const before = await snapshot(sshConfig)
  const text = before.bytes?.toString('utf8')
  if (text !== undefined && text.split('\n').some((line) => line.trim() === include)) return 'present'
  await mkdir(path.dirname(sshConfig), { recursive: true, mode: 0o700 })
  await replaceFile(before, text === undefined ? `${include}\n` : `${include}\n\n${text}`, 0o600)
  return text === undefined ? 'created' : 'added'
}

/** The editor's argv with `$URL` and `$ALIAS` filled in. */
export function editorArgs(args: readonly string[], alias: string): string[] {
  return args.map((a) => a.replaceAll('$URL', sshUrl(alias)).replaceAll('$ALIAS', alias))
}
