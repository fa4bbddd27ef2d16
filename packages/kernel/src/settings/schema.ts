import * as z from 'zod/mini'
import { CAPABILITY_CLASSES, type CapabilityClass } from '@omh/plugin-api'
import { hostPattern, memorySize } from '@omh/plugin-kit'

const entryName = z.string().check(
  z.minLength(1),
  z.refine((s: string) => !s.includes('/') && !s.includes('\\') && !s.startsWith('.') && !s.includes('\0'), {
    message: 'an entry is a name in your catalogue, never a path',
  }),
)

const allowlist = z.array(entryName).check(
  z.refine((list: string[]) => !list.includes('*') || list.length === 1, {
    message: '"*" follows the whole catalogue, so it stands alone',
  }),
)

const use = z.strictObject(
  Object.fromEntries(CAPABILITY_CLASSES.map((c) => [c, z.optional(allowlist)])) as Record<
    CapabilityClass,
    z.ZodMiniOptional<typeof allowlist>
  >,
)

/**
 * One settings layer. Every layer has the same shape; which one wins for a key
 * is the merge's business (docs/configuration.md).
 */
export const settingsSchema = z.strictObject({
  /** Names the file's JSON Schema, for editors of a JSON layer; omh reads nothing from it. */
  $schema: z.optional(z.string()),
  /** Plugin modules, resolved from the directory of the file that names them. */
  plugins: z.optional(z.array(z.string().check(z.minLength(1)))),
  /** `auto` or an engine a runtime plugin answers to. */
  runtime: z.optional(z.string().check(z.minLength(1))),
  /** Each runtime's own settings, `[runtimes.<engine>]`: the runtime plugin checks its table against its own schema. */
  runtimes: z.optional(z.record(z.string().check(z.minLength(1)), z.record(z.string(), z.unknown()))),
  /** Which captured login to use when a harness has several. */
  account: z.optional(z.string().check(z.minLength(1))),
  /** Allowlist per capability: absent = everything, [] = nothing, ["*"] = the whole catalogue. */
  use: z.optional(use),
  session: z.optional(
    z.strictObject({
      /** The engine network session containers join (a port can only be published on a network that has one). */
      network: z.optional(z.string().check(z.minLength(1))),
      /** How long a session container may sit with nothing run in it before the next omh command stops it: `90m`, `4h`, `2d`. */
      idle_stop: z.optional(z.string().check(z.regex(/^[1-9]\d*[smhd]$/, 'a duration: a whole number and s, m, h or d, e.g. "4h"'))),
      /** How a session's files reach its container: `auto` (checked per engine), `mounted` or `copied` (into volumes). */
      files: z.optional(z.enum(['auto', 'mounted', 'copied'])),
      /** Untracked files copied into a new session's worktree (paths or globs in the repository), `[limits] carry_in_bytes` at most. */
      carry_in: z.optional(z.array(z.string().check(z.minLength(1)))),
      /** Memory a session may use: bytes, a size (`4g`, `512m`) or a share of the host's (`50%`). */
      memory: z.optional(memorySize),
      /** The most processes and threads a session may run at once. */
      pids: z.optional(z.int().check(z.gte(16, 'a number of processes, at least 16'), z.lte(1_000_000, 'a number of processes, at most 1000000'))),
      /** CPUs a session may keep busy, fractions allowed (`1.5`). */
      cpus: z.optional(z.number().check(z.gt(0, 'a number of CPUs above 0, such as 1.5'), z.lte(1024, 'a number of CPUs, at most 1024'))),
    }),
  ),
  network: z.optional(
    z.strictObject({
      /** `allowlist`: out only through the egress proxy, to allowed hosts; `open`: the engine's network; `none`: no network. */
      egress: z.optional(z.enum(['allowlist', 'open', 'none'])),
      /** Hosts a session may reach, added to every other layer's and the adapter's. */
      allow: z.optional(z.array(hostPattern)),
      /** The package registries a session may reach; the most specific layer's list replaces the others. */
      registries: z.optional(z.array(hostPattern)),
    }),
  ),
  limits: z.optional(
    z.strictObject({
      /** The most bytes omh reads from one file of the profile, an adapter, an editor or a repository. */
      file_bytes: z.optional(z.int().check(z.positive())),
      carry_in_bytes: z.optional(z.int().check(z.positive())),
    }),
  ),
  image: z.optional(
    z.strictObject({
      /** The image omh's base recipe starts `FROM`: Debian-based, with apt. */
      base: z.optional(z.string().check(z.minLength(1))),
      /** The engine network image builds run on (`host` reaches registries where the bridge cannot). */
      network: z.optional(z.string().check(z.minLength(1))),
      /** Where omh's images are named and pushed (`registry.example.com/team`), for engines that pull rather than build, such as a cluster. */
      registry: z.optional(
        z.string().check(
          z.regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/, 'a registry host with an optional port and path, in lower case, such as "registry.example.com/team", without a scheme or a trailing slash'),
        ),
      ),
    }),
  ),
})

export type Settings = z.infer<typeof settingsSchema>
