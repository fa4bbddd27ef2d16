/**
 * Dependency caches shared by a repository's sessions: one engine volume per
 * tool and repository, mounted at the tool's own cache directory under the
 * agent's home, so a second session's `npm ci` or `pip install` takes its
 * packages from the first one's downloads. Per repository rather than per
 * user: an agent that writes into a cache reaches only its own repository's
 * later sessions, never another project's.
 *
 * `sessions rm` and `images prune` leave them; `omh caches ls|rm` manages them.
 */
import { createHash } from 'node:crypto'
import { GUEST_HOME, type RuntimeContext, type RuntimePlugin, type VolumeMount } from '@omh/plugin-api'

/** Each tool's cache directory, where the tool looks without being told. */
export const CACHE_DIRS: Readonly<Record<string, readonly string[]>> = {
  npm: [`${GUEST_HOME}/.npm`],
  pnpm: [`${GUEST_HOME}/.local/share/pnpm`, `${GUEST_HOME}/.cache/pnpm`],
  yarn: [`${GUEST_HOME}/.cache/yarn`, `${GUEST_HOME}/.yarn/berry/cache`],
  pip: [`${GUEST_HOME}/.cache/pip`],
  uv: [`${GUEST_HOME}/.cache/uv`],
  cargo: [`${GUEST_HOME}/.cargo/registry`, `${GUEST_HOME}/.cargo/git`],
  go: [`${GUEST_HOME}/go/pkg/mod`, `${GUEST_HOME}/.cache/go-build`],
  maven: [`${GUEST_HOME}/.m2/repository`],
  gradle: [`${GUEST_HOME}/.gradle/caches`],
}

/** Labels every cache volume carries: the repository it serves and the tool. */
export const CACHE_LABELS = { repo: 'omh.cache', tool: 'omh.cache.tool' } as const

export interface CacheVolume extends VolumeMount {
  readonly tool: string
}

/** The volume name of one cache directory: the repository's id, the tool, and which of its directories. */
const volumeName = (repoId: string, tool: string, guest: string) =>
  `omh-cache-${repoId}-${tool}-${createHash('sha256').update(guest).digest('hex').slice(0, 6)}`

/** The cache volumes of a repository's sessions, one per cache directory. */
export function cacheVolumes(repoId: string): CacheVolume[] {
  return Object.entries(CACHE_DIRS).flatMap(([tool, dirs]) => dirs.map((guest) => ({ tool, volume: volumeName(repoId, tool, guest), guest, readOnly: false })))
}

/** Every directory a cache is mounted at, for the image to make as the agent's (an engine would make a missing one root's). */
export const cacheDirs = (): string[] => Object.values(CACHE_DIRS).flat()

/** A cache volume on an engine, read back from its name. */
export interface CacheOnEngine {
  readonly volume: string
  readonly repo: string
  readonly tool: string
}

const NAMED = new RegExp(`^omh-cache-(.+)-(${Object.keys(CACHE_DIRS).join('|')})-[0-9a-f]{6}$`)

/** The cache volumes on the engine: this repository's, or every repository's when `repo` is absent. */
export async function listCaches(runtime: RuntimePlugin, context: RuntimeContext, repo?: string): Promise<CacheOnEngine[]> {
  if (!runtime.volumes) return []
  const names = await runtime.volumes.list({ [CACHE_LABELS.repo]: repo ?? '' }, context)
  return names
    .flatMap((volume) => {
      const m = NAMED.exec(volume)
      return m ? [{ volume, repo: m[1]!, tool: m[2]! }] : []
    })
    .sort((a, b) => (a.repo === b.repo ? (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0) : a.repo < b.repo ? -1 : 1))
}

/** Removes the caches given; one the engine refuses (a running session uses it) is reported, the rest still go. */
export async function removeCaches(
  runtime: RuntimePlugin,
  caches: readonly CacheOnEngine[],
  context: RuntimeContext,
): Promise<{ removed: CacheOnEngine[]; refused: { cache: CacheOnEngine; why: string }[] }> {
  const removed: CacheOnEngine[] = []
  const refused: { cache: CacheOnEngine; why: string }[] = []
  for (const cache of caches) {
    try {
      await runtime.volumes!.remove(cache.volume, context)
      removed.push(cache)
    } catch (error) {
      refused.push({ cache, why: (error as Error).message })
    }
  }
  return { removed, refused }
}
