import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { RuntimePlugin } from '@omh/plugin-api'
import { gitRepo, testdir, write } from '@omh/test-utils'
import { registerRepository, repository } from '@omh/sandbox'
import { runNotifier } from '../../src/lib/notifier.js'
import type { StateEvent } from '../../src/lib/notify.js'

/** An engine whose one container answers the listing with what `answers` says at each look, then keeps the last answer. */
function engineAnswering(answers: object[][]): { runtime: RuntimePlugin; looks: () => number } {
  let looks = 0
  const runtime = {
    engine: 'fake',
    exec: async () => {
      const answer = answers[Math.min(looks, answers.length - 1)]!
      looks++
      return { exitCode: 0, stdout: answer.map((line) => JSON.stringify(line)).join('\n'), stderr: '' }
    },
  } as unknown as RuntimePlugin
  return { runtime, looks: () => looks }
}

const NOW = Math.floor(Date.now() / 1000)
const state = (name: string) => ({ text: `{"state":"${name}","at":${NOW}}\n`, at: NOW })
const harness = (more: object) => ({ harness: 'claude', running: true, status: null, state: null, log: null, ...more })

/** A state directory with one repository and one session whose container a launch left up. */
async function stateWithSession(): Promise<{ omhState: string; root: string }> {
  const omhState = testdir()
  const repo = repository(gitRepo())
  await registerRepository(omhState, repo)
  write(omhState, { [`run/${repo.id}/s01/up.json`]: JSON.stringify({ engine: 'fake', container: 'omh-c', idleStopMs: 1 }) })
  write(omhState, { [`run/${repo.id}/s01/harnesses/claude.json`]: JSON.stringify({ harness: 'claude', from: 'hooks', started: NOW - 5 }) })
  return { omhState, root: repo.root }
}

async function notify(omhState: string, runtime: RuntimePlugin): Promise<StateEvent[]> {
  const told: StateEvent[] = []
  await runNotifier({
    omhState,
    context: { env: {}, verbose: false, progress: () => undefined },
    runtime: async () => runtime,
    tell: async (event) => void told.push(event),
    lookEveryMs: 1,
  })
  return told
}

describe("omh's notifier", () => {
  it('tells each move to waiting or finished once, with the repository, and ends once nothing runs', async () => {
    const { omhState, root } = await stateWithSession()
    const { runtime } = engineAnswering([
      [harness({ state: state('working') })],
      [harness({ state: state('waiting') })],
      [harness({ state: state('waiting') })],
      [harness({ state: state('working') })],
      [harness({ running: false, status: { text: '0\n', at: NOW + 1 }, state: state('working') })],
    ])
    const told = await notify(omhState, runtime)
    expect(told).toEqual([
      { repository: root, session: 's01', branch: 'omh/s01', harness: 'claude', state: 'waiting', at: NOW },
      { repository: root, session: 's01', branch: 'omh/s01', harness: 'claude', state: 'finished', exit: 0, at: NOW + 1 },
    ])
    expect(existsSync(path.join(omhState, 'run/.notifier/pid')), 'its place is left for the next').toBe(false)
  })

  it('tells nothing again when a later notifier finds what an earlier one told', async () => {
    const { omhState } = await stateWithSession()
    const waiting = [[harness({ state: state('waiting') })], [harness({ running: false, state: state('waiting') })]]
    expect(await notify(omhState, engineAnswering(waiting).runtime)).toHaveLength(1)
    expect(await notify(omhState, engineAnswering(waiting).runtime)).toEqual([])
    expect(JSON.parse(readFileSync(path.join(omhState, 'run/.notifier/seen.json'), 'utf8'))).toBeTypeOf('object')
  })

  it('leaves the looking to a notifier already running, and takes the place of one that died', async () => {
    const { omhState } = await stateWithSession()
    // A process that looks like one: its command line has the word.
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', 'sessions', 'notifier'], { stdio: 'ignore' })
    try {
      for (let n = 0; n < 100 && !readFileSync(`/proc/${other.pid}/cmdline`, 'utf8').includes('notifier'); n++) await new Promise((r) => setTimeout(r, 10))
      write(omhState, { 'run/.notifier/pid': String(other.pid) })
      const { runtime, looks } = engineAnswering([[harness({ state: state('waiting') })]])
      expect(await notify(omhState, runtime)).toEqual([])
      expect(looks()).toBe(0)
    } finally {
      other.kill()
    }
    // Its pid now names a live process that is not a notifier (this test's parent).
    write(omhState, { 'run/.notifier/pid': String(process.ppid) })
    expect(await notify(omhState, engineAnswering([[harness({ running: false, state: state('waiting') })]]).runtime)).toHaveLength(1)
  })

  it('passes over a container that does not answer and a listing the agent spoiled', async () => {
    const { omhState } = await stateWithSession()
    const spoiled = { exec: async () => ({ exitCode: 0, stdout: '{"harness":"../../x","running":true}\n\u001b]0;owned\u0007', stderr: '' }) } as unknown as RuntimePlugin
    expect(await notify(omhState, spoiled)).toEqual([])
    const silent = { exec: async () => Promise.reject(new Error('no such container')) } as unknown as RuntimePlugin
    expect(await notify(omhState, silent)).toEqual([])
  })
})
