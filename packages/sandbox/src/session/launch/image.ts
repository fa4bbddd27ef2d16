/**
 * Where a launch's image comes from when the caller brings no source of its own: omh's recipes.
 * Kept apart so the phases only ever ask an `ImageSource` for a tag, and a test or another
 * caller can stand in for the builds.
 */
import type { RuntimeContext, RuntimePlugin } from '@omh/plugin-api'
import type { Adapter } from '@omh/kernel'
import type { KernelView } from '../../kernel-view.js'
import { agentUser } from '../../agent-user.js'
import { ensureImage, imageOptions, planImages } from '@omh/image'
import { projectEnvironment, type EnvironmentInput, type ProjectEnvironment } from '../../environment/project.js'

/** omh's own image recipes: the project's environment, the harness tools and the session image, tagged by digest. */
export function recipes(kernel: KernelView): ImageSource {
  let planned: Promise<ProjectEnvironment> | undefined
  const environment = () => (planned ??= projectEnvironment(environmentInput(kernel), imageOptions(kernel.settings)))
  const plan = async (adapter: Adapter) => planImages(adapter, { ...imageOptions(kernel.settings), agent: agentUser() }, (await environment()).image)
  return {
    tag: async (adapter) => (await plan(adapter)).harness.tag,
    ensure: async (adapter, runtime, context) => (await ensureImage(runtime, await plan(adapter), context, adapter.file)).tag,
    environment,
  }
}

/** What the project's environment is planned from, as the kernel holds it. */
export const environmentInput = (kernel: KernelView): EnvironmentInput => ({
  settings: kernel.settings,
  ...(kernel.repoRoot ? { repoRoot: kernel.repoRoot } : {}),
  env: kernel.options.env,
  locations: { defaults: kernel.options.defaultsFile, omhHome: kernel.omhHome, omhState: kernel.omhState, cwd: kernel.options.cwd },
})

/** Where a harness's image comes from. The session layer only asks for a tag. */
export interface ImageSource {
  /** The tag the adapter's image has or will have, without touching an engine. */
  tag(adapter: Adapter): string | Promise<string>
  /** Makes sure the image exists (building what is missing) and resolves its tag. */
  ensure(adapter: Adapter, runtime: RuntimePlugin, context: RuntimeContext): Promise<string>
  /** The project's environment the image is made of: its setup, ports and caches. Absent: none of those. */
  environment?(): Promise<ProjectEnvironment>
}
