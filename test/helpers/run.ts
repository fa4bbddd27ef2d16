import { spawnSync } from 'node:child_process'
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
export function omh(args: readonly string[], options: { cwd?: string; env?: Record<string, string | undefined>; input?: string } = {}): Ran {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env }
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: env as NodeJS.ProcessEnv,
    encoding: 'utf8',
    input: options.input ?? '',
    timeout: 60_000,
  })
  return {
    status: result.status ?? -1,
    stdout: result.stdout,
    stderr: result.stderr,
    json: () => JSON.parse(result.stdout),
  }
}
