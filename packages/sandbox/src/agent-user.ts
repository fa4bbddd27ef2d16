import { GUEST_GID, GUEST_UID, type HostUser } from '@omh/plugin-api'

/**
 * Who the agent is inside a container. The files it writes on the host (the
 * worktree, the sandbox repository, credentials) are the host user's, and
 * what it makes there must stay theirs, so the agent has the host user's IDs
 * and omh's images are built with `agent` at those IDs; the engine is told
 * whose files they are (`ContainerSpec.hostUser`) and maps that user onto the
 * agent where it maps users at all. Root's IDs are never a container's: as
 * root, the agent is UID 1000 and is handed its directories (`handToAgent`).
 */
export interface AgentUser {
  readonly uid: number
  readonly gid: number
  /** The host user the engine must show as the agent; absent when omh runs as root. */
  readonly hostUser?: HostUser
}

/** The agent for the host user running omh (this process, by default). */
export function agentUser(host: { readonly uid?: number | undefined; readonly gid?: number | undefined } = { uid: process.getuid?.(), gid: process.getgid?.() }): AgentUser {
  const { uid, gid } = host
  if (uid === undefined || gid === undefined || uid === 0) return { uid: GUEST_UID, gid: GUEST_GID }
  // A group of root's would make the image's `agent` group root's; the agent keeps its own.
  return { uid, gid: gid === 0 ? GUEST_GID : gid, hostUser: { uid, gid } }
}

/** The agent as a container's `user`. */
export const userSpec = (agent: Pick<AgentUser, 'uid' | 'gid'>): string => `${agent.uid}:${agent.gid}`

/** The agent of this process's user, as a container's `user`. */
export const agentUserSpec = (): string => userSpec(agentUser())
