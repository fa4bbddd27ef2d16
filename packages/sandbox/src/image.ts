/**
 * The images harnesses run in: one base every harness shares, and a thin layer
 * per harness that runs its adapter's `install`. A recipe is text an engine
 * builds from stdin with an empty context; its tag is a digest of that text
 * (and of its labels), so a changed recipe is a new image and a stale one is
 * never reused. Nothing here names an engine: a runtime plugin builds the
 * recipes.
 */
import { createHash } from 'node:crypto'
import path from 'node:path'
import type { Adapter, EffectiveSettings } from '@omh/kernel'
import { byText } from '@omh/plugin-kit'
import {
  IMAGE_BUILD_FAILED,
  OmhError,
  isOmhError,
  GUEST_GID,
  GUEST_HOME,
  GUEST_UID,
  GUEST_USER,
  GUEST_WORK,
  type ImageRecipe,
  type RuntimeContext,
  type RuntimePlugin,
} from '@omh/plugin-api'

/** Labels every omh image carries, so images can be listed and removed by kind. */
export const IMAGE_LABELS = { kind: 'omh.kind', adapter: 'omh.adapter', from: 'omh.from' } as const

/** Where the guest keeps what omh itself needs (reattach sockets, mounted sources). */
export const GUEST_OMH = '/omh'
/** Sockets of harnesses that keep running after the terminal closes, one per session and harness. */
export const GUEST_SOCKETS = `${GUEST_OMH}/sock`

/** How many hex digits of the recipe's sha256 a tag carries: 64 bits, ample for one machine's images. */
const TAG_DIGITS = 16

export interface ImageOptions {
  /** The image the base recipe starts `FROM` (`[image] base`). */
  readonly from: string
  /** The network builds run on (`[image] network`); absent: the engine's default. */
  readonly network?: string
  /** Extra labels on both images. They are part of the digest, so labelled images never share a tag with plain ones. */
  readonly labels?: Readonly<Record<string, string>>
  /** The registry omh's images are named under (`[image] registry`); absent: `localhost`, never pushed. */
  readonly registry?: string
  /** The IDs `agent` gets (see `agentUser`); absent: UID and GID 1000. */
  readonly agent?: { readonly uid: number; readonly gid: number }
}

/** Both recipes for one harness; `harness.tag` is what a session runs. */
export interface ImagePlan {
  readonly base: ImageRecipe
  readonly harness: ImageRecipe
}

/** The parts of an adapter its image depends on. */
export type ImageAdapter = Pick<Adapter, 'name' | 'install' | 'bindings' | 'creds' | 'token'>

/** Image options as the settings decide them. */
export function imageOptions(settings: EffectiveSettings): ImageOptions {
  const from = settings.imageBase?.value
  // omh's own defaults layer sets it, and a layer can override a key but not unset it.
  if (!from) throw new Error('no settings layer sets [image] base')
  const network = settings.imageNetwork?.value
  const registry = settings.imageRegistry?.value
  return { from, ...(network ? { network } : {}), ...(registry ? { registry } : {}) }
}

const digest = (containerfile: string, labels: Readonly<Record<string, string>>) =>
  createHash('sha256')
    .update(JSON.stringify({ containerfile, labels: Object.entries(labels).sort(([a], [b]) => byText(a, b)) }))
    .digest('hex')
    .slice(0, TAG_DIGITS)

function recipe(repository: string, containerfile: string, labels: Record<string, string>, options: ImageOptions): ImageRecipe {
  const all = { ...options.labels, ...labels }
  return {
    tag: `${options.registry ?? 'localhost'}/${repository}:${digest(containerfile, all)}`,
    containerfile,
    labels: all,
    ...(options.network ? { network: options.network } : {}),
  }
}

/**
 * The base: the user `agent` with UID 1000 (or the IDs `options.agent` names)
 * and home `/home/agent` (an existing user of that UID, like the `node` of
 * Node's images, is renamed so files it owns stay owned), git, jq,
 * openssh-server, and dtach so a harness outlives the terminal it was started
 * from. The build fails unless the user came out as asserted. The recipe
 * keeps `NODE_EXTRA_CA_CERTS` and any CA bundle the starting image carries:
 * installing ca-certificates regenerates the system bundle, and it includes
 * the starting image's extra CAs.
 */
