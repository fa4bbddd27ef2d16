import { chmodSync, existsSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { testdir, write } from '@omh/test-utils'
import { COMMAND_TIMEOUT_MS, deliver, runProgram, terminalEscape, type DeliveryIo, type Environment, type NotifySettings, type RunProgram, type StateEvent } from '../../src/lib/notify.js'

const WAITING: StateEvent = { repository: '/home/me/src/myrepo', session: 's02', branch: 'omh/s02', harness: 'claude', state: 'waiting', at: 1_800_000_000 }
const FINISHED: StateEvent = { ...WAITING, session: 's03', branch: 'omh/s03', harness: 'codex', state: 'finished', exit: 0 }
const TERMINAL_ONLY: NotifySettings = { terminal: 'osc9', desktop: false }

/** A terminal that keeps every byte written to it. */
function fakeTerminal() {
  const chunks: Buffer[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(Buffer.from(chunk))
      done()
    },
  })
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') }
}

/** Delivers `event` with a fake terminal and the environment given; what was written and warned. */
async function delivered(event: StateEvent, settings: NotifySettings, env: Environment = {}, more: Partial<DeliveryIo> = {}) {
  const terminal = fakeTerminal()
  const warnings: string[] = []
  await deliver(event, settings, { env, terminal: terminal.stream, warn: (line) => warnings.push(line), ...more })
  return { written: terminal.text(), warnings }
}

/** A fake notify-send on a PATH of its own, which writes its arguments to `args`, one a line, and exits with `status`. */
function fakeNotifySend(status = 0) {
  const dir = testdir()
  // The PATH it is found on holds nothing else, so the script uses only what sh has built in.
  write(dir, { 'bin/notify-send': `#!/bin/sh\nprintf '%s\\n' "$@" > '${dir}/args'\nexit ${status}\n` })
  chmodSync(path.join(dir, 'bin/notify-send'), 0o755)
  return { path: path.join(dir, 'bin'), args: () => (existsSync(path.join(dir, 'args')) ? readFileSync(path.join(dir, 'args'), 'utf8').split('\n').slice(0, -1) : undefined) }
}

/** A command that writes its stdin, its working directory and one variable to `out` as JSON. */
function recordingCommand(out: string): string[] {
  const script = "const fs = require('fs'); fs.writeFileSync(process.argv[1], JSON.stringify({ stdin: fs.readFileSync(0, 'utf8'), cwd: process.cwd(), marker: process.env.OMH_NOTIFY_MARKER }))"
  return [process.execPath, '-e', script, out]
}

const ESC = '\u001b'
const BEL = '\u0007'

describe('the words of a notification', () => {
  it("name the repository, the session and its harness, in omh's own words", async () => {
    expect((await delivered(WAITING, TERMINAL_ONLY)).written).toBe(`${ESC}]9;myrepo s02 (claude) is waiting for you${BEL}`)
    expect((await delivered(FINISHED, TERMINAL_ONLY)).written).toBe(`${ESC}]9;myrepo s03 (codex) finished (exit 0)${BEL}`)
    expect((await delivered({ ...FINISHED, exit: 2 }, TERMINAL_ONLY)).written).toBe(`${ESC}]9;myrepo s03 (codex) finished (exit 2)${BEL}`)
  })

  it('keep nothing of a hostile repository name that could end or redirect the escape', async () => {
    const hostile = { ...WAITING, repository: `/home/me/src/x${ESC}]0;x${BEL};rm -rf ~;\u009b31m\u009c\u007f\u202eevil\r\n` }
    for (const terminal of ['osc9', 'osc777'] as const) {
      const { written } = await delivered(hostile, { terminal, desktop: false })
      expect(written.startsWith(terminal === 'osc9' ? `${ESC}]9;` : `${ESC}]777;notify;omh;`)).toBe(true)
      expect(written.endsWith(BEL)).toBe(true)
      // One ESC opens the sequence and one BEL ends it; no other control character, and only the protocol's own `;`.
      expect([...written].filter((c) => c.charCodeAt(0) < 0x20 || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) <= 0x9f))).toEqual([ESC, BEL])
      expect(written.split(';').length - 1).toBe(terminal === 'osc9' ? 1 : 3)
      expect(written).not.toContain('\u202e')
      expect(written).toContain('x]0xrm -rf ~31mevil s02 (claude) is waiting for you')
    }
  })

  it('are 200 characters at most, and the session is never cut off by a long repository name', async () => {
    const { written } = await delivered({ ...WAITING, repository: `/src/${'r'.repeat(500)}` }, TERMINAL_ONLY)
    const body = written.slice(`${ESC}]9;`.length, -1)
    expect(body.length).toBeLessThanOrEqual(200)
    expect(body).toMatch(/^r+… s02 \(claude\) is waiting for you$/)
  })

  it('never begin with a dash, which notify-send would read as an option', async () => {
    expect((await delivered({ ...WAITING, repository: '/src/--help' }, TERMINAL_ONLY)).written).toBe(`${ESC}]9;help s02 (claude) is waiting for you${BEL}`)
  })
})

