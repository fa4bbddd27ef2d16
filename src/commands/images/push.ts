import { OmhError, USAGE } from '@omh/plugin-api'
import { ImagesCommand } from '../../lib/images-command.js'

export interface ImagesPushResult {
  registry: string
  pushed: string[]
}

export default class ImagesPush extends ImagesCommand<ImagesPushResult> {
  static override summary = "Push omh's images on the engine to the registry `[image] registry` names."
  static override description =
    "For engines that pull instead of build, such as a Kubernetes cluster: omh names its images under `[image] registry` once that is set, a launch on a local engine builds them, and this pushes every one of them that engine holds, base images first, with the engine's own login (`docker login`, `podman login`). Images named under another registry, or `localhost`, stay where they are."
  static override flags = { ...ImagesCommand.imageFlags }

  async run(): Promise<ImagesPushResult> {
    const { flags } = await this.parse(ImagesPush)
    const kernel = await this.kernel()
    const registry = kernel.settings.imageRegistry?.value
    if (!registry) {
      throw OmhError.of(USAGE, {
        args: ['`[image] registry` is not set, so omh names its images `localhost/…` and has nowhere to push them. Set it in your settings (`[image]` then `registry = "registry.example.com/team"`), launch once on a local engine to build the images under that name, then push.'],
        hintArgs: [this.commandWords ?? 'images push'],
      })
    }
    const { rows, resolved } = await this.images(flags)
    const { runtime } = resolved
    if (!runtime.pushImage) throw OmhError.of(USAGE, { args: [`The ${runtime.meta.name} runtime cannot push images; choose an engine that can with --runtime.`], hintArgs: [this.commandWords ?? 'images push'] })
    const tags = rows.flatMap((r) => r.tags.filter((t) => t.startsWith(`${registry}/`)))
    for (const tag of tags) {
      this.notice(`Pushing ${tag}`)
      await runtime.pushImage(tag, this.runtimeContext())
    }
    if (!tags.length) this.notice(`No omh images named under ${registry} on ${runtime.engine}: launch a harness there first to build them.`)
    return { registry, pushed: tags }
  }
}
