import type { Hook } from '../../lib/oclif.js'
import type { LaunchAnnouncement, LaunchPreview } from '@omh/sandbox'
import { droppedDetail, droppedSummary } from '../../lib/dropped.js'
import { formatError, serializeError, toOmhError } from '../../lib/failure.js'
import { createKernel } from '../../lib/kernel.js'
import { parseLaunch, type LaunchFlags } from '../../lib/launch-argv.js'
import { rawArgv } from '../../lib/route.js'
import { printableJson } from '../../lib/printable.js'
import { reserveStdout } from '../../lib/stdout.js'
import { colorEnabled, colorModeFromArgv, createStyle, terminalText } from '../../lib/style.js'
import { describePlan, planJson } from '../../lib/plan-view.js'

/**
 * `omh [flags] <harness> [args…]`: any word that is not a command is a
 * harness. Creates or reuses a session, runs the harness in it with the
 * user's terminal, and exits with the harness's status.
 */
const hook: Hook.CommandNotFound = async function (options) {
  const argv = rawArgv() ?? [...options.id.split(':'), ...(options.argv ?? [])]
  const jsonAsked = argv.slice(0, Math.max(argv.indexOf(options.id.split(':')[0]!), 0)).includes('--json')
  const errStyle = createStyle(colorEnabled(colorModeFromArgv(argv), { json: jsonAsked, isTTY: Boolean(process.stderr.isTTY), env: process.env }))
  const say = (line: string) => process.stderr.write(`${terminalText(line, errStyle)}\n`)
  const stdout = reserveStdout()
  let flags: LaunchFlags | undefined
  try {
    const parsed = parseLaunch(argv)
    flags = parsed.flags
    const kernel = await createKernel(options.config.root)
    const tty = Boolean(process.stdin.isTTY && process.stdout.isTTY)
    const request = {
      harness: parsed.harness,
      args: parsed.args,
      tty,
      ...(flags.session ? { session: flags.session } : {}),
      ...(flags.new ? { fresh: true } : {}),
      ...(flags.runtime ? { engine: flags.runtime } : {}),
      ...(flags.account ? { account: flags.account } : {}),
    }
    const { launch, previewLaunch } = await import('@omh/sandbox')
    const verbose = flags.verbose
    const announce = (a: Pick<LaunchAnnouncement, 'harness' | 'branch' | 'dropped' | 'notices'>) => {
      for (const notice of a.notices) say(`${errStyle.bold('omh:')} ${notice}`)
      const summary = droppedSummary(a.dropped)
      say(`${errStyle.bold('omh:')} ${a.harness} on ${a.branch}${summary ? ` — ${summary}` : ''}`)
      if (verbose) for (const line of droppedDetail(a.dropped)) say(line)
    }
    if (flags.dryRun) {
      const preview: LaunchPreview = await previewLaunch(kernel, request)
      if (flags.json) {
        stdout.answer(`${printableJson({ status: 0, result: planJson(preview), warnings: [] })}\n`)
        return
      }
      announce({ ...preview, dropped: preview.render.dropped })
      const style = createStyle(colorEnabled(flags.color, { json: false, isTTY: Boolean(process.stdout.isTTY), env: process.env }))
      stdout.answer(describePlan(preview, style))
      return
    }
    const status = await launch(kernel, request, {
      context: {
        env: process.env,
        verbose,
        progress: (line) => say(errStyle.dim(line)),
      },
      notice: (line) => say(`${errStyle.bold('omh:')} ${line}`),
      announce,
    })
    if (status !== 0) this.exit(status)
  } catch (error) {
    if ((error as { oclif?: unknown }).oclif) throw error
    const failure = toOmhError(error)
    const json = flags?.json ?? jsonAsked
    if (json) stdout.answer(`${printableJson({ status: failure.exit, error: serializeError(failure, Boolean(flags?.verbose)) })}\n`)
    else process.stderr.write(formatError(failure, errStyle, Boolean(flags?.verbose ?? argv.includes('--verbose'))))
    this.exit(failure.exit)
  } finally {
    stdout.release()
  }
}

export default hook
