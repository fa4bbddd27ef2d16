/**
 * omh's images on one engine: which exist, how big and old, and which
 * sessions' containers use them; and which of them no session needs.
 */
import { CONTAINER_FAILED, OmhError, type ImageInfo, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import { IMAGE_LABELS } from './image.js'
import { LABEL } from './session/layout.js'

export interface OmhImage {
  readonly id: string
  readonly tags: readonly string[]
  /** `base` (every harness builds on it) or `harness` (one adapter's layer). */
  readonly kind: string
  /** The adapter a harness image is for. */
  readonly harness?: string
  /** The image it was built from. */
  readonly from?: string
  readonly created: string
  readonly size: number
  /** `<repository id>/<sid>` of each session whose container, running or stopped, uses it. */
  readonly sessions: readonly string[]
}

/** omh's images on this engine, harness images of `harness` alone when named. */
export async function omhImages(runtime: RuntimePlugin, context: RuntimeContext, filter: { harness?: string } = {}): Promise<OmhImage[]> {
  if (!runtime.images) {
    throw OmhError.of(CONTAINER_FAILED, { args: [runtime.engine, 'list images', `the ${runtime.meta.name} runtime cannot list images`], hintArgs: [] })
  }
  const labels: Record<string, string> = filter.harness ? { [IMAGE_LABELS.kind]: 'harness', [IMAGE_LABELS.adapter]: filter.harness } : { [IMAGE_LABELS.kind]: '' }
  const [images, containers] = await Promise.all([runtime.images(labels, context), runtime.list({ [LABEL.session]: '' }, context)])
  return images
    .map((image: ImageInfo) => ({
      id: image.id,
      tags: [...image.tags].sort(),
      kind: image.labels[IMAGE_LABELS.kind] ?? '',
      ...(image.labels[IMAGE_LABELS.adapter] ? { harness: image.labels[IMAGE_LABELS.adapter] } : {}),
      ...(image.labels[IMAGE_LABELS.from] ? { from: image.labels[IMAGE_LABELS.from] } : {}),
      created: image.created,
      size: image.size,
      sessions: containers
        .filter((c) => image.tags.includes(c.image) || c.image === image.id)
        .map((c) => `${c.labels[LABEL.repo] ?? '?'}/${c.labels[LABEL.session]}`)
        .sort(),
    }))
    .sort((a, b) => (a.kind === b.kind ? Date.parse(a.created) - Date.parse(b.created) : a.kind === 'base' ? -1 : 1))
}

/**
 * The images no session uses, older than `olderThanMs`: harness images
 * first, then a base image once no image that stays was built from it.
 */
export function unused(images: readonly OmhImage[], olderThanMs: number, now = Date.now()): OmhImage[] {
  const old = (i: OmhImage) => now - Date.parse(i.created) >= olderThanMs
  const harness = images.filter((i) => i.kind !== 'base' && !i.sessions.length && old(i))
  const staying = images.filter((i) => i.kind !== 'base' && !harness.includes(i))
  const bases = images.filter((i) => i.kind === 'base' && !i.sessions.length && old(i) && !staying.some((s) => s.from && i.tags.includes(s.from)))
  return [...harness, ...bases]
}

/** Removes each image by every tag it has (by id when it has none); one the engine refuses is reported, the rest still go. */
export async function removeImages(
  runtime: RuntimePlugin,
  images: readonly OmhImage[],
  context: RuntimeContext,
): Promise<{ removed: OmhImage[]; refused: { image: OmhImage; why: string }[] }> {
  const removed: OmhImage[] = []
  const refused: { image: OmhImage; why: string }[] = []
  for (const image of images) {
    try {
      for (const name of image.tags.length ? image.tags : [image.id]) await runtime.removeImage!(name, context)
      removed.push(image)
    } catch (error) {
      refused.push({ image, why: (error as Error).message })
    }
  }
  return { removed, refused }
}
