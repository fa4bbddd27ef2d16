// Runs the engine's client once, on node:child_process. Every call but a build
// goes through here: loading execa cost about 40 ms of the first engine call of
// every command on these machines, more than most of those calls take.
import { spawn } from 'node:child_process'

/** How one run of the client ended. Never a rejection: `failed` says whether it worked. */
export interface ClientResult {
  /** The command line, for messages. */
  readonly command: string
  /** The client's exit status; undefined when it could not start or was killed by a signal. */
  readonly exitCode: number | undefined
  /** Captured output; empty when it went to the user's terminal. */
  readonly stdout: string
  readonly stderr: string
  /** It did not start, did not exit 0, timed out or was killed. */
  readonly failed: boolean
  readonly timedOut: boolean
  /** The reason it could not start (`ENOENT`: not on PATH), when it could not. */
  readonly code?: string
  /** One line saying how it ended, the way execa words it, for error messages. */
  readonly shortMessage: string
}

/**
 * A failed client as an Error for an OmhError's cause: how it ended and, below,
 * the engine's own words on stderr, which `--verbose` shows.
 */
export function clientFailure(result: ClientResult): Error {
  const said = result.stderr.trim()
  return new Error(said ? `${result.shortMessage}\n${said}` : result.shortMessage)
}

export interface ClientOptions {
  /** The client's whole environment; nothing is inherited besides it. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** `inherit`: the user's stdin (a terminal, for an interactive harness); a number: that open file. */
  readonly stdin?: 'ignore' | 'inherit' | number
  /** An open file stdout goes to instead of being captured (an archive). */
  readonly stdoutTo?: number
  /** `inherit`: the user's stdout and stderr, nothing captured. */
  readonly output?: 'pipe' | 'inherit'
  /** Captured stdout loses one final line break, as a shell's `$(…)` would. */
  readonly stripFinalNewline?: boolean
  /** Milliseconds before the client is sent SIGTERM and the call counts as timed out. */
  readonly timeout?: number
  /** Milliseconds after that SIGTERM before SIGKILL, for a client that does not stop; default 5000. */
  readonly killAfter?: number
  readonly signal?: AbortSignal
}

export function runClient(program: string, args: readonly string[], options: ClientOptions): Promise<ClientResult> {
  const command = [program, ...args].join(' ')
  const piped = options.output !== 'inherit'
  return new Promise((resolve) => {
    let stdout = ''
    let stderr = ''
    let timedOut = false
    let startError: NodeJS.ErrnoException | undefined
    const child = spawn(program, args, {
      env: options.env as NodeJS.ProcessEnv,
      stdio: [options.stdin ?? 'ignore', options.stdoutTo ?? (piped ? 'pipe' : 'inherit'), piped ? 'pipe' : 'inherit'],
      ...(options.signal ? { signal: options.signal } : {}),
    })
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    let killer: NodeJS.Timeout | undefined
    const timer = options.timeout
      ? setTimeout(() => {
          timedOut = true
          child.kill('SIGTERM')
          killer = setTimeout(() => child.kill('SIGKILL'), options.killAfter ?? 5000)
        }, options.timeout)
      : undefined
    child.on('error', (error) => (startError ??= error))
    child.on('close', (status, signal) => {
      clearTimeout(timer)
      clearTimeout(killer)
      const code = startError?.code
      const exitCode = code || signal || status === null ? undefined : status
      const strip = (text: string) => (options.stripFinalNewline ? text.replace(/\r?\n$/, '') : text)
      resolve({
        command,
        exitCode,
        stdout: strip(stdout),
        stderr: strip(stderr),
        // A client stopped by its timeout did not finish, whatever status it chose on the way out.
        failed: timedOut || exitCode !== 0,
        timedOut,
        ...(code ? { code } : {}),
        shortMessage: timedOut
          ? `Command timed out after ${options.timeout} milliseconds: ${command}`
          : code
            ? `Command failed with ${code}: ${command}`
            : signal
              ? `Command was killed with ${signal}: ${command}`
              : `Command failed with exit code ${status}: ${command}`,
      })
    })
  })
}
