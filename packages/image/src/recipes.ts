/**
 * The images harnesses run in, as recipes: text an engine builds, tagged by a
 * digest of that text (and of its labels, and of the files a build copies
 * in), so a changed recipe is a new image and a stale one is never reused.
 * A session image is three parts, each cached on its own:
 *
 * - the project's **environment** (`EnvironmentImage`): omh's base with the
 *   project's Debian packages and build steps, the repository's devcontainer,
 *   or a Containerfile of its own;
 * - the **harness tools**: omh's toolset (`toolset.ts`) with the harness
 *   installed under it, built on omh's base whatever the environment is;
 * - the **session image**: the environment with the harness tools copied in
 *   and the agent made by `prepare-image.ts`.
 *
 * Changing the environment rebuilds only the last, cheap step; raising a
 * harness's version rebuilds neither the environment nor the toolset.
 * Nothing here names an engine: a runtime plugin builds the recipes.
 */
import { createHash } from 'node:crypto'
import path from 'node:path'
import type { Adapter, EffectiveSettings } from '@omh/kernel'
import { byText } from '@omh/plugin-kit'
import { GUEST_GID, GUEST_HOME, GUEST_UID, GUEST_USER, GUEST_WORK, type ImageRecipe } from '@omh/plugin-api'
import { HARNESS_PREFIX, PREPARE_SCRIPT, TOOLSET, TOOLSET_NODE, WRAP_SCRIPT, prepareScriptSource, sessionPath, toolsetSteps } from './toolset.js'
import type { PrepareInput } from './prepare-image.js'

/** Labels every omh image carries, so images can be listed and removed by kind. */
export const IMAGE_LABELS = { kind: 'omh.kind', adapter: 'omh.adapter', from: 'omh.from', tools: 'omh.tools' } as const

/** Where the guest keeps what omh itself needs (reattach sockets, mounted sources). */
export const GUEST_OMH = '/omh'
/** Sockets of harnesses that keep running after the terminal closes, one per session and harness. */
export const GUEST_SOCKETS = `${GUEST_OMH}/sock`

/** How many hex digits of the recipe's sha256 a tag carries: 64 bits, ample for one machine's images. */
const TAG_DIGITS = 16

export interface ImageOptions {
  /** omh's base (`[image] base`): Debian with Node. The toolset is built on it, and so is the environment when the project names none. */
  readonly from: string
  /** The network builds run on (`[image] network`); absent: the engine's default. */
  readonly network?: string
  /** Extra labels on every image. They are part of the digest, so labelled images never share a tag with plain ones. */
  readonly labels?: Readonly<Record<string, string>>
  /** The registry omh's images are named under (`[image] registry`); absent: `localhost`, never pushed. */
  readonly registry?: string
  /** The IDs `agent` gets (see `agentUser`); absent: UID and GID 1000. */
  readonly agent?: { readonly uid: number; readonly gid: number }
}

/** The project's environment: what a session image starts from, and how it is had. */
export interface EnvironmentImage {
  /** What the session image is built `FROM`: the tag of the last recipe, or an image used as it is. */
  readonly from: string
  /** Recipes to build in order, each from the one before (or an image); none for an image used as it is. */
  readonly recipes: readonly ImageRecipe[]
  /** Variables the session image carries (a devcontainer's `containerEnv` and `remoteEnv`); `${NAME}` in a value is the image's own variable. */
  readonly env: Readonly<Record<string, string>>
  /** The image's user that becomes the agent (a devcontainer's `remoteUser`, else `containerUser`). */
  readonly become?: string
  /** Directories under the home the agent must own before anything is mounted there (dependency caches). */
  readonly homeDirs?: readonly string[]
  /** What it is, in words: `omh's base`, `.devcontainer/devcontainer.json`. */
  readonly describe: string
  /** The advice for a failed build of its recipes. */
  readonly advice?: string
}

/** Every recipe one harness's session image needs; `harness.tag` is what a session runs. */
export interface ImagePlan {
  readonly environment: EnvironmentImage
  readonly toolset: ImageRecipe
  readonly tools: ImageRecipe
  readonly harness: ImageRecipe
}

/** The parts of an adapter its image depends on. */
export type ImageAdapter = Pick<Adapter, 'name' | 'install' | 'bin' | 'bindings' | 'creds' | 'token'>

/** Image options as the settings decide them. */
export function imageOptions(settings: EffectiveSettings): ImageOptions {
  const from = settings.imageBase?.value
  // omh's own defaults layer sets it, and a layer can override a key but not unset it.
  if (!from) throw new Error('no settings layer sets [image] base')
  const network = settings.imageNetwork?.value
  const registry = settings.imageRegistry?.value
  return { from, ...(network ? { network } : {}), ...(registry ? { registry } : {}) }
}

