/**
 * The project's environment: what a session runs on besides the harness. The
 * repository's devcontainer when it has one (`[image] devcontainer`), else
 * omh's base; `[image] packages` and `setup` as a layer on either, and
 * `[image] containerfile` as a layer of the repository's own on top. With it
 * come the commands that set a new session up, the ports it serves, and what
 * of the devcontainer omh does not honour, named for the announcement.
 */
import path from 'node:path'
import { OmhError, SETTINGS_INVALID } from '@omh/plugin-api'
import { chooseDevcontainer, readDevcontainer, readTextSafe, requireEnvironmentTrust, type CreateCommandKey, type Devcontainer, type EffectiveSettings, type LifecycleCommand } from '@omh/kernel'
import { IMAGE_LABELS, defaultEnvironment, packagesRecipe, recipe, type EnvironmentImage, type ImageOptions } from '@omh/image'
import { cacheDirs } from './caches.js'
import { contextFingerprint } from './context.js'

/** One command that makes a new session ready, and where it was written. */
export interface SetupStep {
  /** `[session] setup`, or the devcontainer key it came from. */
  readonly from: '[session] setup' | CreateCommandKey
  readonly command: LifecycleCommand
}

export interface ProjectEnvironment {
  readonly image: EnvironmentImage
  /** The devcontainer.json in use, relative to the repository. */
  readonly devcontainer?: string
  /** Run once per new session, in this order, before the harness starts. */
  readonly setup: readonly SetupStep[]
  /** Guest ports the session publishes on 127.0.0.1: `forwardPorts` and `[session] ports`. */
  readonly ports: readonly number[]
  /** The devcontainer's keys omh does not honour, named at launch and by `omh render`. */
  readonly unsupported: readonly { readonly key: string; readonly why: string }[]
  /** Something the user should hear about the choice (several devcontainers, none by that name). */
  readonly notes: readonly string[]
  /** The project's test command (`[session] test`). */
  readonly test?: string
}

export interface EnvironmentInput {
  readonly settings: EffectiveSettings
  /** The repository; absent outside one, where omh's base is the environment. */
  readonly repoRoot?: string
  readonly env: Readonly<Record<string, string | undefined>>
  /** For `requireEnvironmentTrust`. */
  readonly locations?: { readonly defaults: string; readonly omhHome: string; readonly omhState: string; readonly cwd: string }
}

/**
 * Plans the project's environment. Reads the repository's files (never
 * through a link out of it) and asks git for a build context's fingerprint;
 * builds nothing. An image definition of the repository's must be trusted.
 */
export async function projectEnvironment(input: EnvironmentInput, options: ImageOptions): Promise<ProjectEnvironment> {
  const { settings, repoRoot } = input
  const packages = settings.last((s) => s.image?.packages)?.value ?? []
  const steps = settings.last((s) => s.image?.setup)?.value ?? []
  const containerfile = settings.last((s) => s.image?.containerfile)
  const sessionSetup = settings.last((s) => s.session?.setup)?.value ?? []
  const sessionPorts = settings.last((s) => s.session?.ports)?.value ?? []
  const test = settings.last((s) => s.session?.test)?.value
  const maxBytes = settings.fileBytes?.value
  const notes: string[] = []

  let devcontainer: Devcontainer | undefined
  if (repoRoot) {
    const chosen = chooseDevcontainer(repoRoot, settings.last((s) => s.image?.devcontainer)?.value)
    if ('file' in chosen) devcontainer = readDevcontainer(chosen.file, repoRoot, maxBytes)
    else if (chosen.none) notes.push(`no devcontainer: ${chosen.none}`)
    if ((devcontainer || containerfile) && input.locations) await requireEnvironmentTrust({ ...input.locations, repoRoot })
  }
  const relative = devcontainer && repoRoot ? path.relative(repoRoot, devcontainer.file) : undefined

  // The first part: the devcontainer's image or build, or omh's base with the packages.
  let image: EnvironmentImage
  if (devcontainer?.build && repoRoot) {
    const { build } = devcontainer
    const text = readTextSafe(build.dockerfile, { within: repoRoot, maxBytes })
    if (text === undefined) throw OmhError.of(SETTINGS_INVALID, { args: [devcontainer.file, 1], problems: [{ file: devcontainer.file, path: 'build.dockerfile', message: `${path.relative(repoRoot, build.dockerfile)} is not there` }] })
    const built = recipe('omh-environment', text, { [IMAGE_LABELS.kind]: 'environment' }, options, {
      context: { dir: build.context, fingerprint: await contextFingerprint(repoRoot, build.context, input.env) },
      buildArgs: build.args,
      ...(build.target ? { target: build.target } : {}),
    })
    image = { from: built.tag, recipes: [built], env: {}, describe: relative!, advice: `The image is built from ${path.relative(repoRoot, build.dockerfile)}, as ${relative} says: check that file, and that the build reaches what it downloads (\`[image] network\`).` }
  } else if (devcontainer?.image) {
    image = { from: devcontainer.image, recipes: [], env: {}, describe: relative! }
  } else {
    image = packages.length || steps.length ? only(packagesRecipe(options.from, packages, steps, options, true), "omh's base") : defaultEnvironment(options)
  }
  if (devcontainer && (packages.length || steps.length)) {
    const added = packagesRecipe(image.from, packages, steps, options, false)
    image = { ...image, from: added.tag, recipes: [...image.recipes, added] }
  }

  // A Containerfile of the repository's, on whatever the environment is so far.
  if (containerfile && repoRoot) {
    const file = path.join(repoRoot, containerfile.value)
    const text = readTextSafe(file, { within: repoRoot, maxBytes })
    if (text === undefined) throw OmhError.of(SETTINGS_INVALID, { args: [containerfile.file, 1], problems: [{ file: containerfile.file, path: 'image.containerfile', message: `${containerfile.value} is not there` }] })
    const built = recipe('omh-environment', text, { [IMAGE_LABELS.kind]: 'environment', [IMAGE_LABELS.from]: image.from }, options, {
      context: { dir: repoRoot, fingerprint: await contextFingerprint(repoRoot, repoRoot, input.env) },
      buildArgs: { OMH_BASE: image.from },
    })
    image = {
      ...image,
      from: built.tag,
      recipes: [...image.recipes, built],
      describe: `${containerfile.value} on ${image.describe}`,
      advice: `The image is built from ${containerfile.value} (\`[image] containerfile\`) with the repository as its context and OMH_BASE=${image.from}: check that file.`,
    }
  }

  image = {
    ...image,
    env: devcontainer?.env ?? {},
    ...(devcontainer?.user ? { become: devcontainer.user } : {}),
    homeDirs: cacheDirs(),
  }
  const setup: SetupStep[] = [...(devcontainer?.create.map((c) => ({ from: c.key, command: c.command })) ?? []), ...sessionSetup.map((command) => ({ from: '[session] setup' as const, command }))]
  return {
    image,
    ...(relative ? { devcontainer: relative } : {}),
    setup,
    ports: [...new Set([...(devcontainer?.forwardPorts ?? []), ...sessionPorts])].sort((a, b) => a - b),
    unsupported: devcontainer?.unsupported ?? [],
    notes,
    ...(test ? { test } : {}),
  }
}

const only = (built: ReturnType<typeof packagesRecipe>, describe: string): EnvironmentImage => ({
  from: built.tag,
  recipes: [built],
  env: {},
  describe,
})