describe('the terminal', () => {
  it('gets the escape the setting names, the bell, or nothing', async () => {
    expect((await delivered(WAITING, { terminal: 'osc777', desktop: false })).written).toBe(`${ESC}]777;notify;omh;myrepo s02 (claude) is waiting for you${BEL}`)
    expect((await delivered(WAITING, { terminal: 'bell', desktop: false })).written).toBe(BEL)
    expect((await delivered(WAITING, { terminal: 'off', desktop: false })).written).toBe('')
  })

  it('is written nothing when there is none', async () => {
    const warnings: string[] = []
    await deliver(WAITING, TERMINAL_ONLY, { env: {}, warn: (line) => warnings.push(line) })
    expect(warnings).toEqual([])
  })

  it.each([
    [{ TERM_PROGRAM: 'iTerm.app', TERM: 'xterm-256color' }, 'osc9'],
    [{ TERM_PROGRAM: 'ghostty', TERM: 'xterm-ghostty' }, 'osc9'],
    [{ TERM: 'xterm-kitty', KITTY_WINDOW_ID: '1' }, 'osc9'],
    [{ TERM_PROGRAM: 'WezTerm', TERM: 'xterm-256color' }, 'osc777'],
    [{ TERM: 'foot' }, 'osc777'],
    [{ TERM: 'xterm-256color', VTE_VERSION: '7600' }, 'bell'],
    [{ TERM: 'rxvt-unicode-256color' }, 'bell'],
    [{ TERM: 'xterm-256color', WT_SESSION: 'x' }, 'bell'],
    [{ TERM: 'xterm' }, 'bell'],
    [{}, 'bell'],
    [{ TERM_PROGRAM: 'iTerm.app', TMUX: '/tmp/tmux-1000/default,1,0', TERM: 'tmux-256color' }, 'bell'],
    [{ TERM_PROGRAM: 'WezTerm', TERM: 'screen.xterm-256color' }, 'bell'],
  ] as const)('under auto, in %o, is %s', (env, escape) => {
    expect(terminalEscape('auto', env)).toBe(escape)
  })

  it('inside tmux is given the escape the setting names, passed through as it is', () => {
    expect(terminalEscape('osc9', { TMUX: '/tmp/tmux-1000/default,1,0' })).toBe('osc9')
    expect(terminalEscape('osc777', { TERM: 'screen' })).toBe('osc777')
  })

  it('that fails is a warning, and nothing thrown', async () => {
    const broken = new Writable({ write: (_chunk, _encoding, done) => done(new Error('EIO: i/o error, write')) })
    const warnings: string[] = []
    await deliver(WAITING, TERMINAL_ONLY, { env: {}, terminal: broken, warn: (line) => warnings.push(line) })
    expect(warnings).toEqual(['The terminal notification was not written: EIO: i/o error, write'])
  })
})

describe('the desktop', () => {
  it('is shown the notification through notify-send, title omh, where there is a desktop session', async () => {
    const notifySend = fakeNotifySend()
    const { warnings } = await delivered({ ...WAITING, repository: '/src/a<b>&c' }, { terminal: 'off', desktop: true }, { PATH: notifySend.path, WAYLAND_DISPLAY: 'wayland-0' })
    expect(warnings).toEqual([])
    expect(notifySend.args()).toEqual(['--app-name=omh', 'omh', 'a&lt;b&gt;&amp;c s02 (claude) is waiting for you'])
  })

  it('is left alone without a desktop session, without notify-send, or when the setting says false', async () => {
    const notifySend = fakeNotifySend()
    expect(await delivered(WAITING, { terminal: 'off', desktop: true }, { PATH: notifySend.path })).toEqual({ written: '', warnings: [] })
    expect(await delivered(WAITING, { terminal: 'off', desktop: false }, { PATH: notifySend.path, DISPLAY: ':0' })).toEqual({ written: '', warnings: [] })
    expect(notifySend.args()).toBeUndefined()
    expect(await delivered(WAITING, { terminal: 'off', desktop: true }, { PATH: testdir(), DISPLAY: ':0' })).toEqual({ written: '', warnings: [] })
  })

  it('that fails is one warning', async () => {
    const notifySend = fakeNotifySend(1)
    const { warnings } = await delivered(WAITING, { terminal: 'off', desktop: true }, { PATH: notifySend.path, DISPLAY: ':0' })
    expect(warnings).toEqual(['notify-send exited with status 1; no desktop notification was shown.'])
  })
})

