import { setTimeout as sleep } from 'node:timers/promises'
import { isOmhError, type RuntimePlugin } from '@omh/plugin-api'
import { knownRepositories, registerRepository, type Repository } from '@omh/sandbox'
import { Flags } from '../../lib/oclif.js'
import { printableJson } from '../../lib/printable.js'
import { repositoryRows } from '../../lib/session-board.js'
import { watchFrame, type BoardRepository } from '../../lib/session-state.js'
import { SessionsCommand } from '../../lib/sessions-command.js'
import { terminalText } from '../../lib/style.js'

export interface SessionsWatchResult {
  /** Unix seconds of the look. */
  at: number
  repositories: BoardRepository[]
  warnings: string[]
}

/** The terminal's own controls, written by omh alone: never with a byte of what the sessions hold. */
const SCREEN = {
  enter: '\u001b[?1049h\u001b[?25l',
  leave: '\u001b[?25h\u001b[?1049l',
  home: '\u001b[H',
  clearLine: '\u001b[K',
  clearBelow: '\u001b[J',
}

export default class SessionsWatch extends SessionsCommand<SessionsWatchResult> {
  static override summary = 'Follow the sessions of every repository, live: what each harness does, its branch, work ahead, files changed and shared.'
  static override description =
    "One line per session of every repository omh has sessions of, redrawn in place every few seconds: the state its harness's own hooks last reported (working, waiting for you, finished with its exit status), when it last did something, commits ahead of the default branch, files changed since it, and the other sessions that changed some of the same files. q or Ctrl-C leaves. Not on a terminal, it prints the board again each time it changes; with --json, one JSON document per line each time it changes; --once looks once."
  static override flags = {
    runtime: SessionsCommand.runtimeFlag,
    interval: Flags.integer({ summary: 'Seconds between looks.', default: 2, min: 1, max: 3600, helpValue: '<seconds>' }),
    once: Flags.boolean({ summary: 'Look once, print and exit.', default: false }),
  }
  static override examples = ['omh sessions watch', 'omh sessions watch --once', 'omh sessions watch --json | jq .repositories']

  #runtimes = new Map<string, RuntimePlugin>()

  async run(): Promise<SessionsWatchResult> {
    const { flags } = await this.parse(SessionsWatch)
    const kernel = await this.kernel()
    if (kernel.repoRoot) await registerRepository(kernel.omhState, (await this.sessions()).repo).catch(() => undefined)
    const look = async (): Promise<SessionsWatchResult> => {
      const warnings: string[] = []
      const repositories: BoardRepository[] = []
      for (const repo of await knownRepositories(kernel.omhState)) repositories.push(await this.lookAt(repo, flags.runtime, warnings))
      return { at: Math.floor(Date.now() / 1000), repositories, warnings: [...new Set(warnings)] }
    }
    if (flags.once) {
      const board = await look()
      for (const w of board.warnings) this.warn(w)
      if (!this.jsonEnabled()) this.log(watchFrame(board.repositories, this.style, board.at, this.width).join('\n'))
      return board
    }
    const screen = Boolean(process.stdout.isTTY) && !this.jsonEnabled()
    let last = ''
    let board: SessionsWatchResult | undefined
    const draw = () => {
      if (!board) return
      const lines = [...watchFrame(board.repositories, this.style, board.at, this.width), ...board.warnings.map((w) => this.style.yellow(`omh: ${w}`))]
      this.answer(SCREEN.home + lines.map((l) => terminalText(l, this.style) + SCREEN.clearLine).join('\n') + '\n' + SCREEN.clearBelow)
    }
    const stop = this.untilStopped(screen, draw)
    if (screen) this.answer(SCREEN.enter)
    try {
      while (!stop.signal.aborted) {
        board = await look()
        if (screen) draw()
        else {
          // Printed again only when it changed: the look's time and how long ago each thing was done do not count.
          const same = JSON.stringify({ ...board, at: 0, repositories: board.repositories.map((r) => ({ ...r, sessions: r.sessions.map(({ state, ...rest }) => ({ ...rest, state: state && { ...state, lastActive: 0 } })) })) })
          if (same !== last) {
            last = same
            if (this.jsonEnabled()) this.answer(`${printableJson(board)}\n`)
            else this.answer(`${[...watchFrame(board.repositories, this.style, board.at, this.width), ...board.warnings.map((w) => `omh: ${w}`)].map((l) => terminalText(l, this.style)).join('\n')}\n\n`)
          }
        }
        await sleep(flags.interval * 1000, undefined, { signal: stop.signal }).catch(() => undefined)
      }
    } finally {
      if (screen) this.answer(SCREEN.leave)
      stop.release()
    }
    // The stream was the answer: no closing document after it.
    if (this.jsonEnabled()) this.exit(0)
    return board!
  }

  private get width(): number {
    return process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 80
  }

  /** One repository's rows; an engine that does not answer is a warning on the board, asked again at the next look. */
  private async lookAt(repo: Repository, engine: string | undefined, warnings: string[]): Promise<BoardRepository> {
    const kernel = await this.kernel()
    const context = { env: process.env, verbose: false, progress: () => undefined }
    const rows = await repositoryRows(repo, {
      omhState: kernel.omhState,
      context,
      engine,
      runtime: async (name) => {
        const key = name ?? ''
        const kept = this.#runtimes.get(key)
        if (kept) return kept
        try {
          const { runtime } = await kernel.resolveRuntime(name, context)
          this.#runtimes.set(key, runtime)
          return runtime
        } catch (error) {
          if (!isOmhError(error)) throw error
          warnings.push(`${error.message} Containers are shown as unknown.`)
          return undefined
        }
      },
      warn: (line) => warnings.push(line),
    }).catch((error: Error) => {
      warnings.push(`${repo.root}: ${error.message}`)
      return { base: null, sessions: [] }
    })
    return { repository: repo.root, ...rows }
  }

  /** Ctrl-C, SIGTERM, or q on the terminal end the watch; a resize redraws. */
  private untilStopped(screen: boolean, redraw: () => void): { signal: AbortSignal; release(): void } {
    const stop = new AbortController()
    const end = () => stop.abort()
    process.once('SIGINT', end)
    process.once('SIGTERM', end)
    const keys = (data: Buffer) => {
      if (data.includes(0x71) || data.includes(0x03)) end()
    }
    const raw = screen && process.stdin.isTTY
    if (raw) {
      process.stdin.setRawMode(true)
      process.stdin.on('data', keys)
    }
    if (screen) process.stdout.on('resize', redraw)
    return {
      signal: stop.signal,
      release: () => {
        process.off('SIGINT', end)
        process.off('SIGTERM', end)
        process.stdout.off('resize', redraw)
        if (raw) {
          process.stdin.off('data', keys)
          process.stdin.setRawMode(false)
          process.stdin.pause()
        }
      },
    }
  }
}
