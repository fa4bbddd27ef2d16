import { Args } from '../../lib/oclif.js'
import type { Adapter } from '@omh/kernel'
import { OmhCommand } from '../../lib/omh-command.js'
import { table } from '../../lib/table.js'
import type { AnsweredAgain } from '@omh/fast-path'

export default class AdaptersShow extends OmhCommand<{ adapter: Adapter }> {
  /** Answered again while the files it read are unchanged. */
  static answeredAgain: AnsweredAgain = {}
  static override summary = 'Show what one harness can express and where it reads each capability.'
  static override args = {
    name: Args.string({ required: true, description: 'Harness name, e.g. claude.' }),
  }

  async run(): Promise<{ adapter: Adapter }> {
    const { args } = await this.parse(AdaptersShow)
    const kernel = await this.kernel()
    const adapter = await kernel.adapter(args.name)
    if (!this.jsonEnabled()) {
      const s = this.style
      const rows: string[][] = [
        ['file', adapter.file],
        ['bin', adapter.bin],
        ['install', adapter.install],
      ]
      if (adapter.args.length) rows.push(['args', `${adapter.args.join(' ')}  (every session passes these before yours)`])
      if (adapter.creds.length) rows.push(['creds', adapter.creds.join(' ')])
      if (adapter.token.length) rows.push(['token', adapter.token.join(' ')])
      if (adapter.login) rows.push(['login', adapter.login])
      const probes = Object.keys(adapter.probes)
      if (probes.length) rows.push(['probes', `${probes.join(', ')}  (what \`omh doctor ${adapter.name}\` asks the harness)`])
      const tools = Object.entries(adapter.tools)
      if (tools.length) rows.push(['tools', tools.map(([w, spelling]) => `${w}=${spelling}`).join(' ')])
      this.log(s.bold(adapter.name))
      this.log(table(rows.map(([k, v]) => [s.dim(k!), v!]), '  '))
      this.log('')
      this.log(
        table(
          adapter.bindings.map((b) => [
            s.bold(b.capability),
            b.render,
            [b.path, ...b.also].join(' '),
            kernel.rendererFor(b.render)?.plugin.meta.name ?? '',
            b.expect?.length ? s.dim(`doctor asks: ${[...new Set(b.expect.map((e) => e.probe))].join(', ')}`) : s.dim('doctor asks nothing'),
          ]),
          '  ',
        ),
      )
      const hooks = adapter.bindings.find((b) => b.capability === 'hooks')
      if (hooks?.events) {
        const events = Object.entries(hooks.events).map(([m, e]) => `${m}=${e}`)
        this.log(s.dim(`  hook moments: ${events.join(' ') || 'none'}`))
        this.log(s.dim(`  inject: ${hooks.inject ? 'yes' : 'no'}   refuse: ${hooks.refuse ? 'yes' : 'no'}`))
      }
      const missing = ['rules', 'skills', 'mcp', 'commands', 'subagents', 'hooks'].filter(
        (c) => !adapter.bindings.some((b) => b.capability === c),
      )
      if (missing.length) this.log(s.dim(`  cannot express: ${missing.join(', ')}`))
    }
    return { adapter }
  }
}