const digest = (containerfile: string, labels: Readonly<Record<string, string>>, inputs: unknown) =>
  createHash('sha256')
    .update(JSON.stringify({ containerfile, labels: Object.entries(labels).sort(([a], [b]) => byText(a, b)), ...(inputs === undefined ? {} : { inputs }) }))
    .digest('hex')
    .slice(0, TAG_DIGITS)

/** What else a recipe's image depends on: a build context and its fingerprint, build arguments, a stage. */
export interface RecipeInputs {
  readonly context?: { readonly dir: string; readonly fingerprint: string }
  readonly buildArgs?: Readonly<Record<string, string>>
  readonly target?: string
}

export function recipe(repository: string, containerfile: string, labels: Record<string, string>, options: ImageOptions, inputs: RecipeInputs = {}): ImageRecipe {
  const all = { ...options.labels, ...labels }
  const hashed = inputs.context || inputs.buildArgs || inputs.target ? { context: inputs.context?.fingerprint, args: inputs.buildArgs, target: inputs.target } : undefined
  return {
    tag: `${options.registry ?? 'localhost'}/${repository}:${digest(containerfile, all, hashed)}`,
    containerfile,
    labels: all,
    ...(options.network ? { network: options.network } : {}),
    ...(inputs.context ? { context: inputs.context.dir } : {}),
    ...(inputs.buildArgs && Object.keys(inputs.buildArgs).length ? { buildArgs: inputs.buildArgs } : {}),
    ...(inputs.target ? { target: inputs.target } : {}),
  }
}

/** The Debian packages every environment omh builds has: what the agent expects of a Debian shell. */
const ENVIRONMENT_PACKAGES = ['ca-certificates', 'git', 'jq', 'procps', 'less']

/**
 * Debian packages and root build steps as a layer on `from`: omh's base when
 * the project names no image, else the project's (which then needs apt-get).
 */
