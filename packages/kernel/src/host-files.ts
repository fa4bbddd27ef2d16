/** Small host file-system helpers shared by the commands that prepare mounts. */
import { lchown, lstat, readdir } from 'node:fs/promises'
import path from 'node:path'
import { GUEST_GID, GUEST_UID } from './model.js'

export const exists = (p: string): Promise<boolean> =>
  lstat(p).then(
    () => true,
    () => false,
  )

/**
 * Hands what the agent must write to the guest user. Only root needs this: a
 * user's own files are theirs (and a rootless engine maps them), but root's
 * files would be read-only to the agent.
 */
export async function handToGuest(target: string): Promise<void> {
  if (process.getuid?.() !== 0) return
  const walk = async (p: string): Promise<void> => {
    const info = await lstat(p).catch(() => undefined)
    if (!info) return
    if (info.uid !== GUEST_UID || info.gid !== GUEST_GID) await lchown(p, GUEST_UID, GUEST_GID)
    if (info.isDirectory()) for (const name of await readdir(p)) await walk(path.join(p, name))
  }
  await walk(target)
}
