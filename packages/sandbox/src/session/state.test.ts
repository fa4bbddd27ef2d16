import { execFileSync } from 'node:child_process'
import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { testdir } from '@omh/test-utils'
import { OmhError, type RuntimePlugin } from '@omh/plugin-api'
import { LIST, backgroundHarnesses, parseListing } from './background.js'
import { STATE_FILE_BYTES, ago, harnessState, parseStateText, readLaunch, recordLaunch, stateCommand, stateWords, type HarnessFiles } from './state.js'

const NOW = 1_800_000_000

/** What the container's listing prints for a directory, run here with this machine's node as the session runs it with omh's. */
function listing(dir: string): HarnessFiles[] {
  return parseListing(execFileSync(process.execPath, ['-e', LIST, dir, String(STATE_FILE_BYTES)], { encoding: 'utf8', timeout: 10_000 }))
}

describe('a state file as the host reads it', () => {
  it('takes exactly what a hook writes', () => {
    expect(parseStateText(`{"state":"working","at":${NOW}}\n`)).toEqual({ state: 'working', at: NOW })
    expect(parseStateText(`{"at":${NOW},"state":"waiting"}`)).toEqual({ state: 'waiting', at: NOW })
  })

  it.each([
    ['not JSON', '{"state":"working",'],
    ['empty', ''],
    ['a list', `["working",${NOW}]`],
    ['null', 'null'],
    ['a state omh does not know', `{"state":"finished","at":${NOW}}`],
    ['a state with escape sequences', `{"state":"\\u001b]0;owned\\u0007working","at":${NOW}}`],
    ['a state of another type', `{"state":1,"at":${NOW}}`],
    ['at as a string', `{"state":"working","at":"${NOW}"}`],
    ['at with a fraction', `{"state":"working","at":${NOW}.5}`],
    ['at before 2001', '{"state":"working","at":12}'],
    ['at after 2100', '{"state":"working","at":9999999999}'],
    ['a key more', `{"state":"working","at":${NOW},"run":"rm -rf /"}`],
    ['a key less', '{"state":"working"}'],
    ['more than a few KB', `{"state":"working","at":${NOW}}${' '.repeat(STATE_FILE_BYTES)}`],
  ])('refuses %s', (_, text) => {
    expect(parseStateText(text)).toBeUndefined()
  })
})

describe("the container's listing", () => {
  it('reads a regular state file, and neither a link, a FIFO nor a huge file', () => {
    const dir = testdir()
    writeFileSync(path.join(dir, 'claude.state'), `{"state":"waiting","at":${NOW}}\n`)
    writeFileSync(path.join(dir, 'elsewhere'), `{"state":"working","at":${NOW}}\n`)
    symlinkSync(path.join(dir, 'elsewhere'), path.join(dir, 'codex.state'))
    execFileSync('mkfifo', [path.join(dir, 'pi.state')])
    writeFileSync(path.join(dir, 'gemini.state'), 'x'.repeat(STATE_FILE_BYTES + 1))
    writeFileSync(path.join(dir, 'qwen.state'), `{"state":"working\u001b[2J","at":${NOW}}`)
    mkdirSync(path.join(dir, 'opencode.state'))
    const found = new Map(listing(dir).map((h) => [h.harness, h]))
    expect(found.get('claude')?.state).toMatchObject({ text: `{"state":"waiting","at":${NOW}}\n` })
    for (const h of ['codex', 'pi', 'gemini', 'opencode']) expect(found.get(h)?.state, h).toBe('unreadable')
    for (const h of ['claude', 'codex', 'pi', 'gemini', 'opencode', 'qwen']) expect(found.get(h)?.running).toBe(false)
    // Each reads as unknown, and nothing of what was found is in the words shown.
    for (const h of ['codex', 'pi', 'gemini', 'opencode', 'qwen']) {
      const state = harnessState(found.get(h)!, 'hooks')
      expect(state).toEqual({ harness: h, state: 'unknown', from: 'hooks' })
      expect(stateWords(state)).toBe('unknown')
    }
    expect(harnessState(found.get('claude')!, 'hooks')).toEqual({ harness: 'claude', state: 'waiting', from: 'hooks', lastActive: NOW })
  })

  it('keeps an exit status with its time, and a log time', () => {
    const dir = testdir()
    writeFileSync(path.join(dir, 'claude.status'), '0\n')
    writeFileSync(path.join(dir, 'claude.log'), 'output')
    utimesSync(path.join(dir, 'claude.status'), NOW, NOW)
    utimesSync(path.join(dir, 'claude.log'), NOW - 5, NOW - 5)
    const [claude] = listing(dir)
    expect(claude).toMatchObject({ harness: 'claude', running: false, status: 0, statusAt: NOW, logAt: NOW - 5 })
    expect(harnessState(claude!, 'process')).toEqual({ harness: 'claude', state: 'finished', exit: 0, from: 'process', lastActive: NOW })
  })

  it('leaves out lines that are not its own, names no adapter could have, and statuses that are not numbers', () => {
    const lines = [
      'not json',
      JSON.stringify({ harness: '../etc', running: true }),
      JSON.stringify({ harness: 'Claude\u001b[31m', running: true }),
      JSON.stringify({ harness: 'codex', running: false, status: { text: '0; rm -rf /' }, state: { text: 'x', at: 'soon' } }),
      JSON.stringify({ harness: 'pi', running: false, state: { text: 'x'.repeat(STATE_FILE_BYTES + 1) } }),
      JSON.stringify({ harness: 'opencode', running: false, state: 42 }),
    ]
    const parsed = parseListing(lines.join('\n'))
    expect(parsed.map((h) => h.harness)).toEqual(['codex', 'pi', 'opencode'])
    expect(parsed[0]).toEqual({ harness: 'codex', running: false, process: 'exited', state: { text: 'x' } })
    expect(parsed[1]!.state).toBe('unreadable')
    expect(parsed[2]!.state).toBe('unreadable')
  })
})

