/**
 * Pushing a session's branch from the host, with the user's git and credentials, and the forge's
 * page that compares it with its base.
 */
import { OmhError, REMOTE_UNKNOWN } from '@omh/plugin-api'
import { gitFailure, git, tryGit, type GitOptions } from '../host/git.js'
import { branchOf } from '../host/layout.js'
import type { Repository } from '../host/repo.js'

type Env = Readonly<Record<string, string | undefined>>

/** What `pushSession` did. */
export interface Pushed {
  readonly remote: string
  /** The remote's URL, with any password in it left out. */
  readonly url: string
  readonly branch: string
  readonly commit: string
  /** Where the forge shows the branch against the base, when the remote is one omh knows. */
  readonly compare: string | undefined
}

/**
 * Pushes `omh/<sid>` to the same name on a remote of the user's repository:
 * the one named, else the one the branch tracks, else `origin`, else the only
 * one. Runs on the host, in the user's repository, whose config and remotes
 * are the user's (the agent never sees them). Hooks stay off as for every
 * host git call: the branch holds what the agent wrote.
 */
export async function pushSession(repo: Repository, sid: string, wanted: string | undefined, baseName: string | undefined, env: Env): Promise<Pushed> {
  const branch = branchOf(sid)
  // A remote may be a path on this machine: the user's own config names it, so the file protocol is theirs to use.
  // How the user reaches their remotes is theirs too: the ssh and askpass variables host git otherwise drops come back for the push.
  const reach = Object.fromEntries(['GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_ASKPASS', 'GIT_SSH_VARIANT'].flatMap((k) => (env[k] ? [[k, env[k]]] : [])))
  const at: GitOptions = { cwd: repo.root, env, extraEnv: reach }
  const run = (args: string[]) => git(['-c', 'protocol.file.allow=always', ...args], at).catch(gitFailure(`pushing ${branch}`, repo.root))
  const remotes = (await run(['remote'])).split('\n').filter(Boolean)
  const tracked = (await tryGit(['config', '--get', `branch.${branch}.remote`], at)).stdout.trim()
  const remote = wanted ?? (remotes.includes(tracked) ? tracked : remotes.includes('origin') ? 'origin' : remotes.length === 1 ? remotes[0] : undefined)
  if (!remote || !remotes.includes(remote)) throw OmhError.of(REMOTE_UNKNOWN, { args: [repo.root, wanted, remotes], hintArgs: [remotes] })
  const commit = (await run(['rev-parse', '--verify', `refs/heads/${branch}^{commit}`])).trim()
  await run(['push', '--quiet', '--porcelain', remote, `refs/heads/${branch}:refs/heads/${branch}`])
  const url = (await run(['remote', 'get-url', remote])).trim()
  const base = baseName?.replace(/^[^/]+\//, (prefix) => (remotes.includes(prefix.slice(0, -1)) ? '' : prefix))
  return { remote, url: withoutPassword(url), branch, commit, compare: base ? compareUrl(url, base, branch) : undefined }
}

const withoutPassword = (url: string) => url.replace(/^([a-z+]+:\/\/[^/@:]+):[^/@]*@/i, '$1@')

/** A forge: where its web pages live for a repository, and how it writes "this branch against that one". */
interface Forge {
  readonly compare: (web: string, base: string, branch: string) => string
}

const github: Forge = { compare: (web, base, branch) => `${web}/compare/${enc(base)}...${enc(branch)}?expand=1` }
const gitlab: Forge = { compare: (web, base, branch) => `${web}/-/compare/${enc(base)}...${enc(branch)}` }
const bitbucket: Forge = { compare: (web, base, branch) => `${web}/branches/compare/${enc(branch)}%0D${enc(base)}` }
const gitea: Forge = { compare: (web, base, branch) => `${web}/compare/${enc(base)}...${enc(branch)}` }

/** Slashes stay: every forge above reads `omh/s01` in a path as the branch name. */
const enc = (ref: string) => ref.split('/').map(encodeURIComponent).join('/')

/** The forge a host is: the public ones by name, a self-hosted one by its usual name (`gitlab.example.com`). */
function forgeOf(host: string): Forge | undefined {
  if (host === 'github.com' || host.startsWith('github.')) return github
  if (host === 'gitlab.com' || host.startsWith('gitlab.')) return gitlab
  if (host === 'bitbucket.org') return bitbucket
  if (host === 'codeberg.org' || host.startsWith('gitea.') || host.startsWith('forgejo.') || host.startsWith('codeberg.')) return gitea
  return undefined
}

/**
 * The page comparing `branch` with `base` on the forge `remoteUrl` points
 * at, or undefined when omh does not know the forge. Understands
 * `https://host/owner/repo(.git)`, `ssh://[user@]host[:port]/owner/repo(.git)`
 * and scp-like `user@host:owner/repo(.git)`.
 */
export function compareUrl(remoteUrl: string, base: string, branch: string): string | undefined {
  let host: string
  let repoPath: string
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/)(.+)$/.exec(remoteUrl)
  if (/^[a-z+]+:\/\//i.test(remoteUrl)) {
    let parsed: URL
    try {
      parsed = new URL(remoteUrl)
    } catch {
      return undefined
    }
    if (!/^(https?|ssh|git\+ssh|ssh\+git|git):$/.test(parsed.protocol)) return undefined
    host = parsed.hostname
    repoPath = parsed.pathname
  } else if (scp) {
    host = scp[1]!
    repoPath = scp[2]!
  } else return undefined
  const forge = forgeOf(host.toLowerCase())
  const clean = repoPath.replace(/^\/+|\/+$/g, '').replace(/\.git$/, '')
  if (!forge || !/^[\w.-]+(\/[\w.-]+)+$/.test(clean)) return undefined
  return forge.compare(`https://${host.toLowerCase()}/${clean}`, base, branch)
}
