/**
 * Files the agent must own: when omh runs as root, what it makes for a session is handed to the
 * agent's IDs, so the agent in the container can read and write them.
 */
import { lchown, lstat, readdir } from 'node:fs/promises'
import path from 'node:path'
import { GUEST_GID, GUEST_UID } from '@omh/plugin-api'

/**
 * Hands what the agent must write (worktree, shadow, credentials) to the
 * guest user. Only root needs this: for anyone else the agent is that user
 * (`agentUser`), so their own files are already the agent's; root's would
 * otherwise be read-only to the agent.
 */
export async function handToAgent(target: string): Promise<void> {
  if (process.getuid?.() !== 0) return
  await chownTree(target)
}

async function chownTree(target: string): Promise<void> {
  const info = await lstat(target).catch(() => undefined)
  if (!info) return
  if (info.uid !== GUEST_UID || info.gid !== GUEST_GID) await lchown(target, GUEST_UID, GUEST_GID)
  if (!info.isDirectory()) return
  for (const name of await readdir(target)) await chownTree(path.join(target, name))
}
