import { execFileSync, spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import type { Readable } from 'node:stream'
import path from 'node:path'
import { write } from '@omh/test-utils'

export const ROOT = path.resolve(import.meta.dirname, '../..')
export const BIN = path.join(ROOT, 'bin/run.js')

/**
 * Where a test's omh keeps its state: beside nothing of the user's, inside the
 * test's own OMH_HOME (removed with it), unless the test names OMH_STATE.
 */
export const stateOf = (home: string): string => path.join(home, '.state')

/**
 * The environment a test's omh runs in: this process's, without the omh
 * settings of the shell that runs the tests (a developer's exported
 * OMH_HOME or OMH_STATE must not reach a test), then the test's own.
 */
export function testEnv(own: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  // Nor vitest's NODE_ENV=test, which no user has: with it oclif reads this checkout's
  // tsconfig.json through TypeScript, about 110 ms of every run.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => (!key.startsWith('OMH_') || key.startsWith('OMH_TEST_')) && key !== 'NODE_ENV'))
  return withState({ ...inherited, NO_COLOR: '1', ...own })
}

function withState(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const home = env['OMH_HOME']
  return home && env['OMH_STATE'] === undefined ? { ...env, OMH_STATE: stateOf(home) } : env
}

export interface Ran {
  status: number
  stdout: string
  stderr: string
  /** The process's id: what tells a run from the replay of an earlier one. */
  pid?: number
  /** stdout parsed as the one JSON document `--json` promises. */
  json<T = any>(): T
}

/** Runs the built CLI as a user would: a child process, its own cwd and environment. */
export function omh(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string | undefined>; input?: string; timeout?: number } = {},
): Ran {
  const env = testEnv(options.env)
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: env as NodeJS.ProcessEnv,
    encoding: 'utf8',
    input: options.input ?? '',
    timeout: options.timeout ?? 60_000,
  })
  return {
    status: result.status ?? -1,
    stdout: result.stdout,
    stderr: result.stderr,
    pid: result.pid,
    json: () => JSON.parse(result.stdout),
  }
}

/**
 * The built CLI, asynchronously and without a time limit: for commands that
 * build images for minutes (progress streams on stderr).
 */
export function omhAsync(args: readonly string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<Omit<Ran, 'json'>> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: testEnv(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', (error) => resolve({ status: -1, stdout, stderr: `${stderr}${error.message}` }))
    child.on('close', (status) => resolve({ status: status ?? -1, stdout, stderr }))
  })
}

/**
 * What a child started with piped stdout and stderr printed, once it exits;
 * killed after `timeoutMs`, so a hang fails its test with what it printed
 * instead of stalling the run. `OMH_TEST_ECHO` echoes its stderr as it comes.
 */
export function finished(child: ChildProcessByStdio<null, Readable, Readable>, timeoutMs: number): Promise<Omit<Ran, 'json'>> {
  return new Promise((resolve) => {
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d))
    child.stderr.on('data', (d: Buffer) => {
      stderr += d
      if (process.env['OMH_TEST_ECHO']) process.stderr.write(d)
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ status: code ?? -1, stdout, stderr })
    })
  })
}

/**
 * An OMH_HOME whose harness is the probe (test/fixtures/adapters/probe.toml), with these user
 * settings and one rules section; and a repository beside it with one commit of `files` on main.
 */
export function probeProject(home: string, settings: string, root: string, files: Record<string, string>): void {
  write(home, { 'settings.toml': settings, 'rules/style.md': 'Be brief.\n', 'adapters/probe.toml': readFileSync(path.join(ROOT, 'test/fixtures/adapters/probe.toml'), 'utf8') })
  write(root, files)
  const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }
  for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['commit', '-q', '-m', 'init']]) {
    execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd: root, stdio: 'pipe', env: { ...process.env, ...identity } })
  }
}

/** Polls `done` every quarter second; fails, naming `what`, once three minutes pass without it. */
export async function until(what: string, done: () => boolean): Promise<void> {
  for (const start = Date.now(); !done(); await new Promise((resolve) => setTimeout(resolve, 250))) {
    if (Date.now() - start > 180_000) throw new Error(`waited three minutes for ${what}`)
  }
}

/** A spare's mark as omh writes it (packages/sandbox/src/session/spare.ts). */
export interface SpareMark {
  readonly harness: string
  readonly base: string
  readonly ready: boolean
}

/** Every spare under a state directory: its repository's run directory, its id and its mark. */
export function spareMarks(state: string): { run: string; sid: string; mark: SpareMark }[] {
  const runs = path.join(state, 'run')
  if (!existsSync(runs)) return []
  return readdirSync(runs)
    .filter((name) => !name.startsWith('.'))
    .flatMap((repo) =>
      readdirSync(path.join(runs, repo)).flatMap((sid) => {
        try {
          return [{ run: path.join(runs, repo), sid, mark: JSON.parse(readFileSync(path.join(runs, repo, sid, 'spare.json'), 'utf8')) as SpareMark }]
        } catch {
          return []
        }
      }),
    )
}
