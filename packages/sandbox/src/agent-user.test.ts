import { describe, expect, it } from 'vitest'
import { agentUser, userSpec } from './agent-user.js'

describe('the agent a host user is', () => {
  it('has the IDs of a user who is not root, and names that user as the one whose files the engine shows', () => {
    expect(agentUser({ uid: 1100, gid: 1200 })).toEqual({ uid: 1100, gid: 1200, hostUser: { uid: 1100, gid: 1200 } })
    expect(agentUser({ uid: 1000, gid: 1000 })).toEqual({ uid: 1000, gid: 1000, hostUser: { uid: 1000, gid: 1000 } })
    expect(userSpec(agentUser({ uid: 1100, gid: 1200 }))).toBe('1100:1200')
  })

  it("is UID 1000 for root, whose files are handed over instead: root's IDs are never a container's", () => {
    expect(agentUser({ uid: 0, gid: 0 })).toEqual({ uid: 1000, gid: 1000 })
    expect(agentUser({})).toEqual({ uid: 1000, gid: 1000 })
  })

  it("keeps the agent's own group for a user whose group is root's", () => {
    expect(agentUser({ uid: 1100, gid: 0 })).toEqual({ uid: 1100, gid: 1000, hostUser: { uid: 1100, gid: 0 } })
  })
})
