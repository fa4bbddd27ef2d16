import { describe, expect, it } from 'vitest'
import { clientFailure, runClient } from './client.js'

const env = { PATH: process.env['PATH'] }

describe('runClient', () => {
  it('captures output, strips one final line break when asked, and says how a failure ended', async () => {
    const ok = await runClient('sh', ['-c', 'echo out; echo err >&2'], { env, stripFinalNewline: true })
    expect(ok).toMatchObject({ exitCode: 0, failed: false, stdout: 'out', stderr: 'err', timedOut: false })
    const kept = await runClient('sh', ['-c', 'printf "a\\n\\n"'], { env })
    expect(kept.stdout).toBe('a\n\n')
    const bad = await runClient('sh', ['-c', 'exit 3'], { env })
    expect(bad).toMatchObject({ exitCode: 3, failed: true, shortMessage: 'Command failed with exit code 3: sh -c exit 3' })
  })

  it('a program not on PATH is ENOENT, not an exit status', async () => {
    const missing = await runClient('omh-no-such-client', ['version'], { env })
    expect(missing).toMatchObject({ exitCode: undefined, failed: true, code: 'ENOENT', shortMessage: 'Command failed with ENOENT: omh-no-such-client version' })
  })

  it('kills a client that takes longer than its timeout', async () => {
    const slow = await runClient('sleep', ['5'], { env, timeout: 50 })
    expect(slow).toMatchObject({ exitCode: undefined, failed: true, timedOut: true, shortMessage: 'Command timed out after 50 milliseconds: sleep 5' })
  })

  it('counts a timed-out client as failed even when it exits 0 on SIGTERM, and kills one that ignores it', async () => {
    const graceful = await runClient(process.execPath, ['-e', 'process.on("SIGTERM", () => process.exit(0)); setInterval(() => {}, 1000)'], { env, timeout: 100 })
    expect(graceful).toMatchObject({ failed: true, timedOut: true })
    const stubborn = await runClient(process.execPath, ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)'], { env, timeout: 100, killAfter: 100 })
    expect(stubborn).toMatchObject({ failed: true, timedOut: true, exitCode: undefined })
  })

  it('passes only the environment it is given', async () => {
    const result = await runClient('sh', ['-c', 'echo "${OMH_A-unset} ${HOME-unset}"'], { env: { ...env, OMH_A: 'a', HOME: undefined }, stripFinalNewline: true })
    expect(result.stdout).toBe('a unset')
  })

  it('stops when its signal aborts', async () => {
    const stop = new AbortController()
    const running = runClient('sleep', ['5'], { env, signal: stop.signal })
    stop.abort()
    expect(await running).toMatchObject({ failed: true, exitCode: undefined })
  })
})

describe('clientFailure', () => {
  it("carries the engine's own words, so --verbose shows why it failed", async () => {
    const bad = await runClient('sh', ['-c', 'echo "Error response from daemon: network omh-x not found" >&2; exit 125'], { env, stripFinalNewline: true })
    const cause = clientFailure(bad)
    expect(cause).toBeInstanceOf(Error)
    expect(cause.message).toBe('Command failed with exit code 125: sh -c echo "Error response from daemon: network omh-x not found" >&2; exit 125\nError response from daemon: network omh-x not found')
  })
})
