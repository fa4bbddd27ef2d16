import { createHash } from 'node:crypto'
import { chmod, readFile, realpath } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import * as z from 'zod/mini'
import { FILE_UNREADABLE, OmhError, REPOSITORY_UNTRUSTED, type Problem } from '@omh/plugin-api'
import { parseJson, tomlLocator, type KeyPath, type Position } from '@omh/plugin-kit'
import { replaceFile, snapshot, type FileSnapshot } from './files.js'
import { statePath } from './locations.js'

/**
 * Why a file of a repository needs the user's trust:
 * - `code`: JavaScript read as settings (`omh.config.{js,mjs,cjs}`, or a file a settings file `$import`s);
 * - `settings`: a settings file that names plugins or pulls in code;
 * - `plugin`: a plugin module those settings name, or one a package name resolves to inside the repository;
 * - `sandbox`: a settings file that widens the sandbox: a wider way out, higher limits, more of
 *   the user's files, an image or a build step of the repository's choosing;
 * - `environment`: an image definition omh would build, with network (a devcontainer.json, the
 *   Containerfile it or `[image] containerfile` names). Only what builds a session waits for it.
 */
export type TrustReason = 'code' | 'settings' | 'plugin' | 'sandbox' | 'environment'

/** A file that needs trust, and where it says why. */
export interface TrustSubject {
  readonly file: string
  readonly reason: TrustReason
  /** The key that makes a settings file load code (`plugins`, `omh.plugins`, `$import`), or the first that widens the sandbox. */
  readonly key?: KeyPath
  /** For `sandbox`: every key that widens it. */
  readonly widens?: readonly KeyPath[]
}

export interface TrustFile extends TrustSubject {
  readonly sha256: string
  /** `trusted`: recorded with this content; `changed`: recorded with other content; `new`: never recorded. */
  readonly state: 'trusted' | 'changed' | 'new'
}

/** What the user's records say of the files a repository would run. */
export interface RepositoryTrust {
  /** The repository root's real path, which keys its record. */
  readonly repository: string
  /** The root as omh found it; file paths are under it. */
  readonly root: string
  readonly store: string
  readonly files: readonly TrustFile[]
  /** Every file that loads code is recorded with its present content; true when none loads code. */
  readonly trusted: boolean
}

const storeSchema = z.object({
  version: z.literal(1),
  repositories: z.record(z.string(), z.object({ trusted: z.string(), files: z.record(z.string(), z.string()) })),
})
type Store = z.infer<typeof storeSchema>

/**
 * The user's trust records, one file for every repository. It sits with the
 * rest of omh's state in `$OMH_STATE`, which no repository and no sandbox can
 * write.
 */
export const trustStoreOf = (omhState: string): string => statePath(omhState, 'trust.json')

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** A file's key in a record: its path from the root, with `/`, so a record reads the same everywhere. */
const keyOf = (root: string, file: string) => path.relative(root, file).split(path.sep).join('/')

/** Hashes each subject and compares it with the record of the repository at `root`. */
export async function repositoryTrust(root: string, omhState: string, subjects: readonly TrustSubject[]): Promise<RepositoryTrust> {
  const store = trustStoreOf(omhState)
  const repository = await realpath(root)
  const recorded = subjects.length ? (parseStore(await snapshot(store)).repositories[repository]?.files ?? {}) : {}
  // A settings file may both load code and widen the sandbox: one entry per reason, one hash per file.
  const unique = subjects.filter((s, n) => subjects.findIndex((o) => o.file === s.file && o.reason === s.reason) === n)
  const files = await Promise.all(
    unique.map(async (subject): Promise<TrustFile> => {
      const hash = sha256(await readSubject(subject.file))
      const was = recorded[keyOf(root, subject.file)]
      return { ...subject, sha256: hash, state: was === undefined ? 'new' : was === hash ? 'trusted' : 'changed' }
    }),
  )
  return { repository, root, store, files, trusted: files.every((f) => f.state === 'trusted') }
}

