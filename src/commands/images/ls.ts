import { ImagesCommand, age, size, type ImageRow } from '../../lib/images-command.js'
import { table } from '../../lib/table.js'

export interface ImagesLsResult {
  images: ImageRow[]
}

export default class ImagesLs extends ImagesCommand<ImagesLsResult> {
  static override summary = "List omh's images on the engine: size, age, and the sessions whose containers use them."
  static override description =
    'Layers first (environments, the toolset, each harness\'s tools), then the images sessions run (one per harness and environment), oldest first. Sessions are named `<repository id>/<sid>`, whichever repository they belong to.'
  static override flags = { ...ImagesCommand.imageFlags }

  async run(): Promise<ImagesLsResult> {
    const { flags } = await this.parse(ImagesLs)
    const { rows } = await this.images(flags)
    if (!this.jsonEnabled()) {
      if (!rows.length) this.notice(`No omh images on ${(await this.runtime(flags.runtime)).runtime.engine}.`)
      else {
        const header = ['IMAGE', 'KIND', 'SIZE', 'AGE', 'SESSIONS'].map((h) => this.style.dim(h))
        this.log(table([header, ...rows.map((r) => [this.style.bold(r.tags[0] ?? r.id.slice(0, 19)), r.harness ? `${r.kind} ${r.harness}` : r.kind, size(r.size), age(r.created), r.sessions.join(' ') || this.style.dim('none')])]))
      }
    }
    return { images: rows }
  }
}
