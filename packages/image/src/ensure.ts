/**
 * Building what a plan needs and an engine lacks, streaming the build's output
 * through `context.progress`. A present session image costs one question.
 */
import { IMAGE_BUILD_FAILED, IMAGE_UNSUPPORTED, OmhError, isOmhError, type ImageRecipe, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import { IMAGE_LABELS, type ImagePlan } from './recipes.js'
import { UNSUPPORTED_MARK } from './prepare-image.js'

export interface EnsuredImage {
  /** The session image's tag: what a session runs. */
  readonly tag: string
  /** The tags built by this call, in build order; empty when everything was there. */
  readonly built: readonly string[]
}

/** Builds whatever of the plan is missing and resolves the session image's tag. */
export async function ensureImage(runtime: RuntimePlugin, plan: ImagePlan, context: RuntimeContext, adapterFile?: string): Promise<EnsuredImage> {
  if (await runtime.hasImage(plan.harness.tag, context)) return { tag: plan.harness.tag, built: [] }
  const built: string[] = []
  const harness = plan.harness.labels[IMAGE_LABELS.adapter]
  const missing = async (recipe: ImageRecipe) => !(await runtime.hasImage(recipe.tag, context))
  // The harness tools and the environment do not depend on each other; the engine builds one at a time anyway.
  if (await missing(plan.tools)) {
    if (await missing(plan.toolset)) {
      context.progress(`Building omh's toolset ${plan.toolset.tag} on ${plan.toolset.labels[IMAGE_LABELS.from]} (once; every harness and project shares it)`)
      await build(runtime, plan.toolset, context, `The toolset is built on \`[image] base\` (${plan.toolset.labels[IMAGE_LABELS.from]}), which must be a Debian-based image with Node, and the build must reach a Debian mirror.`)
      built.push(plan.toolset.tag)
    }
    context.progress(`Building the ${harness} tools ${plan.tools.tag}`)
    await build(runtime, plan.tools, context, `The harness layer runs \`install\` from ${adapterFile ?? `the ${harness} adapter`}: check that command, and that the build can reach the network it downloads from (\`[image] network\`).`)
    built.push(plan.tools.tag)
  }
  for (const recipe of plan.environment.recipes) {
    if (!(await missing(recipe))) continue
    context.progress(`Building the project's environment ${recipe.tag} (${plan.environment.describe})`)
    await build(runtime, recipe, context, plan.environment.advice ?? 'The environment installs `[image] packages` with apt-get and runs `[image] setup` as root: check those, and that the build reaches a Debian mirror (`[image] network`).')
    built.push(recipe.tag)
  }
  context.progress(`Building the ${harness} session image ${plan.harness.tag} on ${plan.environment.describe}`)
  let unsupported: string | undefined
  const watching: RuntimeContext = {
    ...context,
    progress: (line) => {
      const at = line.indexOf(UNSUPPORTED_MARK)
      if (at >= 0) unsupported = line.slice(at + UNSUPPORTED_MARK.length).trim()
      context.progress(line)
    },
  }
  try {
    await build(runtime, plan.harness, watching, `The session image copies omh's toolset onto ${plan.environment.from} and makes the agent there.`)
  } catch (error) {
    if (unsupported) throw OmhError.of(IMAGE_UNSUPPORTED, { args: [plan.environment.from, unsupported], hintArgs: [plan.environment.describe], cause: error })
    throw error
  }
  built.push(plan.harness.tag)
  return { tag: plan.harness.tag, built }
}

async function build(runtime: RuntimePlugin, recipe: ImageRecipe, context: RuntimeContext, advice: string): Promise<void> {
  try {
    await runtime.build(recipe, context)
  } catch (error) {
    if (!isOmhError(error) || error.code !== IMAGE_BUILD_FAILED.code) throw error
    const why = error.details?.['why']
    if (typeof why !== 'string') throw error
    throw OmhError.of(IMAGE_BUILD_FAILED, {
      args: [runtime.engine, recipe.tag, why],
      hintArgs: [advice],
      cause: error.cause,
      details: error.details,
    })
  }
}
