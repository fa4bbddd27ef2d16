import { lstatSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { GUEST_GID, GUEST_UID } from '@omh/plugin-api'
import { testdir } from '@omh/test-utils'
import { stageForAgent } from './prepare.js'

describe('stageForAgent', () => {
  it.runIf(process.getuid?.() === 0)('run as root, hands everything it stages, owner-only, to the agent', async () => {
    const dir = path.join(testdir(), 'stage')
    await stageForAgent([{ kind: 'file', guest: '/work/.mcp.json', content: '{"secret": "x"}' }], dir)
    const owners = new Set<string>()
    const walk = (at: string) => {
      const info = lstatSync(at)
      owners.add(`${info.uid}:${info.gid} ${(info.mode & 0o077) === 0 ? 'owner-only' : 'open'}`)
      if (info.isDirectory()) for (const name of readdirSync(at)) walk(path.join(at, name))
    }
    walk(dir)
    expect([...owners]).toEqual([`${GUEST_UID}:${GUEST_GID} owner-only`])
  })
})
