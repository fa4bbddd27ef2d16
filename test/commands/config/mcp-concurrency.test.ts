import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omhAsync } from '../../helpers/run.js'
import { testdir } from '@omh/test-utils'

const WRITERS = 8
const ROUNDS = 25

describe('omh config mcp add, several at once', () => {
  it(`${WRITERS} adds at once, ${ROUNDS} times over: every add lands, and none reports a write it lost`, async () => {
    const lost: string[] = []
    const refused: string[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const home = testdir({ 'mcp.json': '{\n  "mcpServers": {}\n}\n' })
      const runs = await Promise.all(
        Array.from({ length: WRITERS }, (_, n) => omhAsync(['config', 'mcp', 'add', `s${n}`, '--yes', '--', 'server', `${n}`], { env: { OMH_HOME: home } })),
      )
      const servers = Object.keys(JSON.parse(readFileSync(path.join(home, 'mcp.json'), 'utf8')).mcpServers)
      runs.forEach((ran, n) => {
        if (ran.status === 0 && !servers.includes(`s${n}`)) lost.push(`round ${round}: s${n}`)
        if (ran.status !== 0) refused.push(`round ${round}: s${n} exited ${ran.status}: ${ran.stderr.trim()}`)
      })
    }
    const figure = `${WRITERS * ROUNDS} adds: ${lost.length} lost, ${refused.length} refused`
    expect({ figure, lost, refused }).toEqual({ figure: `${WRITERS * ROUNDS} adds: 0 lost, 0 refused`, lost: [], refused: [] })
  }, 600_000)

  it('an add waits for a write in progress, and takes over a lock its holder left behind', async () => {
    const home = testdir({ 'mcp.json': '{"mcpServers": {}}\n' })
    // A holder that died: a pid no process has.
    writeFileSync(path.join(home, '.mcp.json.omh-lock'), JSON.stringify({ pid: 2 ** 22 + 1, host: 'elsewhere', time: Date.now() - 60_000 }))
    const ran = await omhAsync(['config', 'mcp', 'add', 'a', '--yes', '--', 'a'], { env: { OMH_HOME: home } })
    expect(ran.stderr).toContain('Wrote')
    expect(ran.status).toBe(0)
    expect(Object.keys(JSON.parse(readFileSync(path.join(home, 'mcp.json'), 'utf8')).mcpServers)).toEqual(['a'])
  })
})
