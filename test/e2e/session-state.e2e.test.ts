/**
 * What `omh sessions ls` and `show` say a harness in the background does, told by the real Claude
 * Code through the state hooks every launch adds, on Docker and Podman. The harness talks to the
 * scripted model (packages/doctor/src/scripted-model.ts) on 127.0.0.1 inside its container; nothing
 * is mocked. A state file the agent spoiled is shown as unknown, and nothing of it is printed.
 */
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Script } from '../../packages/doctor/src/scripted-model.js'
import { ENGINES, TEST_BASE, client } from '../helpers/engines.js'
import { BIN, finished, stateOf } from '../helpers/run.js'
import { heardRequests, MODEL_PORT, startScriptedModel } from '../helpers/turns.js'

const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }
const KEY = 'omh-scripted'

interface Row {
  id: string
  state: { harness: string; state: string; exit?: number; from: string; lastActive?: number } | null
}

describe.each(ENGINES)('harness states on %s', (engine) => {
  let scratch: string
  let home: string
  let repo: string
  const omh = (args: readonly string[]) =>
    finished(spawn(process.execPath, [BIN, ...args], { cwd: repo, env: { ...process.env, NO_COLOR: '1', OMH_HOME: home, OMH_STATE: stateOf(home), ...identity }, stdio: ['ignore', 'pipe', 'pipe'] }), 600_000)
  const worktree = (sid: string) => path.join(stateOf(home), 'worktrees', readdirSync(path.join(stateOf(home), 'worktrees'))[0]!, sid)
  const row = async (sid: string): Promise<Row | undefined> => {
    const ls = await omh(['--json', 'sessions', 'ls'])
    expect(ls.status, ls.stderr).toBe(0)
    return (JSON.parse(ls.stdout).result.sessions as Row[]).find((r) => r.id === sid)
  }
  /** The session's state once `done` holds, asked every second for at most `seconds`. */
  const until = async (sid: string, done: (r: Row | undefined) => boolean, seconds = 120): Promise<Row | undefined> => {
    let last: Row | undefined
    for (let n = 0; n < seconds; n++) {
      last = await row(sid)
      if (done(last)) return last
      await new Promise((r) => setTimeout(r, 1000))
    }
    return last
  }

  /** A session with its container up and the scripted model listening in it. */
  async function sessionWithModel(script: Script): Promise<{ sid: string; turn: string; container: string }> {
    const first = await omh(['--new', 'claude', '--', '--version'])
    expect(first.status, first.stderr).toBe(0)
    const sid = /omh: \S+ on omh\/(s\d+)/.exec(first.stderr)![1]!
    const container = client(engine, ['ps', '-q', '--filter', `label=omh.worktree=${worktree(sid)}`]).stdout.trim()
    expect(container).not.toBe('')
    return { sid, turn: await startScriptedModel(engine, container, worktree(sid), script), container }
  }

  beforeAll(() => {
    scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-state-e2e-')))
    home = path.join(scratch, 'omh')
    mkdirSync(home)
    writeFileSync(path.join(home, 'settings.toml'), `runtime = "${engine}"\n\n[image]\nbase = "${TEST_BASE}"\nnetwork = "host"\n`)
    // Claude's own state, as a user who finished its first-run questions leaves it: onboarded, the key
    // approved (Claude keeps its last 20 characters) and /work trusted. Interactive, it asks otherwise.
    const creds = path.join(stateOf(home), 'creds', 'claude', 'default')
    mkdirSync(creds, { recursive: true, mode: 0o700 })
    const trusted = { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true }
    writeFileSync(path.join(creds, '.claude.json'), JSON.stringify({ hasCompletedOnboarding: true, customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] }, projects: { '/work': trusted } }), { mode: 0o600 })
    repo = path.join(scratch, 'repo')
    mkdirSync(path.join(repo, '.claude'), { recursive: true })
    const env = { ANTHROPIC_BASE_URL: `http://127.0.0.1:${MODEL_PORT}`, ANTHROPIC_API_KEY: KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' }
    writeFileSync(path.join(repo, '.claude', 'settings.json'), JSON.stringify({ env }))
    writeFileSync(path.join(repo, 'README.md'), 'hi\n')
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe', env: { ...process.env, ...identity } })
    git('init', '-q', '-b', 'main')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
  })

  afterAll(async () => {
    if (!home) return
    const worktrees = path.join(stateOf(home), 'worktrees')
    for (const key of existsSync(worktrees) ? readdirSync(worktrees) : []) for (const sid of readdirSync(path.join(worktrees, key))) await omh(['sessions', 'rm', sid, '--force'])
    // The agent's files in the session belong to its user: made removable before they go.
    if (existsSync(scratch)) execFileSync('chmod', ['-R', 'u+rwX', scratch])
    rmSync(scratch, { recursive: true, force: true })
  })

  it('a one-shot claude -p in the background shows finished (exit 0), and show keeps the prompt it was given', async () => {
    const { sid } = await sessionWithModel({ replies: [{ text: 'Done.' }] })
    const args = ['-p', 'Say you are done.', '--dangerously-skip-permissions']
    const started = await omh(['--detach', '--session', sid, 'claude', ...args])
    expect(started.status, started.stderr).toBe(0)
    expect(started.stdout.trim()).toBe(sid)
    const done = await until(sid, (r) => r?.state?.state === 'finished')
    expect(done?.state).toMatchObject({ harness: 'claude', state: 'finished', exit: 0, from: 'process' })
    expect(done!.state!.lastActive).toBeGreaterThan(Date.now() / 1000 - 600)
    const ls = await omh(['sessions', 'ls'])
    expect(ls.stdout).toMatch(new RegExp(`^${sid} +claude +finished \\(exit 0\\) +\\d+[smh] ago`, 'm'))
    const show = await omh(['sessions', 'show', sid, '--json'])
    expect(show.status, show.stderr).toBe(0)
    expect(JSON.parse(show.stdout).result).toMatchObject({ session: sid, branch: `omh/${sid}`, harness: 'claude', state: { state: 'finished', exit: 0 }, prompt: args })
    const shown = await omh(['sessions', 'show', sid])
    expect(shown.stdout).toContain("prompt       -p 'Say you are done.' --dangerously-skip-permissions")
  })

  it('an interactive claude asking to run a tool shows waiting; a state file the agent spoiled shows unknown, and none of it is printed', async () => {
    // The model asks for a shell call, which Claude in its default permission mode asks the user about.
    const { sid, turn } = await sessionWithModel({ replies: [{ call: 'Bash', input: { command: 'touch /work/made-by-the-tool', description: 'make a file' } }, { text: 'Done.' }] })
    const started = await omh(['--detach', '--session', sid, 'claude', '--permission-mode', 'default', 'Make the file.'])
    expect(started.status, started.stderr).toBe(0)
    const waiting = await until(sid, (r) => r?.state?.state === 'waiting')
    expect(waiting?.state).toMatchObject({ harness: 'claude', state: 'waiting', from: 'hooks' })
    // Waiting at the prompt, not at the end of a turn: the tool has not run and the model was asked once.
    expect(existsSync(path.join(worktree(sid), 'made-by-the-tool'))).toBe(false)
    expect(heardRequests(turn).filter((r) => r.reply !== null)).toHaveLength(1)
    const show = JSON.parse((await omh(['sessions', 'show', sid, '--json'])).stdout).result
    expect(show).toMatchObject({ state: { state: 'waiting' }, prompt: ['--permission-mode', 'default', 'Make the file.'] })

    // The agent's user can write the file: escape sequences and a state omh does not know.
    const spoiled = '{"state":"\\u001b]0;owned\\u0007\\u001b[2Jpwned","at":1800000000}\n\u001b]0;owned-title\u0007'
    const wrote = await omh(['sessions', 'exec', sid, '--', 'sh', '-c', 'printf %s "$1" > /omh/sock/claude.state', 'sh', spoiled])
    expect(wrote.status, wrote.stderr).toBe(0)
    const unknown = await row(sid)
    expect(unknown?.state).toEqual({ harness: 'claude', state: 'unknown', from: 'hooks' })
    for (const args of [['sessions', 'ls'], ['--json', 'sessions', 'ls'], ['sessions', 'show', sid], ['sessions', 'show', sid, '--json']]) {
      const r = await omh(args)
      expect(r.status, r.stderr).toBe(0)
      for (const out of [r.stdout, r.stderr]) {
        expect(out).not.toContain('\u001b')
        expect(out).not.toContain('\u0007')
        expect(out).not.toContain('owned')
      }
    }
    expect((await omh(['sessions', 'ls'])).stdout).toMatch(new RegExp(`^${sid} +claude +unknown `, 'm'))
    // A FIFO where the file was does not hang the host; it is unknown too.
    expect((await omh(['sessions', 'exec', sid, '--', 'sh', '-c', 'rm -f /omh/sock/claude.state && mkfifo /omh/sock/claude.state'])).status).toBe(0)
    expect((await row(sid))?.state?.state).toBe('unknown')
    chmodSync(turn, 0o777)
  })
})
