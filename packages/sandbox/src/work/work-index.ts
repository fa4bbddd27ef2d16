/**
 * Staging a session's worktree into a throwaway index, as diff and commit do: what is taken, what
 * is left out (omh's files, repositories of the agent's own), and what is too large to take.
 */
import { GIT_FAILED, OmhError, SESSION_FILE_TOO_LARGE } from '@omh/plugin-api'
import { GitError, tryGit, type GitOptions } from '../host/git.js'
import { MAX_BLOB_BYTES } from './history.js'
import type { Repository } from '../host/repo.js'

/** Pathspecs for "everything but omh's files". */
export const excluding = (omh: readonly string[]): string[] => ['.', ...omh.map((p) => `:(exclude,literal)${p}`)]

/** GIT_FAILED naming the repository git failed in: the worktree, the user's checkout, or wherever `at` ran. */
export const failed = (doing: string, at: GitOptions, error: GitError) =>
  OmhError.of(GIT_FAILED, { args: [doing, error.result.stderr.trim().split('\n').pop() ?? ''], hintArgs: [at.cwd], cause: error })

export async function must(doing: string, _repo: Repository, args: string[], at: GitOptions): Promise<string> {
  const r = await tryGit(args, at)
  if (!r.ok) throw failed(doing, at, new GitError(args, r))
  return r.stdout
}

/**
 * Stages every file of the worktree into the index `at` names, omh's left
 * out. An exclude that names a file git ignores anyway (a carried `.env`) is
 * dropped first: git refuses an exclude of an ignored file with "Use -f".
 * Resolves the paths left out because they hold a repository of their own.
 */
export async function addAll(doing: string, repo: Repository, at: GitOptions, omh: readonly string[], against: string, only: readonly string[] = []): Promise<string[]> {
  let excluded = omh
  if (omh.length) {
    const ignored = await tryGit(['check-ignore', '-z', '--stdin'], { ...at, input: omh.map((p) => `${p}\0`).join('') })
    if (!ignored.ok && ignored.code !== 1) throw failed(doing, at, new GitError(['check-ignore'], ignored))
    const skip = new Set(ignored.stdout.split('\0').filter(Boolean))
    excluded = omh.filter((p) => !skip.has(p))
  }
  const pathspecs = only.length ? [...only.map((p) => `:(literal)${p}`), ...excluding(excluded).slice(1)] : excluding(excluded)
  await must(doing, repo, ['add', '--all', '--', ...pathspecs], at)
  return dropGitlinks(doing, repo, at, against)
}

/**
 * Puts back every gitlink `add` brought into the index or changed: a
 * repository inside the worktree is the agent's (its HEAD a commit your
 * repository does not have), so omh carries none, and never looks inside.
 * Resolves the paths it put back.
 */
async function dropGitlinks(doing: string, repo: Repository, at: GitOptions, against: string): Promise<string[]> {
  const raw = await must(doing, repo, ['diff-index', '--cached', '--raw', '-z', '--no-renames', '--ignore-submodules=none', against], at)
  const parts = raw.split('\0')
  const back: string[] = []
  const left: string[] = []
  for (let n = 0; n + 1 < parts.length; n += 2) {
    const m = /^:(\d{6}) (\d{6}) ([0-9a-f]+) ([0-9a-f]+) [A-Z]\d*$/.exec(parts[n]!)
    if (!m || m[2] !== '160000') continue
    const file = parts[n + 1]!
    left.push(file)
    back.push(/^0+$/.test(m[1]!) ? `0 ${'0'.repeat(m[3]!.length)}\t${file}` : `${m[1]} ${m[3]}\t${file}`)
  }
  if (back.length) await must(doing, repo, ['update-index', '-z', '--index-info'], { ...at, input: `${back.join('\0')}\0` })
  return left
}

/**
 * SESSION_FILE_TOO_LARGE for the first file staged since `against` over the bound an agent's own
 * commits have: what the agent left uncommitted may bring no more into your repository.
 */
export async function refuseLargeFiles(doing: string, repo: Repository, at: GitOptions, against: string, sid: string): Promise<void> {
  const raw = await must(doing, repo, ['diff-index', '--cached', '--raw', '-z', '--no-renames', against], at)
  const parts = raw.split('\0')
  const staged = new Map<string, string>()
  for (let n = 0; n + 1 < parts.length; n += 2) {
    const m = /^:\d{6} (\d{6}) [0-9a-f]+ ([0-9a-f]+) [A-Z]\d*$/.exec(parts[n]!)
    if (m && m[1] !== '000000' && m[1] !== '160000' && !staged.has(m[2]!)) staged.set(m[2]!, parts[n + 1]!)
  }
  if (!staged.size) return
  const sizes = await must(doing, repo, ['cat-file', '--batch-check=%(objectname) %(objectsize)'], { ...at, input: [...staged.keys()].map((o) => `${o}\n`).join('') })
  for (const line of sizes.split('\n')) {
    const [object, size] = line.split(' ')
    if (object && Number(size) > MAX_BLOB_BYTES) {
      const file = staged.get(object)!
      throw OmhError.of(SESSION_FILE_TOO_LARGE, { args: [file, sid, Number(size), MAX_BLOB_BYTES], hintArgs: [sid, file] })
    }
  }
}

