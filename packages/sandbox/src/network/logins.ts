/**
 * Subscription logins kept outside the session. A harness keeps its OAuth login in a file of its
 * own, which omh mounts from the account's directory; left as it is, the agent can read and send
 * the tokens anywhere. So before a session starts, the real tokens move to a vault beside the
 * account, which no session container mounts, and the account's file keeps placeholders in their
 * places. The credential proxy's front puts the real access token on requests to the harness's API
 * hosts, and makes the refresh itself: the real refresh token goes only to the token endpoint, and
 * the tokens that come back are put in the vault while the harness gets the placeholders again.
 */
import { randomBytes } from 'node:crypto'
import { chmod, chown, lstat, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { statePath } from '@omh/kernel/locations'

/** What an adapter says of its harness's login file (`[[logins]]`). */
export interface LoginFacts {
  /** The file's guest path, one of the adapter's `token` files. */
  readonly file: string
  /** Where the access token is in the file's JSON: keys joined by dots. */
  readonly access: string
  /** Where the refresh token is, when the login has one. */
  readonly refresh?: string
  /** Where an identity token is (an OpenID `id_token`): kept outside too, though only the harness reads it. */
  readonly id?: string
  /** The hosts the access token may go to. */
  readonly hosts: readonly string[]
  /** The token endpoint the refresh goes to (`https://…`). */
  readonly refresh_url?: string
}

/** The real tokens, and the placeholders the account's file holds in their places. */
export interface Vault {
  readonly access: string
  readonly refresh?: string
  readonly id?: string
  readonly placeholders: { readonly access: string; readonly refresh?: string; readonly id?: string }
}

const VAULT = 'vault.json'
/** The directory of one account's vault: the credential proxy mounts it, and writes the refreshed tokens there. */
export const vaultDir = (omhState: string, harness: string, account: string) => statePath(omhState, 'logins', harness, account)
export const vaultFile = (dir: string) => path.join(dir, VAULT)

const at = (doc: unknown, dotted: string): unknown => dotted.split('.').reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), doc)

function put(doc: unknown, dotted: string, value: string): void {
  const keys = dotted.split('.')
  const parent = keys.slice(0, -1).reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), doc)
  if (parent && typeof parent === 'object') (parent as Record<string, unknown>)[keys.at(-1)!] = value
}

/**
 * A placeholder shaped like the token it stands for, so the harness takes it: the same leading words
 * (`sk-ant-oat01-`); for a JWT, which a harness decodes for its claims and expiry (Codex does), the
 * same header and claims with omh's mark for a signature. The signature is what makes a JWT worth
 * anything; the mark and its random hex make the placeholder worth nothing anywhere.
 */
export function placeholderFor(token: string): string {
  const mark = `omh-login-${randomBytes(16).toString('hex')}`
  const jwt = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]+$/.exec(token)
  if (jwt && isJsonObject(jwt[1]!) && isJsonObject(jwt[2]!)) return `${jwt[1]}.${jwt[2]}.${mark}`
  const prefix = /^((?:[A-Za-z0-9]+-){1,4})/.exec(token)?.[1] ?? ''
  return `${prefix}${mark}`
}

/** One placeholder, as the file holds it and as the vault does: a JWT-shaped one is known by its mark, its claims following each refresh. */
export function samePlaceholder(held: string, kept: string): boolean {
  const mark = (p: string) => /\.(omh-login-[0-9a-f]{32})$/.exec(p)?.[1]
  return held === kept || (mark(held) !== undefined && mark(held) === mark(kept))
}

function isJsonObject(base64url: string): boolean {
  try {
    const value: unknown = JSON.parse(Buffer.from(base64url, 'base64url').toString('utf8'))
    return typeof value === 'object' && value !== null
  } catch {
    return false
  }
}

async function readJson(file: string, limit = 1024 * 1024): Promise<unknown> {
  const found = await lstat(file).catch(() => undefined)
  if (!found?.isFile() || found.size > limit) return undefined
  try {
    return JSON.parse(await readFile(file, 'utf8'))
  } catch {
    return undefined
  }
}

export async function readVault(dir: string): Promise<Vault | undefined> {
  const read = (await readJson(vaultFile(dir))) as Partial<Vault> | undefined
  return typeof read?.access === 'string' && typeof read.placeholders?.access === 'string' ? (read as Vault) : undefined
}

