/**
 * Accounts: captured snapshots of a harness's own login, kept per harness in
 * `$OMH_STATE/creds/<harness>/<account>/`, laid out like the guest home (a
 * guest path outside the home is kept under `_root/`). An account counts as
 * captured only when every `token` file of the adapter holds real content: a
 * harness fills its config directory just by starting, so a non-empty
 * directory proves nothing.
 */
import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { readTextSafe, statePath, type Adapter } from '@omh/kernel'
import { ACCOUNT_AMBIGUOUS, ACCOUNT_INVALID, ACCOUNT_NOT_FOUND, OmhError, GUEST_HOME } from '@omh/plugin-api'

/** Where the accounts of one harness live. */
export const accountsDir = (omhState: string, harness: string): string => statePath(omhState, 'creds', harness)

/** Where one account lives. */
export const accountDir = (omhState: string, harness: string, account: string): string =>
  path.join(accountsDir(omhState, harness), account)

/** The host path, inside an account, of a guest credential path. */
export function credentialHostPath(accountDirectory: string, guest: string): string {
  const clean = path.posix.normalize(guest).replace(/\/$/, '')
  const rel = clean === GUEST_HOME || clean.startsWith(`${GUEST_HOME}/`) ? path.posix.relative(GUEST_HOME, clean) : path.posix.join('_root', clean)
  return path.join(accountDirectory, ...rel.split('/').filter(Boolean))
}

/** Why a name cannot name an account, or `undefined` when it can. */
export function accountNameProblem(name: string): string | undefined {
  if (!name) return 'it is empty'
  if (name === '.' || name === '..') return 'it is a relative directory name'
  if (/[/\\]/.test(name)) return 'it holds a path separator'
  if (name.startsWith('.')) return 'it starts with a dot'
  if (!/^[A-Za-z0-9._-]+$/.test(name)) return 'it holds characters other than letters, digits, dots, dashes and underscores'
  return undefined
}

export function assertAccountName(name: string): void {
  const why = accountNameProblem(name)
  if (why) throw OmhError.of(ACCOUNT_INVALID, { args: [name, why] })
}

/** A file's content is a placeholder when it is blank or an empty JSON value: what omh or the harness writes before any login. */
export const isPlaceholder = (content: string): boolean => /^\s*(\{\s*\}|\[\s*\]|null)?\s*$/.test(content)

/** More than any login token a harness keeps. */
const TOKEN_BYTES = 1024 * 1024

/**
 * The adapter's token paths (guest) that do not hold real content in an
 * account: missing, unreadable, blank or a placeholder. Empty means captured.
 */
export async function unfilledTokens(adapter: Pick<Adapter, 'token'>, accountDirectory: string): Promise<string[]> {
  const unfilled: string[] = []
  for (const guest of adapter.token) {
    // The directory is the agent's to write: a FIFO or a link out in place of a token is no login.
    let content: string | undefined
    try {
      content = readTextSafe(credentialHostPath(accountDirectory, guest), { within: accountDirectory, maxBytes: TOKEN_BYTES })
    } catch {
      content = undefined
    }
    if (content === undefined || isPlaceholder(content)) unfilled.push(guest)
  }
  return unfilled
}

/** Accounts of a harness whose login is captured, sorted. An adapter without `token` cannot tell, so it has none. */
export async function capturedAccounts(omhState: string, adapter: Pick<Adapter, 'name' | 'token'>): Promise<string[]> {
  if (!adapter.token.length) return []
  const names = await readdir(accountsDir(omhState, adapter.name), { withFileTypes: true }).catch(() => [])
  const captured: string[] = []
  for (const entry of names) {
    if (!entry.isDirectory() || accountNameProblem(entry.name)) continue
    if (!(await unfilledTokens(adapter, accountDir(omhState, adapter.name, entry.name))).length) captured.push(entry.name)
  }
  return captured.sort()
}

/** Which account a command uses, and what decided it. */
export type AccountChoice =
  | { readonly account: string; readonly by: 'flag' | 'setting' | 'only' }
  /** Nothing named and nothing captured: the harness runs without a login and asks for one itself. */
  | { readonly account: undefined; readonly by: 'none' }

/**
 * The account to use: `-a` beats the `account` setting; with neither, the
 * one captured account. Several captured and none named is an error, never a
 * guess; a named account must be captured.
 */
export async function chooseAccount(
  omhState: string,
  adapter: Pick<Adapter, 'name' | 'token'>,
  named: { readonly flag?: string | undefined; readonly setting?: string | undefined },
): Promise<AccountChoice> {
  const captured = await capturedAccounts(omhState, adapter)
  const name = named.flag ?? named.setting
  if (name !== undefined) {
    assertAccountName(name)
    // Without token files nothing proves a login, but an account the user names and `omh auth`
    // made is theirs to use; only a choice omh would make itself needs the proof.
    const usable = captured.includes(name) || (!adapter.token.length && (await isDirectory(accountDir(omhState, adapter.name, name))))
    if (!usable) throw OmhError.of(ACCOUNT_NOT_FOUND, { args: [adapter.name, name, captured], hintArgs: [adapter.name, name] })
    return { account: name, by: named.flag !== undefined ? 'flag' : 'setting' }
  }
  if (captured.length === 1) return { account: captured[0]!, by: 'only' }
  if (captured.length > 1) throw OmhError.of(ACCOUNT_AMBIGUOUS, { args: [adapter.name, captured], hintArgs: [adapter.name, captured] })
  return { account: undefined, by: 'none' }
}

/**
 * The account `omh auth` logs into: the one named (argument, `-a`, then the
 * setting); else the only captured one (a re-login); else `default`. Several
 * captured and none named is an error.
 */
export async function accountToCapture(
  omhState: string,
  adapter: Pick<Adapter, 'name' | 'token'>,
  named: { readonly argument?: string | undefined; readonly flag?: string | undefined; readonly setting?: string | undefined },
): Promise<{ account: string; captured: readonly string[] }> {
  const captured = await capturedAccounts(omhState, adapter)
  const name = named.argument ?? named.flag ?? named.setting
  if (name !== undefined) {
    assertAccountName(name)
    return { account: name, captured }
  }
  if (captured.length > 1) throw OmhError.of(ACCOUNT_AMBIGUOUS, { args: [adapter.name, captured], hintArgs: [adapter.name, captured] })
  return { account: captured[0] ?? 'default', captured }
}

const isDirectory = (p: string): Promise<boolean> => stat(p).then((st) => st.isDirectory(), () => false)
