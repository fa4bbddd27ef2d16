// Why a client's `version` did not answer, in words a user can act on.

/** What the user should do, per way an engine can be unusable. One sentence each. */
export interface DetectAdvice {
  readonly notInstalled: string
  readonly notAnswering: string
  readonly permission: string
}

/** What `version` did, reduced to what the reason depends on. */
export interface DetectOutcome {
  readonly program: string
  /** The program is not on PATH. */
  readonly missing: boolean
  readonly timedOut: boolean
  readonly timeoutSeconds: number
  readonly stderr: string
  /** Where the client connects, when not the local default (`tcp://…`, `context work`). */
  readonly target: string | undefined
}

const PERMISSION = /permission denied|access denied|EACCES|not permitted/i

/** The last line of the client's complaint, stripped of its own "Error:" framing. */
export function complaint(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^(WARN|DEPRECATED)/i.test(l) && !/^(see|run) '.*--help'/i.test(l))
  return (lines.at(-1) ?? '').replace(/^(docker:\s*)?(error:\s*|error response from daemon:\s*)/i, '')
}

export function classifyDetect(outcome: DetectOutcome, advice: DetectAdvice): { reason: string; hint: string } {
  const at = outcome.target ? ` at ${outcome.target}` : ''
  if (outcome.missing) return { reason: `not installed (no \`${outcome.program}\` on PATH)`, hint: advice.notInstalled }
  if (outcome.timedOut) {
    return { reason: `installed, but the engine${at} did not answer within ${outcome.timeoutSeconds} s`, hint: advice.notAnswering }
  }
  const said = complaint(outcome.stderr)
  if (PERMISSION.test(outcome.stderr)) {
    return { reason: `installed, but this user may not use the engine${at}${said ? ` (${said})` : ''}`, hint: advice.permission }
  }
  return { reason: `installed, but the engine${at} does not answer${said ? ` (${said})` : ''}`, hint: advice.notAnswering }
}
