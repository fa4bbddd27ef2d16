import { Flags } from '../../lib/oclif.js'
import { removeImages, unused } from '@omh/sandbox'
import { ImagesCommand, size, type ImageRow } from '../../lib/images-command.js'

export interface ImagesPruneResult {
  removed: ImageRow[]
  refused: { image: ImageRow; why: string }[]
  /** Bytes the removed images took, as the engine counted them (layers they share with kept images stay). */
  bytes: number
}

/** How old an image must be for prune to take it when `--older-than` says nothing. */
const MIN_AGE_MS = 10 * 60_000

export default class ImagesPrune extends ImagesCommand<ImagesPruneResult> {
  static override summary = "Remove omh's images that no session uses."
  static override description =
    "An image a session's container uses, running or stopped, stays; so does a layer (an environment, the toolset, a harness's tools) a kept image was built from or copies. Nothing but omh's images is touched. An image the engine refuses to remove is reported and the rest still go."
  static override flags = {
    ...ImagesCommand.imageFlags,
    'older-than': Flags.string({ summary: 'Only images built longer ago than this: 90m, 12h, 7d (default 10m).', helpValue: '<duration>' }),
    'dry-run': Flags.boolean({ summary: 'List what would be removed, and remove nothing.', default: false }),
  }

  async run(): Promise<ImagesPruneResult> {
    const { flags } = await this.parse(ImagesPrune)
    // On an engine others share, an image built a moment ago may be one a launch is about to start
    // a container from: without a word from the user, what is younger than that stays.
    const olderThan = flags['older-than'] === undefined ? MIN_AGE_MS : this.durationFlag('older-than', flags['older-than'])
    const { rows, resolved } = await this.images(flags)
    const doomed = unused(rows, olderThan) as ImageRow[]
    const { removed, refused } = flags['dry-run'] ? { removed: doomed, refused: [] } : await removeImages(resolved.runtime, doomed, this.runtimeContext())
    const bytes = removed.reduce((sum, i) => sum + i.size, 0)
    for (const r of refused) this.warn(`${r.image.tags[0] ?? r.image.id} stays: ${r.why}`)
    if (!this.jsonEnabled()) {
      const verb = flags['dry-run'] ? 'would remove' : 'removed'
      for (const i of removed) this.log(`${verb} ${i.tags.join(' ') || i.id}`)
      this.log(removed.length ? `${verb} ${removed.length} images, ${size(bytes)}` : 'No image to remove.')
    }
    return { removed: removed as ImageRow[], refused: refused as ImagesPruneResult['refused'], bytes }
  }
}
