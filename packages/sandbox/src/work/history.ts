/**
 * The agent's own commits, read on the host from the session's sandbox repository without trusting
 * it: each commit's changes checked (sizes, modes, submodules) before `sessions commit` keeps them.
 */
import { lstat, readdir, readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { OmhError, SANDBOX_HISTORY_REFUSED } from '@omh/plugin-api'
import { GitError, tryGit, type GitOptions } from '../host/git.js'
import { SANDBOX_AUTHOR } from '../host/layout.js'

/** The subject of the commit every sandbox repository starts with; it holds the files as the session began, not the agent's work. */
export const SEED_SUBJECT = 'The session starts here.'

/** More commits than a person would review one by one; `--squash` takes the files instead. */
export const MAX_KEPT_COMMITS = 1000

/** The largest file an agent's commit may bring into your repository (GitHub refuses larger ones). */
export const MAX_BLOB_BYTES = 100 * 1024 * 1024

const SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/

/** The mode git gives a directory that is a commit of another repository (a submodule). */
const GITLINK = '160000'

/** One commit of the agent's, read from the sandbox repository. */
export interface AgentCommit {
  readonly sha: string
  /** The first parent, or undefined for a commit without one. */
  readonly parent: string | undefined
  readonly message: string
  /** `<seconds> <±hhmm>` when the commit gave a date git can use again. */
  readonly date: string | undefined
  readonly changes: readonly Change[]
}

/** A path an agent's commit changed: its new mode and object, or mode `0` when it was removed. */
export interface Change {
  readonly path: string
  readonly mode: string
  readonly object: string
}

/** The sandbox repository as the host reads it: its objects, reached as an alternate of the user's repository. */
export interface SandboxHistory {
  /** The commit the sandbox's HEAD names, or undefined when it has none (or no sandbox repository). */
  readonly head: string | undefined
  /** The environment that lets host git read the sandbox's objects. */
  readonly extraEnv: Readonly<Record<string, string>>
  /** The agent's commits not yet carried, oldest first. */
  readonly commits: readonly AgentCommit[]
  /** Paths the agent's commits made gitlinks (a repository inside the sandbox's): never carried. */
  readonly leftOut: readonly string[]
}

const refuse = (sid: string, why: string) => OmhError.of(SANDBOX_HISTORY_REFUSED, { args: [sid, why], hintArgs: [sid] })

/**
 * Reads the agent's commits from a sandbox repository without trusting it:
 * the agent writes every byte of it. Host git never opens it as a repository
 * (its config, hooks, `commondir` and refs would all be the agent's); omh
 * resolves HEAD itself and lends only the object store to the user's
 * repository, after checking that nothing in it is a link and that it
 * borrows from no other store.
 */
export async function readSandboxHistory(
  shadow: string,
  sid: string,
  carried: string | undefined,
  omh: (p: string) => boolean,
  at: GitOptions,
  limits: { readonly commits: number; readonly blobBytes: number } = { commits: MAX_KEPT_COMMITS, blobBytes: MAX_BLOB_BYTES },
): Promise<SandboxHistory> {
  const head = await readHead(shadow, sid)
  if (!head) return { head: undefined, extraEnv: {}, commits: [], leftOut: [] }
  const objects = path.join(shadow, 'objects')
  await checkObjectStore(objects, sid)
  const extraEnv = { ...at.extraEnv, GIT_ALTERNATE_OBJECT_DIRECTORIES: objects }
  const withObjects: GitOptions = { ...at, extraEnv }
  const run = async (args: string[], input?: string) => {
    const r = await tryGit(args, { ...withObjects, input })
    if (!r.ok) throw refuse(sid, `git could not read it (${new GitError(args, r).message})`)
    return r.stdout
  }

  // A carried commit the history no longer holds (the agent rewrote it) is no
  // limit: the commits since the histories parted are carried again, and
  // those whose change is already on the branch come out empty and are left out.
  const known = carried && SHA.test(carried) && (await tryGit(['cat-file', '-e', `${carried}^{commit}`], withObjects)).ok
  const log = await run(['log', '--no-show-signature', '--first-parent', '--reverse', '-z', '--date=raw', '--format=%H%n%P%n%ad%n%B', head, ...(known ? [`^${carried}`] : [])])
  const listed = parseLog(log, sid)
  if (listed.length > limits.commits + 1) throw refuse(sid, `it holds ${listed.length} commits, more than the ${limits.commits} omh keeps one by one`)

  const commits: AgentCommit[] = []
  const leftOut = new Set<string>()
  for (const [n, parsed] of listed.entries()) {
    const { sha } = parsed
    // The seed is the files as the session began: never the agent's work.
    if (!known && n === 0 && !parsed.parent && parsed.message.startsWith(SEED_SUBJECT)) continue
    const diff = await run(['diff-tree', '-r', '-z', '--no-renames', '--no-commit-id', ...(parsed.parent ? [parsed.parent, sha] : ['--root', sha])])
    const changes = parseDiffTree(diff).filter((c) => {
      if (c.mode !== GITLINK) return !omh(c.path)
      // A commit of another repository's: your repository has none of its objects, and host git must never open that repository.
      leftOut.add(c.path)
      return false
    })
    for (const c of changes) {
      if (!safePath(c.path)) throw refuse(sid, `commit ${sha.slice(0, 8)} names the path ${JSON.stringify(c.path)}, which cannot be in a repository`)
    }
    commits.push({ sha, parent: parsed.parent, message: parsed.message, date: parsed.date, changes })
  }
  if (commits.length > limits.commits) throw refuse(sid, `it holds ${commits.length} commits, more than the ${limits.commits} omh keeps one by one`)

  const blobs = [...new Set(commits.flatMap((c) => c.changes.filter((x) => x.mode !== '0').map((x) => x.object)))]
  if (blobs.length) {
    const sizes = await run(['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'], blobs.map((b) => `${b}\n`).join(''))
    for (const line of sizes.split('\n').filter(Boolean)) {
      const [object, type, size] = line.split(' ')
      if (type !== 'blob') throw refuse(sid, `the object ${object?.slice(0, 8)} an agent's commit names is ${type === 'missing' ? 'missing' : `a ${type}, not a file`}`)
      if (Number(size) > limits.blobBytes) {
        const where = commits.flatMap((c) => c.changes.filter((x) => x.object === object).map((x) => `${x.path} in ${c.sha.slice(0, 8)}`))[0]
        throw refuse(sid, `${where} is ${Number(size)} bytes, more than the ${limits.blobBytes} an agent's commit may bring in`)
      }
    }
  }
  return { head, extraEnv, commits, leftOut: [...leftOut].sort() }
}


/** HEAD of a sandbox repository, resolved by omh from its files: a commit, or undefined when there is none yet. */
export const sandboxHead = (shadow: string, sid: string): Promise<string | undefined> => readHead(shadow, sid)

async function readHead(shadow: string, sid: string): Promise<string | undefined> {
  const gitDir = await lstat(shadow).catch(() => undefined)
  if (!gitDir) return undefined
  if (!gitDir.isDirectory()) throw refuse(sid, `${shadow} is not a directory`)
  const head = await readSmall(path.join(shadow, 'HEAD'), sid)
  if (head === undefined) return undefined
  const value = head.trim()
  if (SHA.test(value)) return value
  const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(value)?.[1]
  if (!ref || ref.split('/').some((part) => part === '..' || part === '.' || part === '') || ref.includes('\\')) {
    throw refuse(sid, `its HEAD reads ${JSON.stringify(value.slice(0, 80))}, which names no branch`)
  }
  const loose = await readSmall(path.join(shadow, ref), sid)
  if (loose !== undefined) {
    if (!SHA.test(loose.trim())) throw refuse(sid, `${ref} holds no commit id`)
    return loose.trim()
  }
  const packed = await readSmall(path.join(shadow, 'packed-refs'), sid)
  for (const line of packed?.split('\n') ?? []) {
    const [sha, name] = line.split(' ')
    if (name === ref && sha && SHA.test(sha)) return sha
  }
  // A branch with no commit yet: nothing to carry.
  return undefined
}

/** A small regular file of the sandbox repository, or undefined when absent; a link or anything else is refused. */
async function readSmall(file: string, sid: string): Promise<string | undefined> {
  const stat = await lstat(file).catch(() => undefined)
  if (!stat) return undefined
  if (!stat.isFile()) throw refuse(sid, `${file} is not a regular file`)
  if (stat.size > 1024 * 1024) throw refuse(sid, `${file} is ${stat.size} bytes`)
  return readFile(file, 'utf8')
}

/**
 * The object store is lent to host git only as plain directories and files:
 * a link, or an `alternates` file, would let the agent's commits name
 * objects of any repository on this machine.
 */
async function checkObjectStore(objects: string, sid: string): Promise<void> {
  const top = await lstat(objects).catch(() => undefined)
  if (!top?.isDirectory()) throw refuse(sid, `${objects} is not a directory`)
  for (const entry of await readdir(objects, { withFileTypes: true })) {
    const full = path.join(objects, entry.name)
    if (entry.isSymbolicLink()) throw refuse(sid, `${full} is a link`)
    if (!entry.isDirectory()) continue
    for (const inner of await readdir(full, { withFileTypes: true })) {
      if (inner.isSymbolicLink()) throw refuse(sid, `${path.join(full, inner.name)} is a link`)
      if (entry.name === 'info' && /alternates$/.test(inner.name)) throw refuse(sid, `${path.join(full, inner.name)} borrows objects from elsewhere`)
    }
  }
}

/**
 * `git log -z` output: one record per commit, each checked before it is
 * believed, since the agent wrote the messages (a byte git would split on
 * shows as a record that is not a commit, and is refused).
 */
function parseLog(z: string, sid: string): { sha: string; parent: string | undefined; date: string | undefined; message: string }[] {
  const out = []
  for (const record of z.split('\0')) {
    if (!record) continue
    const [sha = '', parents = '', date = '', ...rest] = record.split('\n')
    if (!SHA.test(sha)) throw refuse(sid, 'a commit message holds a byte git cannot list')
    out.push({ sha, parent: parents.split(' ')[0] || undefined, date: /^\d{1,12} [+-]\d{4}$/.test(date) ? date : undefined, message: rest.join('\n') })
  }
  return out
}

function parseDiffTree(z: string): Change[] {
  const out: Change[] = []
  const parts = z.split('\0')
  for (let n = 0; n + 1 < parts.length; n += 2) {
    const m = /^:(\d{6}) (\d{6}) ([0-9a-f]+) ([0-9a-f]+) [A-Z]\d*$/.exec(parts[n]!)
    if (!m) continue
    const removed = /^0+$/.test(m[2]!)
    out.push({ path: parts[n + 1]!, mode: removed ? '0' : m[2]!, object: m[4]! })
  }
  return out
}

/** A path git would write into a repository: relative, no `.git`, `.` or `..` part. */
const safePath = (p: string): boolean =>
  p.length > 0 && !p.startsWith('/') && !p.includes('\\') && p.split('/').every((part) => part !== '' && part !== '.' && part !== '..' && part.toLowerCase() !== '.git')

/** Where omh notes the last sandbox commit it carried, so the next commit starts after it. */
export const carriedFile = (run: string): string => path.join(run, 'carried')

export async function readCarried(run: string): Promise<string | undefined> {
  const text = await readFile(carriedFile(run), 'utf8').catch(() => undefined)
  return text && SHA.test(text.trim()) ? text.trim() : undefined
}

export async function writeCarried(run: string, sha: string): Promise<void> {
  const file = carriedFile(run)
  await writeFile(`${file}.${process.pid}`, `${sha}\n`)
  await rename(`${file}.${process.pid}`, file)
}

/** The identity an agent's commit lands with: the sandbox, at the time the agent gave. */
export const agentIdentity = (date: string | undefined): Record<string, string> => ({
  GIT_AUTHOR_NAME: SANDBOX_AUTHOR.name,
  GIT_AUTHOR_EMAIL: SANDBOX_AUTHOR.email,
  ...(date ? { GIT_AUTHOR_DATE: `@${date}` } : {}),
})
