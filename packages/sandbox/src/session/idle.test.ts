import { existsSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { testdir, write } from '@omh/test-utils'
import { fakeRuntime } from '@omh/test-utils'
import { unused, type OmhImage } from '../image-inventory.js'
import { CHECK_EVERY_MS, durationMs, findIdle, idleCheckDue, recordUp, stopIdle, touchUp } from './idle.js'

const context = { env: process.env, progress: () => undefined, verbose: false }
const HOUR = 3_600_000

/** A state directory with one session whose container `c1` came up `ago` ms ago. */
async function session(ago: number, idleStopMs = HOUR) {
  const state = testdir()
  const run = path.join(state, 'run', 'repo-1', 's01')
  write(run, { 'last-used': 'then\n' })
  await recordUp(run, { engine: 'fake', container: 'c1', idleStopMs })
  const then = new Date(Date.now() - ago)
  for (const f of ['up.json', 'last-used']) utimesSync(path.join(run, f), then, then)
  const runtime = fakeRuntime()
  await runtime.up({ name: 'c1', image: 'i', labels: {}, mounts: [], env: {}, argv: [] } as never, context)
  return { state, run, runtime }
}

describe('idle session containers', () => {
  it('reads durations as settings write them', () => {
    expect([durationMs('90s'), durationMs('90m'), durationMs('4h'), durationMs('2d')]).toEqual([90_000, 5_400_000, 4 * HOUR, 48 * HOUR])
  })

  it('looks at most once per interval, and not at all before any session', async () => {
    const { state } = await session(0)
    expect(idleCheckDue(testdir())).toBe(false)
    expect(idleCheckDue(state)).toBe(true)
    await findIdle(state)
    expect(idleCheckDue(state)).toBe(false)
    expect(idleCheckDue(state, Date.now() + CHECK_EVERY_MS)).toBe(true)
  })

  it('finds a session idle past its idle_stop and stops its container, as down does', async () => {
    const { state, run, runtime } = await session(2 * HOUR)
    const [found] = await findIdle(state)
    expect(found).toMatchObject({ repo: 'repo-1', session: 's01', container: 'c1', engine: 'fake' })
    expect(await stopIdle(found!, runtime, context)).toBe(true)
    expect(runtime.calls).toContain('down c1')
    expect(existsSync(path.join(run, 'up.json'))).toBe(false)
  })

  it('leaves a session used within idle_stop, one an omh process holds, and one with something running', async () => {
    expect(await findIdle((await session(HOUR / 2)).state)).toEqual([])
    const held = await session(2 * HOUR)
    writeFileSync(path.join(held.run, 'claim'), JSON.stringify({ pid: process.pid }))
    expect(await findIdle(held.state)).toEqual([])
    const busy = await session(2 * HOUR)
    busy.runtime.busy.set('c1', ['node editor-server'])
    const [found] = await findIdle(busy.state)
    expect(await stopIdle(found!, busy.runtime, context)).toBe(false)
    expect(busy.runtime.calls).not.toContain('down c1')
    // Its clock starts again, so the next look does not ask the engine.
    expect(await findIdle(busy.state)).toEqual([])
  })

  it('does not count the sshd omh attach leaves waiting', async () => {
    const { state, runtime } = await session(2 * HOUR)
    runtime.busy.set('c1', ['/opt/omh/libexec/sshd -f /tmp/omh-sshd/sshd_config -E /tmp/omh-sshd/sshd.log'])
    const [found] = await findIdle(state)
    expect(await stopIdle(found!, runtime, context)).toBe(true)
  })

  it('restarts the clock when a launch ends', async () => {
    const { state, run } = await session(2 * HOUR)
    await touchUp(run)
    expect(await findIdle(state)).toEqual([])
  })
})

describe('unused images', () => {
  const day = 86_400_000
  const image = (over: Partial<OmhImage>): OmhImage => ({ id: 'x', tags: [], kind: 'harness', created: new Date(Date.now() - 10 * day).toISOString(), size: 1, sessions: [], ...over })

  it('are harness images no session uses, then bases no kept image was built from, older than asked', () => {
    const base = image({ id: 'b1', kind: 'base', tags: ['omh-base:1'] })
    const lonelyBase = image({ id: 'b2', kind: 'base', tags: ['omh-base:2'] })
    const used = image({ id: 'h1', tags: ['omh-a:1'], from: 'omh-base:1', sessions: ['repo/s01'] })
    const idle = image({ id: 'h2', tags: ['omh-b:1'], from: 'omh-base:2' })
    const fresh = image({ id: 'h3', tags: ['omh-c:1'], from: 'omh-base:2', created: new Date().toISOString() })
    expect(unused([base, lonelyBase, used, idle], 0).map((i) => i.id)).toEqual(['h2', 'b2'])
    expect(unused([base, lonelyBase, used, idle, fresh], day).map((i) => i.id)).toEqual(['h2'])
  })
})