/** Writes `text` whole, by a rename over the file, with `mode`, and the owner the file had: the agent reads its own login. */
async function replace(file: string, text: string, mode: number): Promise<void> {
  const before = await lstat(file).catch(() => undefined)
  const temporary = `${file}.omh-${process.pid}`
  await writeFile(temporary, text, { mode })
  await chmod(temporary, mode)
  if (before && (before.uid !== process.getuid?.() || before.gid !== process.getgid?.())) await chown(temporary, before.uid, before.gid).catch(() => undefined)
  await rename(temporary, file)
}

export type Kept = { readonly vault: Vault } | { readonly none: 'no login' } | { readonly lost: string }

/**
 * Moves the login in the account's file (`accountFile`, the host's side of `facts.file`) into the
 * vault in `vaultDirectory`, leaving placeholders; a file that already holds the vault's
 * placeholders is left as it is. A login made anew in a session (real tokens where the placeholders were) replaces the
 * vault's. `lost`: the file holds placeholders the vault does not know, so the login is gone.
 */
export async function keepLoginOutside(accountFile: string, vaultDirectory: string, facts: LoginFacts): Promise<Kept> {
  const dir = vaultDirectory
  const doc = await readJson(accountFile)
  const access = at(doc, facts.access)
  if (typeof access !== 'string' || access === '') return { none: 'no login' }
  const refresh = facts.refresh ? at(doc, facts.refresh) : undefined
  const id = facts.id ? at(doc, facts.id) : undefined
  const kept = await readVault(dir)
  if (kept && samePlaceholder(access, kept.placeholders.access)) return { vault: kept }
  if (/omh-login-[0-9a-f]{32}$/.test(access)) return { lost: `${accountFile} holds placeholders of a login omh no longer keeps` }
  const given = (value: unknown): value is string => typeof value === 'string' && value !== ''
  const placeholders = {
    access: kept?.placeholders.access ?? placeholderFor(access),
    ...(given(refresh) ? { refresh: kept?.placeholders.refresh ?? placeholderFor(refresh) } : {}),
    // A new identity token may carry new claims: its placeholder is made from it each time.
    ...(given(id) ? { id: placeholderFor(id) } : {}),
  }
  const vault: Vault = { access, ...(given(refresh) ? { refresh } : {}), ...(given(id) ? { id } : {}), placeholders }
  await mkdir(dir, { recursive: true, mode: 0o700 })
  // The vault first: a failure between the two leaves the real tokens in both places, never in neither.
  await replace(vaultFile(dir), `${JSON.stringify(vault, null, 2)}\n`, 0o600)
  put(doc, facts.access, placeholders.access)
  if (facts.refresh && placeholders.refresh) put(doc, facts.refresh, placeholders.refresh)
  if (facts.id && placeholders.id) put(doc, facts.id, placeholders.id)
  const mode = ((await lstat(accountFile)).mode & 0o777) | 0o600
  await replace(accountFile, `${JSON.stringify(doc, null, 2)}\n`, mode)
  return { vault }
}

/** A login a launch keeps outside: the adapter's facts, the account's file on the host, and its vault. */
export interface PlannedLogin {
  readonly facts: LoginFacts
  /** The host's side of `facts.file`, in the account's directory. */
  readonly accountFile: string
  /** The vault's directory. */
  readonly vault: string
  /** `<harness>/<account>`, for what the proxy says. */
  readonly name: string
}

/** The adapter's logins the account's files hold: real tokens, or the placeholders of a vault. */
export async function plannedLogins(facts: readonly LoginFacts[], hostPath: (guest: string) => string, vault: string, name: string): Promise<PlannedLogin[]> {
  const out: PlannedLogin[] = []
  for (const login of facts) {
    const accountFile = hostPath(login.file)
    const access = at(await readJson(accountFile), login.access)
    if (typeof access === 'string' && access !== '') out.push({ facts: login, accountFile, vault, name })
  }
  return out
}

/**
 * Puts the real tokens back in the account's file: for a session whose proxy cannot reach the vault
 * (an engine that does not share this disk), which then holds its login inside, as before.
 */
export async function restoreLogin(login: PlannedLogin): Promise<void> {
  const vault = await readVault(login.vault)
  const doc = await readJson(login.accountFile)
  const held = at(doc, login.facts.access)
  if (!vault || typeof held !== 'string' || !samePlaceholder(held, vault.placeholders.access)) return
  put(doc, login.facts.access, vault.access)
  if (login.facts.refresh && vault.refresh) put(doc, login.facts.refresh, vault.refresh)
  if (login.facts.id && vault.id) put(doc, login.facts.id, vault.id)
  const mode = ((await lstat(login.accountFile)).mode & 0o777) | 0o600
  await replace(login.accountFile, `${JSON.stringify(doc, null, 2)}\n`, mode)
}
