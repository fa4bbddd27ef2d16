import { rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { RuntimeContext } from '@omh/plugin-api'
import { describe, expect, it } from 'vitest'
import type { ClientResult } from './client.js'
import { cliVolumes, type VolumeClient } from './volumes.js'

const ended = (exitCode: number | undefined, stdout = ''): ClientResult => ({
  command: 'client',
  exitCode,
  stdout,
  stderr: '',
  failed: exitCode !== 0,
  timedOut: false,
  shortMessage: exitCode === undefined ? 'Command was killed with SIGTERM' : `Command failed with exit code ${exitCode}`,
})

/** A client that answers each call from `answer` and records the arguments and whether the call could still be aborted. */
function recording(answer: (args: readonly string[]) => ClientResult) {
  const calls: { args: readonly string[]; signal: boolean }[] = []
  const call: VolumeClient = async (args, context) => {
    calls.push({ args, signal: Boolean(context.signal) })
    return answer(args)
  }
  return { calls, call }
}

const nameOf = (args: readonly string[]) => args[args.indexOf('--name') + 1]
const probe = { dir: '/state/run', file: 'probe', token: 't-1', image: 'i:1' }
const helper = { image: 'i:1', owner: { uid: 1000, gid: 1000 } }

describe('one-shot containers', () => {
  it('removes a probe container whose client was stopped before it ended, outside the stopped context', async () => {
    const client = recording((args) => (args[0] === 'run' ? ended(undefined) : ended(0)))
    const stop = new AbortController()
    stop.abort()
    const context: RuntimeContext = { env: {}, progress: () => undefined, verbose: false, signal: stop.signal }
    await expect(cliVolumes('podman', client.call).fileWays(probe, context)).rejects.toThrow()
    const [run, rm] = client.calls
    expect(run!.args[0]).toBe('run')
    expect(nameOf(run!.args)).toMatch(/^omh-oneshot-[0-9a-f]+$/)
    expect(rm).toEqual({ args: ['rm', '-f', nameOf(run!.args)], signal: false })
  })

  it('names every one-shot apart, and removes none that ended', async () => {
    const client = recording((args) => ended(0, args.includes('cat') ? 't-1' : ''))
    const context: RuntimeContext = { env: {}, progress: () => undefined, verbose: false }
    const { fileWays } = cliVolumes('docker', client.call)
    expect(await fileWays(probe, context)).toEqual({ ways: ['mounted', 'copied'] })
    expect(await fileWays(probe, context)).toEqual({ ways: ['mounted', 'copied'] })
    expect(client.calls.map((c) => c.args[0])).toEqual(['run', 'run'])
    expect(nameOf(client.calls[0]!.args)).not.toBe(nameOf(client.calls[1]!.args))
  })

  it('removes a volume helper stopped before it ended', async () => {
    const client = recording((args) => (args[0] === 'run' ? ended(undefined) : ended(0)))
    const context: RuntimeContext = { env: {}, progress: () => undefined, verbose: false }
    const archive = path.join(os.tmpdir(), `omh-volumes-test-${process.pid}.tar`)
    try {
      await expect(cliVolumes('docker', client.call).volumes.get('v1', archive, helper, context)).rejects.toThrow()
    } finally {
      rmSync(archive, { force: true })
    }
    const [run, rm] = client.calls
    expect(rm!.args).toEqual(['rm', '-f', nameOf(run!.args)])
  })
})
