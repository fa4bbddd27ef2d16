import { Args } from '../../lib/oclif.js'
import { OmhCommand } from '../../lib/omh-command.js'

/** What making a spare came to: made, one standing already, or turned off by `[session] spare = 0`. */
export interface SessionsSpareResult {
  readonly spare: 'made' | 'standing' | 'off'
}

export default class SessionsSpare extends OmhCommand<SessionsSpareResult> {
  static override hidden = true
  static override summary = "Make this repository's prepared spare of a harness, for the next `omh --new` to claim. A launch starts it in the background."
  static override args = { harness: Args.string({ description: 'The harness the spare is for.', required: true }) }

  async run(): Promise<SessionsSpareResult> {
    const { args } = await this.parse(SessionsSpare)
    const kernel = await this.kernel()
    const { launch, makeSpare, Sessions } = await import('@omh/sandbox')
    const host = {
      context: { env: process.env, verbose: false, progress: () => undefined },
      notice: () => undefined,
      announce: () => undefined,
    }
    const spare = await makeSpare(kernel, Sessions.of(kernel), args.harness, host, (request) => launch(kernel, request, host))
    return { spare }
  }
}
