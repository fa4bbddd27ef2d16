import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { UNSIGNED, git, type GitOptions } from '../host/git.js'
import { SANDBOX_AUTHOR } from '../host/layout.js'

type Env = Readonly<Record<string, string | undefined>>

/** Where the shadow git directory appears inside the container. */
export const GUEST_SHADOW = '/omh/shadow'

/** What the agent reads in `git log` inside the sandbox: whose repository this is, and how its work reaches a person. */
export const ARRANGEMENT = `This repository belongs to the sandbox. It holds one commit, the files as the
session started, and none of the project's history; it has no remote.

Commit here as often as you like. When the person you work with runs
\`omh sessions commit\`, the commits on this repository's HEAD land on the
session's branch with your messages (a merge lands as one commit), followed by
whatever you left uncommitted in /work. They review it with
\`omh sessions diff\`.`

/** The pointer a container finds at `/work/.git`: the shadow, not the checkout's repository. */
export const GITFILE = `gitdir: ${GUEST_SHADOW}\n`

/**
 * Creates the sandbox's own git directory for a worktree: one parentless
 * commit of the worktree's files, authored by the sandbox, nothing from the
 * user's refs. Built beside its final place and renamed in, so a failure
 * leaves nothing a later launch could mistake for a shadow. The git
 * directory is made while `filled` (the worktree's checkout) is on its way;
 * its files are read once that resolves, and nothing is left if it rejects.
 */
export async function createShadow(shadow: string, worktree: string, exclude: readonly string[], env: Env, filled: Promise<unknown> = Promise.resolve()): Promise<void> {
  // Its failure is heard where the files are needed, not as a rejection nobody handled meanwhile.
  filled.catch(() => undefined)
  const building = `${shadow}.building-${process.pid}`
  await rm(building, { recursive: true, force: true })
  await mkdir(path.dirname(shadow), { recursive: true })
  const at = { cwd: worktree, env, trust: [worktree, building] }
  const scoped = (args: string[]) => ['--git-dir', building, '--work-tree', worktree, ...args]
  try {
    await git(['init', '--quiet', '--bare', '--template=', '--initial-branch=sandbox', building], { ...at, cwd: path.dirname(shadow) })
    await configure(building, at)
    await writeExclude(building, exclude)
    await filled
    await git(scoped(['add', '--all', '.']), at)
    await git(
      // A repository of one commit has nothing to maintain: no `maintenance run --auto` after it.
      scoped([...UNSIGNED, '-c', 'maintenance.auto=false', 'commit', '--quiet', '--no-verify', '--allow-empty', '--message', `The session starts here.\n\n${ARRANGEMENT}`]),
      {
        ...at,
        extraEnv: {
          GIT_AUTHOR_NAME: SANDBOX_AUTHOR.name,
          GIT_AUTHOR_EMAIL: SANDBOX_AUTHOR.email,
          GIT_COMMITTER_NAME: SANDBOX_AUTHOR.name,
          GIT_COMMITTER_EMAIL: SANDBOX_AUTHOR.email,
        },
      },
    )
    await rename(building, shadow)
  } catch (error) {
    await rm(building, { recursive: true, force: true })
    throw error
  }
}

/**
 * A git directory with a work tree (set per call, never stored: the host's
 * path means nothing inside the container), whose own commits are the
 * sandbox's. `init` has just written the config file, so it is edited in one
 * write rather than by three more git processes; a file not as expected is
 * left to git.
 */
async function configure(gitDir: string, at: GitOptions): Promise<void> {
  const file = path.join(gitDir, 'config')
  const written = await readFile(file, 'utf8')
  const notBare = written.replace(/^(\s*bare\s*=\s*)true[ \t]*$/m, '$1false')
  if (notBare !== written && !/^\s*\[user\]/m.test(written)) {
    const user = `[user]\n\tname = ${SANDBOX_AUTHOR.name}\n\temail = ${SANDBOX_AUTHOR.email}\n`
    await writeFile(file, `${notBare}${notBare.endsWith('\n') ? '' : '\n'}${user}`)
    return
  }
  await git(['--git-dir', gitDir, 'config', 'core.bare', 'false'], at)
  await git(['--git-dir', gitDir, 'config', 'user.name', SANDBOX_AUTHOR.name], at)
  await git(['--git-dir', gitDir, 'config', 'user.email', SANDBOX_AUTHOR.email], at)
}

/**
 * The shadow's exclude list follows the mounts: every path omh mounts into
 * `/work`, so the agent's `git status` does not offer omh's files as its
 * work. Rewritten on every launch because the mounts change with the profile.
 */
export async function writeExclude(shadow: string, worktreePaths: readonly string[]): Promise<void> {
  await mkdir(path.join(shadow, 'info'), { recursive: true })
  const lines = ['# Written by omh on every launch: the files omh mounts into /work.', ...worktreePaths.map((p) => `/${escapeGlob(p)}`)]
  await writeFile(path.join(shadow, 'info', 'exclude'), `${lines.join('\n')}\n`)
}

const escapeGlob = (p: string) => p.replace(/[*?[\]\\!#]/g, (c) => `\\${c}`)

/**
 * Keeps what omh mounts into `/work` out of the agent's `git status`: an
 * untracked mountpoint by the exclude list, and a file the repository tracks
 * (a project's own AGENTS.md, with the composed rules mounted over it) by
 * marking it skip-worktree in the sandbox's index, so the agent starts on a
 * clean tree. The marks follow the mounts; `marked` notes the paths last
 * marked, so a launch whose mounts did not change runs no git at all (and
 * stays fit to be kept: bin/record.js keeps a launch that ran only its exec).
 */
export async function hideMounts(shadow: string, worktree: string, worktreePaths: readonly string[], env: Env, marked?: string): Promise<void> {
  await writeExclude(shadow, worktreePaths)
  const note = `${JSON.stringify(worktreePaths)}\n`
  if (marked && (await readFile(marked, 'utf8').catch(() => '')) === note) return
  await markTracked(shadow, worktree, worktreePaths, env)
  if (marked) await writeFile(marked, note)
}

async function markTracked(shadow: string, worktree: string, worktreePaths: readonly string[], env: Env): Promise<void> {
  const at = { cwd: worktree, env, trust: [worktree, shadow] }
  const scoped = (args: string[]) => ['--git-dir', shadow, '--work-tree', worktree, ...args]
  const literal = worktreePaths.filter((p) => p !== '.git').map((p) => `:(literal)${p}`)
  if (!literal.length) return
  const tracked = (await git(scoped(['ls-files', '-z', '--', ...literal]), at)).split('\0').filter(Boolean)
  if (tracked.length) await git(scoped(['update-index', '--skip-worktree', '--', ...tracked]), at)
}
