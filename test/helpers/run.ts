import { spawn, spawnSync } from 'node:child_process'
import path from 'node:path'

export const ROOT = path.resolve(import.meta.dirname, '../..')
export const BIN = path.join(ROOT, 'bin/run.js')

export interface Ran {
  status: number
  stdout: string
  stderr: string
  /** stdout parsed as the one JSON document `--json` promises. */
  json<T = any>(): T
}

/** Runs the built CLI as a user would: a child process, its own cwd and environment. */
export function omh(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string | undefined>; input?: string; timeout?: number } = {},
): Ran {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env }
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
      env: { ...process.env, NO_COLOR: '1', ...options.env },
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