export function baseRecipe(options: ImageOptions): ImageRecipe {
  const owned = [GUEST_HOME, GUEST_WORK, GUEST_OMH].join(' ')
  const { uid, gid } = options.agent ?? { uid: GUEST_UID, gid: GUEST_GID }
  // No lastlog entry for another agent: a directory service's UID (in the billions) would make
  // /var/log/lastlog a sparse file of hundreds of gigabytes, which a layer stores whole. The
  // default recipe stays as it was, so its tag does too.
  const useradd = uid === GUEST_UID && gid === GUEST_GID ? 'useradd' : 'useradd -l'
  const containerfile = `# omh base image: the user ${GUEST_USER} (UID ${uid}), git, jq, openssh-server and dtach.
FROM ${options.from}
USER root
ARG DEBIAN_FRONTEND=noninteractive
RUN set -eu; \\
    apt-get update; \\
    apt-get install -y --no-install-recommends ca-certificates git jq openssh-server dtach procps less; \\
    apt-get clean; \\
    rm -rf /var/lib/apt/lists/* /etc/ssh/ssh_host_*
RUN set -eu; \\
    user=$(getent passwd ${uid} | cut -d: -f1 || true); \\
    getent group ${gid} >/dev/null || groupadd -g ${gid} ${GUEST_USER}; \\
    if [ -z "$user" ]; then \\
      ${useradd} -m -d ${GUEST_HOME} -u ${uid} -g ${gid} -s /bin/bash ${GUEST_USER}; \\
    else \\
      [ "$user" = ${GUEST_USER} ] || usermod -l ${GUEST_USER} "$user"; \\
      [ "$(getent passwd ${GUEST_USER} | cut -d: -f6)" = ${GUEST_HOME} ] || usermod -d ${GUEST_HOME} -m ${GUEST_USER}; \\
      usermod -g ${gid} -s /bin/bash ${GUEST_USER}; \\
    fi; \\
    group=$(getent group ${gid} | cut -d: -f1); \\
    [ "$group" = ${GUEST_USER} ] || groupmod -n ${GUEST_USER} "$group"; \\
    install -d -o ${GUEST_USER} -g ${GUEST_USER} ${owned}; \\
    install -d -m 0700 -o ${GUEST_USER} -g ${GUEST_USER} ${GUEST_SOCKETS}; \\
    test "$(id -u ${GUEST_USER})" = ${uid}; \\
    test "$(id -g ${GUEST_USER})" = ${gid}; \\
    test "$(getent passwd ${GUEST_USER} | cut -d: -f6)" = ${GUEST_HOME}
USER ${GUEST_USER}
WORKDIR ${GUEST_WORK}
`
  return recipe('omh-base', containerfile, { [IMAGE_LABELS.kind]: 'base', [IMAGE_LABELS.from]: options.from }, options)
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
 * The harness layer: `install` from the adapter, run as root in a shell that
 * stops at the first failing command; the parents of the adapter's mount
 * targets under the home; and the image ends as the unprivileged user.
 */
export function harnessRecipe(adapter: ImageAdapter, base: ImageRecipe, options: ImageOptions): ImageRecipe {
  const parents = homeMountParents(adapter)
  const lines = [
    `# omh harness image: ${adapter.name}`,
    `FROM ${base.tag}`,
    'USER root',
    // Exec form: any install text, several lines included, reaches the shell untouched.
    `RUN ${JSON.stringify(['/bin/sh', '-ec', adapter.install])}`,
    ...(parents.length ? [`RUN ${JSON.stringify(['install', '-d', '-o', GUEST_USER, '-g', GUEST_USER, ...parents])}`] : []),
    `USER ${GUEST_USER}`,
    `WORKDIR ${GUEST_WORK}`,
  ]
  return recipe(
    `omh-${adapter.name}`,
    `${lines.join('\n')}\n`,
    { [IMAGE_LABELS.kind]: 'harness', [IMAGE_LABELS.adapter]: adapter.name, [IMAGE_LABELS.from]: base.tag },
    options,
  )
}

/** Both recipes for a harness. Pure: nothing is built or asked of an engine. */
export function planImages(adapter: ImageAdapter, options: ImageOptions): ImagePlan {
  const base = baseRecipe(options)
  return { base, harness: harnessRecipe(adapter, base, options) }
}

export interface EnsuredImage {
  /** The harness image's tag: what a session runs. */
  readonly tag: string
  /** The tags built by this call, base first; empty when everything was there. */
  readonly built: readonly string[]
}

/**
 * Builds whatever of the plan is missing, streaming build output through
 * `context.progress`, and resolves the harness tag. A present harness image
 * costs one question to the engine.
 */
export async function ensureImage(
  runtime: RuntimePlugin,
  plan: ImagePlan,
  context: RuntimeContext,
  adapterFile?: string,
): Promise<EnsuredImage> {
  if (await runtime.hasImage(plan.harness.tag, context)) return { tag: plan.harness.tag, built: [] }
  const built: string[] = []
  if (!(await runtime.hasImage(plan.base.tag, context))) {
    context.progress(`Building the base image ${plan.base.tag} from ${plan.base.labels[IMAGE_LABELS.from]} (once; every harness shares it)`)
    await build(runtime, plan.base, context, `The base recipe installs packages with apt-get, so \`[image] base\` (${plan.base.labels[IMAGE_LABELS.from]}) must be a Debian-based image, and the build must reach a Debian mirror.`)
    built.push(plan.base.tag)
  }
  const harness = plan.harness.labels[IMAGE_LABELS.adapter]
  context.progress(`Building the ${harness} image ${plan.harness.tag}`)
  await build(
    runtime,
    plan.harness,
    context,
    `The harness layer runs \`install\` from ${adapterFile ?? `the ${harness} adapter`}: check that command, and that the build can reach the network it downloads from (\`[image] network\`).`,
  )
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
