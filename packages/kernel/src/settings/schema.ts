import * as z from 'zod/mini'
import { CAPABILITY_CLASSES, type CapabilityClass } from '@omh/plugin-api'
import { hostPattern, memorySize } from '@omh/plugin-kit'

// Every value of a settings file reaches a command line, a Containerfile or a terminal: none may carry a control character.
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
const text = () => z.string().check(z.minLength(1), z.refine((s: string) => !CONTROL.test(s), { message: 'a control character (a newline, an escape) has no place in a setting' }))

/**
 * An image reference as engines parse one: `[registry[:port]/]path[:tag][@digest]`,
 * lower-case path components separated by `/`, no spaces, nothing after.
 */
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*'
const REGISTRY = '(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::\\d+)?/)?'
export const IMAGE_REFERENCE = new RegExp(`^${REGISTRY}${COMPONENT}(?:/${COMPONENT})*(?::[\\w][\\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`)
const imageReference = text().check(z.maxLength(512), z.regex(IMAGE_REFERENCE, 'an image reference, such as "registry.example.com/library/node:24-bookworm-slim" or "localhost/base:1"'))

/** An engine network: a name, or an engine's own mode (`host`, `none`, `container:<name>`). */
const networkName = text().check(z.maxLength(256), z.regex(/^(?:container:)?[a-zA-Z0-9][a-zA-Z0-9_.-]*$/, 'a network name, such as "host", "none" or "my-net"'))

/** A Debian package name, optionally with `=version`. */
const debianPackage = text().check(z.regex(/^[a-z0-9][a-z0-9+.-]+(?:=[A-Za-z0-9.+:~-]+)?$/, 'a Debian package name, such as "python3" or "golang-go"'))

/** A path inside the repository, relative to its root. */
const repositoryPath = text().check(
  z.refine((s: string) => !s.startsWith('/') && !s.split(/[\\/]/).includes('..'), { message: 'a path inside the repository, relative to its root, such as ".omh/Containerfile"' }),
)

/**
 * The proxy loads its whole list before a session can reach anything (20,000 entries take squid
 * most of a minute), so a list is bounded; a pattern covers a domain's hosts at once.
 */
export const MAX_HOSTS = 1000
const hostList = z.array(hostPattern).check(z.maxLength(MAX_HOSTS, `at most ${MAX_HOSTS} hosts; name a domain's hosts at once with a pattern such as "*.example.com"`))

/** Where a secret may go: hosts (`*.example.com` for a domain and every name under it), on any port. */
const boundHosts = z
  .array(hostPattern.check(z.refine((host: string) => !host.includes(':'), 'a secret goes to a host on any port: name the host without one')))
  .check(z.minLength(1, 'name at least one host the secret may go to, such as "api.github.com"'), z.maxLength(MAX_HOSTS, `at most ${MAX_HOSTS} hosts; name a domain's hosts at once with a pattern such as "*.example.com"`))
const secretName = text().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a secret name: letters, digits and _, not starting with a digit, such as "GITHUB_TOKEN"'))

const port = z.int().check(z.gte(1, 'a port from 1 to 65535'), z.lte(65535, 'a port from 1 to 65535'))

const serviceName = text().check(z.regex(/^[a-z][a-z0-9-]{0,30}$/, 'a service name: lower-case letters, digits and -, such as "db"'))

/** What `[notify] terminal` may name; `auto` picks one by the terminal. */
export const NOTIFY_TERMINALS = ['auto', 'osc9', 'osc777', 'bell', 'off'] as const
export type NotifyTerminal = (typeof NOTIFY_TERMINALS)[number]