/** REPOSITORY_UNTRUSTED naming every file not trusted with its present content; nothing when all are. */
export function assertTrusted(trust: RepositoryTrust): void {
  const pending = trust.files.filter((f) => f.state !== 'trusted')
  if (!pending.length) return
  const problems = pending.map((f): Problem => {
    const at = f.key && locate(f.file, f.key)
    return {
      file: f.file,
      ...(at ? { line: at.line, column: at.column } : {}),
      ...(f.key ? { path: f.key.join('.') } : {}),
      message: `${WHY[f.reason]}${f.widens && f.widens.length > 1 ? `, as ${f.widens.slice(1).map((k) => k.join('.')).join(', ')} ${f.widens.length > 2 ? 'do' : 'does'}` : ''}; ${f.state === 'changed' ? 'changed since you trusted it' : 'not trusted yet'}`,
    }
  })
  throw OmhError.of(REPOSITORY_UNTRUSTED, {
    args: [trust.root, pending.length],
    hintArgs: [trust.root],
    problems,
    details: { repository: trust.repository, files: pending.map(({ file, reason, sha256, state, widens }) => ({ file, reason, sha256, state, ...(widens ? { widens: widens.map((k) => k.join('.')) } : {}) })) },
  })
}

export const WHY: Readonly<Record<TrustReason, string>> = {
  code: 'JavaScript omh would run as settings',
  settings: 'settings that load code',
  plugin: 'a plugin module',
  sandbox: 'settings that widen the sandbox',
  environment: 'an image definition omh would build, with network',
}

/** Records the present content of every file of `trust` as trusted; files recorded before keep their record. */
export async function recordTrust(trust: RepositoryTrust, now = new Date()): Promise<void> {
  const before = await snapshot(trust.store)
  const store = parseStore(before)
  const files = { ...store.repositories[trust.repository]?.files }
  for (const f of trust.files) files[keyOf(trust.root, f.file)] = f.sha256
  store.repositories[trust.repository] = { trusted: now.toISOString(), files }
  await writeStore(before, store)
}

/** Forgets the record of the repository at `root`; false when there was none. */
export async function revokeTrust(root: string, omhState: string): Promise<boolean> {
  const repository = await realpath(root)
  const before = await snapshot(trustStoreOf(omhState))
  const store = parseStore(before)
  if (!store.repositories[repository]) return false
  delete store.repositories[repository]
  await writeStore(before, store)
  return true
}

function parseStore(before: FileSnapshot): Store {
  if (!before.bytes) return { version: 1, repositories: {} }
  let data: unknown
  try {
    data = JSON.parse(before.bytes.toString('utf8'))
  } catch (error) {
    throw OmhError.of(FILE_UNREADABLE, { args: [before.file, `it is not JSON (${(error as Error).message})`], cause: error })
  }
  const parsed = z.safeParse(storeSchema, data)
  if (!parsed.success) {
    throw OmhError.of(FILE_UNREADABLE, { args: [before.file, 'it is not a trust record omh wrote'], cause: parsed.error })
  }
  return parsed.data
}

async function writeStore(before: FileSnapshot, store: Store): Promise<void> {
  const repositories = Object.fromEntries(Object.entries(store.repositories).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
  await replaceFile(before, `${JSON.stringify({ version: 1, repositories }, null, 2)}\n`, 0o600)
  // replaceFile keeps an existing file's mode; these records are for the user's eyes alone, whatever made them wider.
  await chmod(before.file, 0o600)
}

async function readSubject(file: string): Promise<Buffer> {
  try {
    return await readFile(file)
  } catch (error) {
    throw OmhError.of(FILE_UNREADABLE, { args: [file, (error as Error).message], cause: error })
  }
}

/** Where a settings file writes `key`, for the report; only read when something is refused. */
function locate(file: string, key: KeyPath): Position | undefined {
  try {
    const source = readFileSync(file, 'utf8')
    if (file.endsWith('.toml')) return tomlLocator(source)(key)
    const json = parseJson(source, file)
    return json.ok ? json.doc.locate(key) : undefined
  } catch {
    return undefined
  }
}
