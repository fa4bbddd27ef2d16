/**
 * A fingerprint of a build context: every file git would show in the
 * directory (tracked, changed or new, ignored ones left out), by content. A
 * repository's own Containerfile copies files in, so its image changes when
 * they do, and only then; git's index answers for the files that did not
 * change, so a large repository costs a few git calls, not a read of it all.
 */
import { createHash } from 'node:crypto'
import path from 'node:path'
import { GIT_FAILED, OmhError } from '@omh/plugin-api'
import { tryGit } from '../host/git.js'

type Env = Readonly<Record<string, string | undefined>>

export async function contextFingerprint(root: string, dir: string, env: Env): Promise<string> {
  const at = { cwd: root, env, agentFiles: true }
  const rel = path.relative(root, dir) || '.'
  const pathspec = ['--', `:(literal)${rel}`]
  const [staged, changed, untracked] = await Promise.all([
    tryGit(['ls-files', '-s', '-z', ...pathspec], at),
    tryGit(['diff-files', '--name-only', '-z', '--ignore-submodules=all', ...pathspec], at),
    tryGit(['ls-files', '-o', '--exclude-standard', '-z', ...pathspec], at),
  ])
  for (const r of [staged, changed, untracked]) {
    if (!r.ok) throw OmhError.of(GIT_FAILED, { args: [`reading the build context ${rel}`, r.stderr.trim().split('\n').pop() ?? ''], hintArgs: [root] })
  }
  const fresh = [...new Set([...changed.stdout.split('\0'), ...untracked.stdout.split('\0')].filter(Boolean))].sort()
  const hashed = fresh.length
    ? await tryGit(['hash-object', '--no-filters', '--stdin-paths'], { ...at, input: fresh.map((f) => `${f}\n`).join('') })
    : { ok: true, stdout: '', stderr: '', code: 0 }
  // A changed file that is gone (deleted, not yet staged) has nothing to hash: it counts as gone.
  const ids = hashed.ok ? hashed.stdout.split('\n') : fresh.map(() => 'gone')
  const hash = createHash('sha256').update(staged.stdout)
  fresh.forEach((file, n) => hash.update(`\0${file}\0${ids[n] ?? 'gone'}`))
  return hash.digest('hex').slice(0, 16)
}