/** A container beside a session. */
const service = z.strictObject({
  /** The image it runs. */
  image: imageReference,
  /** Its variables. */
  env: z.optional(z.record(z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name')), z.string().check(z.refine((s: string) => !CONTROL.test(s), { message: 'a control character has no place in a setting' })))),
  /** What it runs instead of the image's own command. */
  command: z.optional(z.array(text())),
  /** A shell command that exits 0 once the service is ready; the harness starts after. */
  health: z.optional(text()),
})

const entryName = z.string().check(
  z.minLength(1),
  z.refine((s: string) => !s.includes('/') && !s.includes('\\') && !s.startsWith('.') && !s.includes('\0'), {
    message: 'an entry is a name in your catalogue, never a path',
  }),
)

/**
 * A `plugins` entry: a path, or a package name and a path inside that
 * package. A subpath that climbs (`argparse/../../x.mjs`) would name any file
 * on the machine under a package's name, which trust does not hash.
 */
export const climbsOutOfPackage = (specifier: string): boolean => {
  if (specifier.startsWith('.') || specifier.startsWith('/')) return false
  return specifier.includes('\\') || specifier.split('/').some((part) => part === '' || part === '.' || part === '..')
}

const pluginSpecifier = text().check(
  z.refine((s: string) => !climbsOutOfPackage(s), { message: 'a path ("./plugin.mjs") or a package name followed by a path inside that package, never one that leaves it' }),
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
  plugins: z.optional(z.array(pluginSpecifier)),
  /** `auto` or an engine a runtime plugin answers to. */
  runtime: z.optional(text()),
  /**
   * Each engine's settings, `[runtimes.<engine>]`: the keys every engine takes (ENGINE_KEYS), read
   * by omh, and the runtime plugin's own, which it checks against its own schema.
   */
  runtimes: z.optional(
    z.record(
      text(),
      z.looseObject({
        /** On this engine, the network sessions join and their proxies reach out on, in place of `[session] network`. */
        network: z.optional(networkName),
      }),
    ),
  ),
  /** Which captured login to use when a harness has several. */
  account: z.optional(text()),
  /** Allowlist per capability: absent = everything, [] = nothing, ["*"] = the whole catalogue. */
  use: z.optional(use),
  session: z.optional(
    z.strictObject({
      /** The engine network session containers join (a port can only be published on a network that has one). */
      network: z.optional(networkName),
      /** How long a session container may sit with nothing run in it before the next omh command stops it: `90m`, `4h`, `2d`. */
      idle_stop: z.optional(z.string().check(z.regex(/^[1-9]\d*[smhd]$/, 'a duration: a whole number and s, m, h or d, e.g. "4h"'))),
      /** How a session's files reach its container: `auto` (checked per engine), `mounted` or `copied` (into volumes). */
      files: z.optional(z.enum(['auto', 'mounted', 'copied'])),
      /** Untracked files copied into a new session's worktree (paths or globs in the repository), `[limits] carry_in_bytes` at most. */
      carry_in: z.optional(z.array(text())),
      /** Memory a session may use: bytes, a size (`4g`, `512m`) or a share of the host's (`50%`). */
      memory: z.optional(memorySize),
      /** The most processes and threads a session may run at once. */
      pids: z.optional(z.int().check(z.gte(16, 'a number of processes, at least 16'), z.lte(1_000_000, 'a number of processes, at most 1000000'))),
      /** CPUs a session may keep busy, fractions allowed (`1.5`). */
      cpus: z.optional(z.number().check(z.gt(0, 'a number of CPUs above 0, such as 1.5'), z.lte(1024, 'a number of CPUs, at most 1024'))),
      /** Shell commands run once in a new session's worktree, as the agent, before the harness starts (`npm ci`). */
      setup: z.optional(z.array(text())),
      /** The project's test command, as a launch shows it and `omh sessions test` runs it in a session. */
      test: z.optional(text()),
      /** Ports the session serves, published on 127.0.0.1 at a port the engine picks. */
      ports: z.optional(z.array(port)),
      /** Dependency caches (npm, pip, cargo, …) kept in volumes the repository's sessions share; `false` turns them off. */
      caches: z.optional(z.boolean()),
      /** A new session copies what an earlier session's setup of the same inputs left in its worktree, instead of running it; `false`: every session runs its setup. */
      reuse_setup: z.optional(z.boolean()),
      /** A session kept prepared per harness, made in the background after a launch makes one, for the next `--new` to claim: 1 after every such launch, 0 never; unset, after those at a terminal. */
      spare: z.optional(z.int().check(z.gte(0, 'a number of spares: 0 or 1'), z.lte(1, 'a number of spares: 0 or 1'))),
    }),
  ),
  /**
   * Secrets a session gets as placeholders, each put back in place of its placeholder only on requests to its
   * hosts: `[secrets.GITHUB_TOKEN] hosts = ["api.github.com"]`. The value comes from the environment, the secrets file or the keyring.
   */
  secrets: z.optional(z.record(secretName, z.strictObject({ hosts: boundHosts }))),
  /** Containers beside each session, reached by name on its network: `[services.db] image = "postgres:16"`. */
  services: z.optional(z.record(serviceName, service)),
  network: z.optional(
    z.strictObject({
      /** `allowlist`: out only through the egress proxy, to allowed hosts; `open`: the engine's network; `none`: no network. */
      egress: z.optional(z.enum(['allowlist', 'open', 'none'])),
      /** Hosts a session may reach, added to every other layer's and the adapter's. */
      allow: z.optional(hostList),
      /** The package registries a session may reach; the most specific layer's list replaces the others. */
      registries: z.optional(hostList),
    }),
  ),
  limits: z.optional(
    z.strictObject({
      /** The most bytes omh reads from one file of the profile, an adapter, an editor or a repository. */
      file_bytes: z.optional(z.int().check(z.positive())),
      carry_in_bytes: z.optional(z.int().check(z.positive())),
    }),
  ),
  /**
   * How omh's notifier tells you a session's harness waits for you or finished. Read from your own
   * layers alone: a repository's layer that has it is refused, since its command would run on the host.
   */
  notify: z.optional(
    z.strictObject({
      /** A program and its arguments, run with no shell, given each event as one JSON document on stdin. */
      command: z.optional(z.array(text()).check(z.minLength(1, 'a program and its arguments, such as ["/usr/local/bin/pager-me", "--quiet"]'))),
      /** What is written to the terminal omh runs in: `auto` picks by the terminal, else the named escape, the bell, or nothing. */
      terminal: z.optional(z.enum(NOTIFY_TERMINALS)),
      /** A desktop notification through notify-send, where there is a desktop session; `false` turns it off. */
      desktop: z.optional(z.boolean()),
    }),
  ),
  image: z.optional(
    z.strictObject({
      /** The image omh's base recipe starts `FROM`: Debian-based, with apt. */
      base: z.optional(imageReference),
      /** The engine network image builds run on (`host` reaches registries where the bridge cannot). */
      network: z.optional(networkName),
      /** Debian packages added to the project's environment (`python3`, `golang`). */
      packages: z.optional(z.array(debianPackage)),
      /** Shell commands run as root while the environment is built, after the packages. */
      setup: z.optional(z.array(text())),
      /** A Containerfile of the repository's, built on the environment with the repository as context. */
      containerfile: z.optional(repositoryPath),
      /** Which devcontainer.json is the environment: `auto`, `none`, or the name of one in `.devcontainer/<name>/`. */
      devcontainer: z.optional(text().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, '"auto", "none", or the name of a folder in .devcontainer/'))),
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

/** The keys of `[runtimes.<engine>]` omh reads for every engine; the rest of the table is the runtime plugin's. */
export const ENGINE_KEYS: readonly string[] = ['network']