describe('the command', () => {
  it('reads the event as one JSON document and a newline, in your home, with the environment omh has', async () => {
    const out = path.join(testdir(), 'event.json')
    const { warnings } = await delivered(FINISHED, { command: recordingCommand(out), terminal: 'off', desktop: false }, { ...process.env, OMH_NOTIFY_MARKER: 'inherited' })
    expect(warnings).toEqual([])
    const seen = JSON.parse(readFileSync(out, 'utf8')) as { stdin: string; cwd: string; marker: string }
    expect(seen.stdin).toBe('{"repository":"/home/me/src/myrepo","session":"s03","branch":"omh/s03","harness":"codex","state":"finished","exit":0,"at":1800000000}\n')
    expect(seen.cwd).toBe(os.homedir())
    expect(seen.marker).toBe('inherited')
  })

  it('gives no exit to a harness that waits', async () => {
    const out = path.join(testdir(), 'event.json')
    await delivered(WAITING, { command: recordingCommand(out), terminal: 'off', desktop: false }, process.env)
    expect(JSON.parse((JSON.parse(readFileSync(out, 'utf8')) as { stdin: string }).stdin)).toEqual({ repository: '/home/me/src/myrepo', session: 's02', branch: 'omh/s02', harness: 'claude', state: 'waiting', at: 1_800_000_000 })
  })

  it('that is not found, or fails, is one warning naming it, and the terminal and the desktop are told all the same', async () => {
    const notifySend = fakeNotifySend()
    const settings = (command: string[]): NotifySettings => ({ command, terminal: 'bell', desktop: true })
    const env = { PATH: `${notifySend.path}${path.delimiter}${path.dirname(process.execPath)}`, DISPLAY: ':0' }
    const missing = await delivered(WAITING, settings(['/nowhere/page-me', '--now']), env)
    expect(missing).toEqual({ written: BEL, warnings: ['[notify] command /nowhere/page-me was not found.'] })
    expect(notifySend.args()).toEqual(['--app-name=omh', 'omh', 'myrepo s02 (claude) is waiting for you'])
    const failing = await delivered(WAITING, settings([process.execPath, '-e', 'process.exit(3)']), env)
    expect(failing).toEqual({ written: BEL, warnings: [`[notify] command ${process.execPath} exited with status 3.`] })
  })

  it('is given ten seconds before it is stopped', async () => {
    const asked: Parameters<RunProgram>[] = []
    const run: RunProgram = async (...call) => {
      asked.push(call)
      return { ok: false, what: 'did not finish within 10 s and was stopped' }
    }
    const { warnings } = await delivered(WAITING, { command: ['page-me'], terminal: 'off', desktop: false }, {}, { run })
    expect(asked).toEqual([[['page-me'], expect.objectContaining({ cwd: os.homedir(), timeoutMs: COMMAND_TIMEOUT_MS, stdin: expect.stringMatching(/^\{.*\}\n$/) })]])
    expect(COMMAND_TIMEOUT_MS).toBe(10_000)
    expect(warnings).toEqual(['[notify] command page-me did not finish within 10 s and was stopped.'])
  })

  it('whose runner throws is a warning, never a throw', async () => {
    const run: RunProgram = () => Promise.reject(new Error('spawn EAGAIN'))
    const { warnings } = await delivered(WAITING, { command: ['page-me'], terminal: 'off', desktop: false }, {}, { run })
    expect(warnings).toEqual(['[notify] command page-me could not run: spawn EAGAIN.'])
  })
})

describe('running a program', () => {
  it('kills one that outlives its time, and says so', async () => {
    const started = Date.now()
    const end = await runProgram([process.execPath, '-e', 'process.on("SIGTERM", () => {}); setTimeout(() => {}, 60_000)'], { cwd: os.homedir(), env: process.env, timeoutMs: 300 })
    expect(end).toEqual({ ok: false, what: 'did not finish within 0.3 s and was stopped' })
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('does not mind a program that never reads its stdin', async () => {
    expect(await runProgram([process.execPath, '-e', ''], { stdin: 'x'.repeat(1 << 20), cwd: os.homedir(), env: process.env, timeoutMs: 10_000 })).toEqual({ ok: true })
  })
})
