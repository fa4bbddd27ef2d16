import { createWriteStream } from 'node:fs'
import type { RuntimePlugin } from '@omh/plugin-api'
import { OmhCommand } from '../../lib/omh-command.js'
import { noteTrouble, runNotifier } from '../../lib/notifier.js'
import { deliver } from '../../lib/notify.js'

export default class SessionsNotifier extends OmhCommand<void> {
  static override hidden = true
  static override summary = "omh's notifier: tells you on this machine when a session's harness waits for you or finishes. `omh --detach` starts it."

  async run(): Promise<void> {
    await this.parse(SessionsNotifier)
    const kernel = await this.kernel()
    const settings = kernel.settings.notify
    const stop = new AbortController()
    process.once('SIGTERM', () => stop.abort())
    process.once('SIGINT', () => stop.abort())
    const context = { env: process.env, verbose: false, progress: () => undefined }
    const runtimes = new Map<string, RuntimePlugin>()
    // Its stdout is the terminal that started it, when there was one: where OSC 9 and the bell go.
    const terminal = process.stdout.isTTY ? createWriteStream('', { fd: 1, autoClose: false }) : undefined
    await runNotifier({
      omhState: kernel.omhState,
      context,
      signal: stop.signal,
      runtime: async (engine) => {
        const kept = runtimes.get(engine)
        if (kept) return kept
        const resolved = await kernel.resolveRuntime(engine, context).catch(() => undefined)
        if (resolved) runtimes.set(engine, resolved.runtime)
        return resolved?.runtime
      },
      tell: (event) => deliver(event, settings, { env: process.env, ...(terminal ? { terminal } : {}), warn: (line) => void noteTrouble(kernel.omhState, line) }),
    })
  }
}
