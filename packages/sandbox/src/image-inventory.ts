/**
 * omh's images on one engine: which exist, how big and old, and which
 * sessions' containers use them; and which of them no session needs.
 */
import { CONTAINER_FAILED, OmhError, type ImageInfo, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import { IMAGE_LABELS } from '@omh/image'
import { EGRESS_LABEL } from './network/egress.js'
import { LABEL } from './host/layout.js'

export interface OmhImage {
  readonly id: string
  readonly tags: readonly string[]
  /**
   * `harness` (what a session runs), `egress` (a session's proxy), or a layer
   * other images are built from or copy: `environment`, `toolset`, `tools`
   * (and `base`, from releases before the toolset).
   */
  readonly kind: string
  /** The adapter a harness image is for. */
  readonly harness?: string
  /** The image it was built from. */
  readonly from?: string
  /** The harness tools a session image copies. */
  readonly tools?: string
  readonly created: string
  readonly size: number
  /**
   * `<repository id>/<sid>` of each session whose container, running or stopped, uses it, and
   * `<repository id>-<sid> (<container>)` of each proxy or service beside a session that does.
   */
  readonly sessions: readonly string[]
}

/** omh's images on this engine; with `harness`, that harness's alone (its session images and its tools). */
export async function omhImages(runtime: RuntimePlugin, context: RuntimeContext, filter: { harness?: string } = {}): Promise<OmhImage[]> {
  if (!runtime.images) {
    throw OmhError.of(CONTAINER_FAILED, { args: [runtime.engine, 'list images', `the ${runtime.meta.name} runtime cannot list images`], hintArgs: [] })
  }
  // A harness's images: its session images and the tools they copy.
  const labels: Record<string, string> = filter.harness ? { [IMAGE_LABELS.kind]: '', [IMAGE_LABELS.adapter]: filter.harness } : { [IMAGE_LABELS.kind]: '' }
  // A session's proxies and the containers beside it run images too, from the session's or their own.
  const [images, sessionContainers, beside] = await Promise.all([runtime.images(labels, context), runtime.list({ [LABEL.session]: '' }, context), runtime.list({ [EGRESS_LABEL]: '' }, context)])
  const containers = [
    ...sessionContainers.map((c) => ({ image: c.image, user: `${c.labels[LABEL.repo] ?? '?'}/${c.labels[LABEL.session]}` })),
    ...beside.map((c) => ({ image: c.image, user: `${c.labels[EGRESS_LABEL]} (${c.name})` })),
  ]
  return images
    .map((image: ImageInfo) => ({
      id: image.id,
      tags: [...image.tags].sort(),
      kind: image.labels[IMAGE_LABELS.kind] ?? '',
      ...(image.labels[IMAGE_LABELS.adapter] ? { harness: image.labels[IMAGE_LABELS.adapter] } : {}),
      ...(image.labels[IMAGE_LABELS.from] ? { from: image.labels[IMAGE_LABELS.from] } : {}),
      ...(image.labels[IMAGE_LABELS.tools] ? { tools: image.labels[IMAGE_LABELS.tools] } : {}),
      created: image.created,
      size: image.size,
      sessions: [...new Set(containers.filter((c) => image.tags.includes(c.image) || c.image === image.id).map((c) => c.user))].sort(),
    }))
    .sort((a, b) => (isLayer(a) === isLayer(b) ? Date.parse(a.created) - Date.parse(b.created) : isLayer(a) ? -1 : 1))
}

/** An image that other images are built from or copy, rather than one a container runs. */
const isLayer = (image: Pick<OmhImage, 'kind'>) => ['base', 'environment', 'toolset', 'tools'].includes(image.kind)

/**
 * The images no session uses, older than `olderThanMs`: session and proxy
 * images first, then each layer (an environment, the toolset, harness tools)
 * once no image that stays was built from it or copies it.
 */
export function unused(images: readonly OmhImage[], olderThanMs: number, now = Date.now()): OmhImage[] {
  const old = (i: OmhImage) => now - Date.parse(i.created) >= olderThanMs
  const top = images.filter((i) => !isLayer(i) && !i.sessions.length && old(i))
  const staying = new Set(images.filter((i) => !top.includes(i) && (!isLayer(i) || i.sessions.length || !old(i))))
  // A layer stays while anything staying names it; what it names stays in turn.
  for (let grew = true; grew; ) {
    grew = false
    for (const layer of images.filter((i) => isLayer(i) && !staying.has(i))) {
      if ([...staying].some((s) => [s.from, s.tools].some((t) => t !== undefined && layer.tags.includes(t)))) {
        staying.add(layer)
        grew = true
      }
    }
  }
  return [...top, ...images.filter((i) => isLayer(i) && !staying.has(i))]
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