export function packagesRecipe(from: string, packages: readonly string[], setup: readonly string[], options: ImageOptions, base: boolean): ImageRecipe {
  const all = base ? [...new Set([...ENVIRONMENT_PACKAGES, ...packages])] : [...new Set(packages)]
  const apt = all.length
    ? [
        'ARG DEBIAN_FRONTEND=noninteractive',
        `RUN ${JSON.stringify([
          '/bin/sh',
          '-ec',
          `command -v apt-get >/dev/null || { echo "omh: [image] packages are Debian packages, and ${from} has no apt-get" >&2; exit 1; }\napt-get update\napt-get install -y --no-install-recommends ${all.join(' ')}\napt-get clean\nrm -rf /var/lib/apt/lists/*`,
        ])}`,
      ]
    : []
  const lines = [
    `# omh environment: ${base ? "omh's base" : from}${packages.length ? ` with ${packages.join(', ')}` : ''}${setup.length ? `, ${setup.length} build step${setup.length === 1 ? '' : 's'}` : ''}`,
    `FROM ${from}`,
    'USER root',
    ...apt,
    ...setup.map((step) => `RUN ${JSON.stringify(['/bin/sh', '-ec', step])}`),
  ]
  return recipe('omh-environment', `${lines.join('\n')}\n`, { [IMAGE_LABELS.kind]: 'environment', [IMAGE_LABELS.from]: from }, options)
}

/** The environment when the project names none: omh's base with what the agent expects of a Debian shell. */
export function defaultEnvironment(options: ImageOptions): EnvironmentImage {
  const only = packagesRecipe(options.from, [], [], options, true)
  return { from: only.tag, recipes: [only], env: {}, describe: "omh's base" }
}

/** omh's toolset on omh's base; the same for every harness and every environment. */
export function toolsetRecipe(options: ImageOptions, prepareScript = prepareScriptSource()): ImageRecipe {
  const lines = [`# omh toolset: Node, git, dtach, sshd, jq, ripgrep and less in ${TOOLSET}, for any image`, `FROM ${options.from}`, ...toolsetSteps(prepareScript)]
  return recipe('omh-toolset', `${lines.join('\n')}\n`, { [IMAGE_LABELS.kind]: 'toolset', [IMAGE_LABELS.from]: options.from }, options)
}

/**
 * The harness installed into the toolset: `install` runs as root with
 * `OMH_PREFIX` (npm's global prefix too) at `/opt/omh/harness`, and what it
 * put there is all that reaches the session image.
 */
export function toolsRecipe(adapter: ImageAdapter, toolset: ImageRecipe, options: ImageOptions): ImageRecipe {
  const lines = [
    `# omh harness tools: ${adapter.name}`,
    `FROM ${toolset.tag}`,
    'USER root',
    `ENV OMH_PREFIX=${HARNESS_PREFIX} NPM_CONFIG_PREFIX=${HARNESS_PREFIX} PATH=${HARNESS_PREFIX}/bin:$PATH`,
    `RUN mkdir -p ${HARNESS_PREFIX}/bin`,
    // Exec form: any install text, several lines included, reaches the shell untouched.
    `RUN ${JSON.stringify(['/bin/sh', '-ec', adapter.install])}`,
    `RUN ${JSON.stringify(['/bin/sh', '-ec', WRAP_SCRIPT, adapter.bin])}`,
  ]
  return recipe(`omh-tools-${adapter.name}`, `${lines.join('\n')}\n`, { [IMAGE_LABELS.kind]: 'tools', [IMAGE_LABELS.adapter]: adapter.name, [IMAGE_LABELS.from]: toolset.tag }, options)
}

/**
 * Directories under the guest home that must exist, owned by the guest user,
 * before anything is mounted below them: an engine creates a missing mount
 * parent as root, and the harness could then not write beside its mounts.
 * Every ancestor between the home and the parent is listed, parents first.
 */
export function homeMountParents(adapter: Pick<Adapter, 'bindings' | 'creds' | 'token'>): string[] {
  const targets = [...adapter.bindings.flatMap((b) => [b.path, ...b.also]), ...adapter.creds, ...adapter.token]
  const dirs = new Set<string>()
  for (const target of targets) {
    for (let dir = path.posix.dirname(target); dir.startsWith(`${GUEST_HOME}/`); dir = path.posix.dirname(dir)) dirs.add(dir)
  }
  return [...dirs].sort()
}

/**
 * A value for a Containerfile `ENV`, double-quoted: `${NAME}` is the image's
 * variable (as a devcontainer's `${containerEnv:NAME}` means), and every other
 * character is itself.
 */
export const envValue = (value: string): string =>
  `"${value
    .split(/(\$\{[A-Za-z_][A-Za-z0-9_]*\})/)
    .map((part, n) => (n % 2 ? part : part.replace(/["\\$]/g, (c) => `\\${c}`)))
    .join('')}"`

/**
 * The session image: the environment, the harness tools copied in, the agent
 * made (UID 1000, or the IDs `options.agent` names) with home `/home/agent`,
 * and the directories omh mounts into; the image ends as the agent, in `/work`.
 */
export function sessionRecipe(adapter: ImageAdapter, environment: EnvironmentImage, tools: ImageRecipe, options: ImageOptions): ImageRecipe {
  const { uid, gid } = options.agent ?? { uid: GUEST_UID, gid: GUEST_GID }
  const prepare: PrepareInput = {
    uid,
    gid,
    user: GUEST_USER,
    home: GUEST_HOME,
    ...(environment.become ? { become: environment.become } : {}),
    owned: [...new Set([GUEST_HOME, GUEST_WORK, GUEST_OMH, ...homeMountParents(adapter), ...(environment.homeDirs ?? [])])].sort(),
    private: [GUEST_SOCKETS],
    toolset: TOOLSET,
  }
  const env = Object.entries(environment.env).sort(([a], [b]) => byText(a, b))
  const lines = [
    `# omh session image: ${adapter.name} on ${environment.describe}, the agent at UID ${uid}`,
    `FROM ${environment.from}`,
    `COPY --from=${tools.tag} ${TOOLSET} ${TOOLSET}`,
    'USER root',
    `RUN ${JSON.stringify([TOOLSET_NODE, PREPARE_SCRIPT, JSON.stringify(prepare)])}`,
    `ENV PATH=${sessionPath()}`,
    ...env.map(([key, value]) => `ENV ${key}=${envValue(value)}`),
    `USER ${uid}:${gid}`,
    `WORKDIR ${GUEST_WORK}`,
  ]
  return recipe(
    `omh-${adapter.name}`,
    `${lines.join('\n')}\n`,
    { [IMAGE_LABELS.kind]: 'harness', [IMAGE_LABELS.adapter]: adapter.name, [IMAGE_LABELS.from]: environment.from, [IMAGE_LABELS.tools]: tools.tag },
    options,
  )
}

/** Every recipe for a harness on an environment (omh's base when none is given). Pure: nothing is built or asked of an engine. */
export function planImages(adapter: ImageAdapter, options: ImageOptions, environment: EnvironmentImage = defaultEnvironment(options), prepareScript?: string): ImagePlan {
  const toolset = toolsetRecipe(options, prepareScript)
  const tools = toolsRecipe(adapter, toolset, options)
  return { environment, toolset, tools, harness: sessionRecipe(adapter, environment, tools, options) }
}
