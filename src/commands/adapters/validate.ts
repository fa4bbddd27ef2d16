import path from 'node:path'
import { Args } from '../../lib/oclif.js'
import { ADAPTER_INVALID, ADAPTERS_INVALID, OmhError, type Problem } from '@omh/plugin-api'
import { OmhCommand } from '../../lib/omh-command.js'
import type { AnsweredAgain } from '@omh/fast-path'

interface Checked {
  file: string
  valid: boolean
  name?: string
  capabilities?: string[]
  problems: Problem[]
}

export default class AdaptersValidate extends OmhCommand<{ files: Checked[] }> {
  /** Answered again while the files it read are unchanged. */
  static answeredAgain: AnsweredAgain = {}
  static override summary = 'Check adapter files: every problem, with its line, at once.'
  static override strict = false
  static override args = {
    file: Args.file({ required: true, description: 'Adapter TOML file(s).' }),
  }

  async run(): Promise<{ files: Checked[] }> {
    const { argv } = await this.parse(AdaptersValidate)
    const kernel = await this.kernel()
    const files: Checked[] = []
    for (const file of argv as string[]) {
      const absolute = path.resolve(file)
      const { adapter, problems } = await kernel.checkAdapter(absolute)
      files.push(
        adapter
          ? { file: absolute, valid: true, name: adapter.name, capabilities: adapter.bindings.map((b) => b.capability), problems }
          : { file: absolute, valid: false, problems },
      )
    }
    const bad = files.filter((f) => !f.valid)
    if (!this.jsonEnabled()) {
      for (const f of files.filter((f) => f.valid)) {
        this.log(`${this.style.green('✓')} ${path.relative(process.cwd(), f.file) || f.file}: ${f.name} (${f.capabilities!.join(', ')})`)
      }
    }
    if (bad.length === 1) {
      throw OmhError.of(ADAPTER_INVALID, {
        args: [bad[0]!.file, bad[0]!.problems.length],
        hintArgs: [bad[0]!.file],
        problems: bad[0]!.problems,
        details: { file: bad[0]!.file, files },
      })
    }
    if (bad.length > 1) {
      throw OmhError.of(ADAPTERS_INVALID, {
        args: [bad.length, files.length],
        problems: bad.flatMap((f) => f.problems),
        details: { files },
      })
    }
    return { files }
  }
}
