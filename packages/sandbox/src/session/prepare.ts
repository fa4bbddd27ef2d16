/**
 * What a harness's container needs before it starts, shared by the commands
 * that start one: a launch, `omh doctor` and `omh auth`.
 */
import { lstat, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { GUEST_WORK, type StagedEntry } from '@omh/plugin-api'
import { stage, type StageResult } from '../stage.js'
import { handToAgent } from '../host/ownership.js'
import type { CredentialMount, StagedMount } from './plan.js'
import { GITFILE } from './shadow.js'

/** The container's `/work/.git` names the shadow, so the agent's git never reaches the user's repository. */
export const withGitfile = (files: readonly StagedEntry[]): StagedEntry[] => [
  ...files,
  { kind: 'file', guest: `${GUEST_WORK}/.git`, content: GITFILE, mode: 0o644 },
]

/**
 * Stages a harness's files where its container reads them. Staging keeps them
 * to their owner (they may hold secrets), so the agent must be that owner:
 * handed over when omh runs as root, as the worktree is.
 */
export async function stageForAgent(files: readonly StagedEntry[], dir: string): Promise<StageResult> {
  const staged = await stage({ files }, dir)
  await handToAgent(dir)
  return staged
}

/** Staging's mounts as the planner takes them: documents live under `files/`, everything else is a directory. */
export const stagedMounts = (staged: StageResult): StagedMount[] => {
  const files = path.join(staged.dir, 'files') + path.sep
  return staged.mounts.map((m) => ({ ...m, kind: m.host.startsWith(files) ? 'file' : 'directory' }))
}

/**
 * Credential directories and files exist before the engine mounts them (a
 * missing source would be created as a root-owned directory). A file starts
 * as something its harness can parse: `{}` for JSON.
 */
export async function prepareCredentials(credentials: readonly CredentialMount[]): Promise<void> {
  for (const c of credentials) {
    // Logins are for the user's eyes alone: every directory omh makes for one is 0700, every file 0600.
    if (c.kind === 'directory') {
      await mkdir(c.host, { recursive: true, mode: 0o700 })
    } else if (!(await lstat(c.host).catch(() => undefined))) {
      await mkdir(path.dirname(c.host), { recursive: true, mode: 0o700 })
      await writeFile(c.host, c.host.endsWith('.json') ? '{}\n' : '', { flag: 'wx', mode: 0o600 }).catch(() => undefined)
    }
    await handToAgent(c.host)
  }
}
