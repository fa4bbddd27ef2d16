/** stdout held for a command's answer, and the way to give it back. */
export interface ReservedStdout {
  /** Writes part of the answer. */
  answer(text: string): void
  release(): void
}

/**
 * Keeps stdout for the answer while a command runs. Plugins are other
 * people's code loaded into this process: what they print (a console.log at
 * import, in a hook) goes to stderr, so stdout stays the one document
 * `--json` promises, or the human answer.
 */
export function reserveStdout(): ReservedStdout {
  const write = process.stdout.write
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write
  return {
    answer: (text) => void write.call(process.stdout, text),
    release: () => void (process.stdout.write = write),
  }
}
