import path from 'node:path'
import { INTERNAL, OmhError, USAGE, isOmhError, type Problem } from '@omh/plugin-api'
import { terminalText, type Style } from './style.js'

/** Anything thrown, as the OmhError the user is shown. Unknown errors are INTERNAL, never a stack trace. */
export function toOmhError(error: unknown, command?: string): OmhError {
  if (isOmhError(error)) return error
  const oclif = (error as { oclif?: { exit?: number } } | undefined)?.oclif
  if (error instanceof Error && oclif && (oclif.exit === 2 || error.constructor.name.includes('Parse') || /flag|argument/i.test(error.message))) {
    const what = error.message.replace(/\n*See more help with --help\s*$/, '').trim()
    return OmhError.of(USAGE, { args: [what], hintArgs: [command ?? '<command>'], cause: error })
  }
  const what = error instanceof Error ? error.message : String(error)
  return OmhError.of(INTERNAL, { args: [what.split('\n')[0] ?? what], cause: error })
}

/** A file name on one line: a line break in it is shown as `\n`, so the name cannot pass for another line of the report. */
const relative = (file: string) => {
  const rel = path.relative(process.cwd(), file)
  return (rel && !rel.startsWith('..') ? rel : file).replace(/[\n\t]/g, (c) => (c === '\n' ? '\\n' : '\\t'))
}

export function formatProblem(problem: Problem, mainFile: string | undefined, style: Style): string {
  const where: string[] = []
  if (problem.file && problem.file !== mainFile) where.push(relative(problem.file))
  if (problem.line) where.push(`line ${problem.line}${problem.column ? `, col ${problem.column}` : ''}`)
  const at = where.length ? `${style.dim(where.join(' '))}  ` : ''
  const key = problem.path ? `${style.bold(problem.path)}: ` : ''
  const near = problem.suggestion ? ` — did you mean "${problem.suggestion}"?` : ''
  return `  ${style.red('!')} ${at}${key}${problem.message}${near}`
}

/**
 * What a cause says. A plugin may pass anything as a cause, a client's result
 * object included: its own words (message, stderr) are shown, never the
 * object's `[object Object]`.
 */
export function causeText(cause: unknown, withStack = false): string {
  if (cause instanceof Error) return withStack && cause.stack ? cause.stack : cause.message
  if (cause && typeof cause === 'object') {
    const said = ['shortMessage', 'message', 'stderr']
      .map((key) => (cause as Record<string, unknown>)[key])
      .filter((text): text is string => typeof text === 'string' && text.trim() !== '')
    if (said.length) return [...new Set(said.map((text) => text.trim()))].join('\n')
    try {
      return JSON.stringify(cause)
    } catch {
      return Object.prototype.toString.call(cause)
    }
  }
  return String(cause)
}

/** The human report of an error, for stderr; file names, keys and values in it are shown as text. */
export function formatError(error: OmhError, style: Style, verbose: boolean): string {
  // A problem names its file only when the headline has not already named it.
  const files = new Set(error.problems.map((p) => p.file))
  const only = files.size === 1 ? [...files][0] : undefined
  const mainFile = only && error.message.includes(only) ? only : undefined
  const lines = [`${style.red(style.bold('Error:'))} ${error.message}`]
  for (const problem of error.problems) lines.push(formatProblem(problem, mainFile, style))
  const codeblock = error.details?.['codeblock']
  if (typeof codeblock === 'string' && codeblock) lines.push('', codeblock.replace(/^/gm, '  '), '')
  if (error.hint) lines.push(`${style.bold('Try this:')} ${error.hint}`)
  lines.push(style.dim(`Code: ${error.code}`))
  if (verbose) {
    for (let cause = error.cause, depth = 1; cause !== undefined && depth < 8; depth++) {
      const text = causeText(cause, error.code === 'INTERNAL')
      lines.push(style.dim(`  because: ${text.replace(/\n/g, '\n  ')}`))
      cause = cause instanceof Error ? cause.cause : undefined
    }
  }
  return `${terminalText(lines.join('\n'), style)}\n`
}

/** The error as `--json` carries it. */
export function serializeError(error: OmhError, verbose: boolean): Record<string, unknown> {
  const causes: string[] = []
  for (let cause = error.cause, depth = 0; cause !== undefined && depth < 8; depth++) {
    causes.push(causeText(cause))
    cause = cause instanceof Error ? cause.cause : undefined
  }
  return {
    name: error.name,
    code: error.code,
    message: error.message,
    ...(error.hint ? { hint: error.hint } : {}),
    ...(error.problems.length ? { problems: error.problems } : {}),
    ...(error.details ? { details: error.details } : {}),
    ...(causes.length && (verbose || error.code !== 'INTERNAL') ? { cause: causes } : {}),
  }
}