describe('asking a container for its listing', () => {
  // An engine's exec into a container whose processes fill its pids limit: it never returns until its client is stopped.
  const stuck = {
    exec: (_container: string, _argv: readonly string[], _options: unknown, context: { signal?: AbortSignal }) =>
      new Promise((_, reject) => context.signal?.addEventListener('abort', () => reject(new Error('the client was stopped')))),
  } as unknown as RuntimePlugin

  it('gives up on a container that does not answer, naming the session', async () => {
    const asked = backgroundHarnesses(stuck, 'c0ffee', { env: {}, progress: () => undefined, verbose: false }, { session: 's04', timeoutMs: 50 })
    await expect(asked).rejects.toSatisfy((error) => error instanceof OmhError && error.code === 'SESSION_UNRESPONSIVE' && error.message.includes('s04'))
  })

  it('passes on the reason when omh itself stopped asking', async () => {
    const stop = new AbortController()
    const asked = backgroundHarnesses(stuck, 'c0ffee', { env: {}, progress: () => undefined, verbose: false, signal: stop.signal }, { timeoutMs: 60_000 })
    stop.abort()
    await expect(asked).rejects.toThrow('the client was stopped')
  })
})

describe('a harness state', () => {
  const files = (more: Partial<HarnessFiles>): HarnessFiles => ({ harness: 'claude', running: true, ...more })
  const said = (state: string, at: number) => ({ text: JSON.stringify({ state, at }), at })

  it('is what the hooks said while it runs, and running from the process before they said anything', () => {
    expect(harnessState(files({ state: said('working', NOW) }), 'hooks')).toMatchObject({ state: 'working', from: 'hooks', lastActive: NOW })
    expect(harnessState(files({ logAt: NOW }), 'hooks')).toEqual({ harness: 'claude', state: 'running', from: 'process', lastActive: NOW })
    expect(harnessState(files({}), 'process')).toEqual({ harness: 'claude', state: 'running', from: 'process' })
  })

  it('is finished once it exited, unless the state was written after the exit', () => {
    const exited = { running: false, status: 3, statusAt: NOW }
    expect(harnessState(files({ ...exited, state: said('waiting', NOW - 1) }), 'hooks')).toEqual({ harness: 'claude', state: 'finished', exit: 3, from: 'process', lastActive: NOW })
    expect(harnessState(files({ ...exited, state: said('working', NOW + 10) }), 'hooks')).toMatchObject({ state: 'working', lastActive: NOW + 10 })
    // A file the agent spoiled before the exit does not hide the exit; one after it is unknown.
    expect(harnessState(files({ ...exited, state: { text: 'junk', at: NOW - 1 } }), 'hooks')).toMatchObject({ state: 'finished', exit: 3 })
    expect(harnessState(files({ ...exited, state: { text: 'junk', at: NOW + 1 } }), 'hooks')).toMatchObject({ state: 'unknown' })
    expect(stateWords({ state: 'finished', exit: 3, from: 'process' })).toBe('finished (exit 3)')
    expect(stateWords({ state: 'running', from: 'process' })).toBe('running (process)')
  })
})

describe('the state hook and the launch record', () => {
  it('writes one line atomically and always exits 0', () => {
    const command = stateCommand('claude', 'waiting')
    expect(command).toContain('mv -f "$t" "/omh/sock/claude.state"')
    expect(command).toMatch(/; exit 0$/)
    // The same command against a directory of this machine's, as the harness runs it.
    const dir = testdir()
    execFileSync('sh', ['-c', command.replaceAll('/omh/sock', dir)])
    const text = execFileSync('cat', [path.join(dir, 'claude.state')], { encoding: 'utf8' })
    const read = parseStateText(text)
    expect(read?.state).toBe('waiting')
    expect(Math.abs(read!.at - Date.now() / 1000)).toBeLessThan(5)
    // A directory it cannot make is no failure of the hook.
    expect(() => execFileSync('sh', ['-c', command.replaceAll('/omh/sock', '/proc/nowhere/sock')], { stdio: 'pipe' })).not.toThrow()
  })

  it('keeps what a launch started and reads it back, and reads nothing from a spoiled record', async () => {
    const run = testdir()
    await recordLaunch(run, { harness: 'claude', from: 'hooks', started: NOW, prompt: ['-p', 'fix the test'] })
    expect(await readLaunch(run, 'claude')).toEqual({ harness: 'claude', from: 'hooks', started: NOW, prompt: ['-p', 'fix the test'] })
    writeFileSync(path.join(run, 'harnesses', 'codex.json'), '{"harness":"codex","from":"everywhere","started":1}')
    expect(await readLaunch(run, 'codex')).toBeUndefined()
    expect(await readLaunch(run, 'pi')).toBeUndefined()
  })

  it('says how long ago', () => {
    expect([ago(NOW - 12, NOW), ago(NOW - 240, NOW), ago(NOW - 7200, NOW), ago(NOW - 172_800, NOW), ago(NOW + 5, NOW)]).toEqual(['12s ago', '4m ago', '2h ago', '2d ago', '0s ago'])
  })
})
