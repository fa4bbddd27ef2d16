/**
 * The plugin contracts. A plugin is a plain object, default-exported by an
 * npm package (or a local module) that a settings file names in `plugins`.
 * The kernel checks its shape when it loads and does the tapping for
 * renderers and runtimes; an extension taps the few hooks it is handed.
 *
 * This file is the reference documentation of every contract.
 *
 * @since 1
  *
 * Longer than 400 lines: this file is the documentation of the contracts, member by member.
 */
import type { $ZodType } from 'zod/v4/core'
import type { OmhError, Problem } from './errors.js'
import type { CapabilityClass, ItemOf, Moment, ProfileItems, ToolWord } from './model.js'

/** The plugin API this kernel speaks. Bumped only on a breaking change of a contract. */
export const PLUGIN_API_VERSION = 1 as const

/** Every API version this kernel accepts. Support is set membership, never ordering. */
export const SUPPORTED_API_VERSIONS: ReadonlySet<number> = new Set([PLUGIN_API_VERSION])

export interface PluginMeta {
  /** The npm package name (or, for a local module, a name of its own). Shown by `omh plugins`. */
  readonly name: string
  /** The package version. Shown by `omh plugins` and in error reports. */
  readonly version: string
}

// ─── Renderers ────────────────────────────────────────────────────────────────

/**
 * A binding, as a renderer receives it: one `[capabilities.<class>]` table of
 * an adapter, with `$HOME` already expanded to the guest home.
 */
export interface Binding {
  /** Guest path the harness reads this capability from. */
  readonly path: string
  /** Further guest paths that receive the same content (meaningful for single documents). */
  readonly also: readonly string[]
  /** The render string that chose this renderer. */
  readonly render: string
  /** Host path `omh config … import` reads, unexpanded (`$HOME`, `$REPO`). */
  readonly import?: string
  /** Hooks only: omh moment → the harness's name for it. An absent moment cannot be expressed. */
  readonly events?: Readonly<Partial<Record<string, string>>>
  /** Hooks only: payload field → where the harness keeps it, in the renderer's own language. */
  readonly fields?: Readonly<Partial<Record<string, string>>>
  /** Hooks only: how the harness accepts advisory text. Absent: it cannot. */
  readonly inject?: HookProtocol
  /** Hooks only: how the harness blocks a call with a reason. Absent: it cannot. */
  readonly refuse?: HookProtocol
}

/** How a harness takes a hook's words: a template in the renderer's language, and where it works. */
export interface HookProtocol {
  /** Filled per hook: `{{text}}` becomes the hook's text as a value of the renderer's language, `{{event}}` the harness's event name. */
  readonly template: string
  /** The moments at which the harness reads what the template produces. Absent: every moment in `events`. */
  readonly at?: readonly Moment[]
}

/** The facts about the adapter a renderer may need beyond its binding. */
export interface AdapterFacts {
  /** The harness name: the bare word after `omh`. */
  readonly name: string
  /** The adapter's `[tools]`: omh tool word → the harness's spelling. Absent words cannot be expressed. */
  readonly tools: Readonly<Partial<Record<ToolWord, string>>>
  /** Guest paths of every binding of the same adapter, by class; lets one renderer refer to another's output. */
  readonly paths: Readonly<Partial<Record<CapabilityClass, string>>>
}

interface RenderInputBase<O> {
  readonly binding: Binding
  readonly adapter: AdapterFacts
  /** The binding's `[capabilities.<class>.options]`, already checked against `options`. */
  readonly options: O
  /**
   * The whole selected profile. A renderer renders only `items`; it reads the
   * rest when its document must agree with what another binding writes (a
   * settings file approving the MCP servers another document declares).
   * @since 1
   */
  readonly profile: ProfileItems
}

/** What a renderer is asked to render: one capability class's items for one binding. */
export type RenderInput<O = unknown> = {
  [C in CapabilityClass]: RenderInputBase<O> & {
    readonly capability: C
    /** The selected items, in selection order. */
    readonly items: readonly ItemOf<C>[]
  }
}[CapabilityClass]

/** Facts about the run a renderer may read. Renderers must not do I/O. */
export interface RenderContext {
  /** Guest home directory (`$HOME` inside the sandbox). */
  readonly guestHome: string
  /** Guest working directory, where the worktree is mounted. */
  readonly guestWork: string
}

/** A document the kernel writes into staging and mounts read-only at `guest`. */
export interface StagedFile {
  readonly kind: 'file'
  readonly guest: string
  readonly content: string | Uint8Array
  /**
   * Unix mode bits; default 0o644. Staging keeps the owner's bits only (a
   * document may hold secrets): 0o755 is staged 0o700, 0o644 as 0o600.
   */
  readonly mode?: number
  /**
   * The document's syntax (e.g. `json`, `toml`). Two bindings may write one
   * guest path only when both name the same syntax and a loaded renderer
   * offers a `combine` for it.
   */
  readonly syntax?: string
}

/**
 * A directory the kernel assembles at `guest`: one entry per item, each a host
 * file or directory mounted read-only and reached by name.
 */
export interface StagedTree {
  readonly kind: 'tree'
  readonly guest: string
  readonly entries: readonly { readonly name: string; readonly source: string }[]
  /**
   * Each entry is mounted at its name, not a link to its source: for a harness that skips a
   * symbolic link where it looks for a folder or a file. Absent: links.
   * @since 1
   */
  readonly mounted?: boolean
}

export type StagedEntry = StagedFile | StagedTree

/** A profile item the harness cannot express, and why, in words (`no \`search\` tool`). */
export interface DroppedItem {
  readonly capability: CapabilityClass
  readonly name: string
  readonly reason: string
}

/**
 * A profile item the harness has no native form for, staged as the nearest
 * thing it does have: a command as a skill, a read-only subagent as an agent
 * in a read-only sandbox. `to` says what it became, in words.
 * @since 1
 */
export interface TranslatedItem {
  readonly capability: CapabilityClass
  readonly name: string
  readonly to: string
}

/**
 * A value the renderer will not stage because the harness would change it
 * before use: text it substitutes (`${VAR}`, `{env:VAR}`), for instance. The
 * kernel gathers every refusal of every binding into one error and stages
 * nothing.
 */
export interface RefusedValue {
  readonly capability: CapabilityClass
  /** The item holding the value. */
  readonly name: string
  /** Where in the item, as a dotted path (`args[1]`, `env.TOKEN`, `headers.Authorization`). */
  readonly field: string
  readonly value: string
  /** What the harness would do with it, in words (`the harness substitutes \`${…}\``). */
  readonly reason: string
}

/** What a renderer returns. Deterministic: equal inputs give byte-equal outputs. */
export interface RenderOutput {
  readonly files: readonly StagedEntry[]
  readonly dropped: readonly DroppedItem[]
  /** Items staged as something other than their own kind, and what each became. Absent: none. */
  readonly translated?: readonly TranslatedItem[]
  /** Values the harness would not receive as written. Any refusal stops the render. */
  readonly refused?: readonly RefusedValue[]
  /**
   * Environment the container needs for the rendered files to work, such as a
   * secret that a document names by variable instead of holding. Never written
   * into staging.
   */
  readonly env?: Readonly<Record<string, string>>
}

/** A document handed to a parser: what the harness keeps on disk. */
export interface ParseDocument {
  readonly file: string
  readonly content: string
}

/** Items a parser read back, with what it had to leave because omh's model cannot say it. */
export interface ParseSuccess {
  readonly ok: true
  readonly items: Partial<ProfileItems>
  /** Entries present in the document that omh does not manage, with the reason. */
  readonly left: readonly { readonly name: string; readonly reason: string }[]
}

export interface ParseFailure {
  readonly ok: false
  /** Each failure names its file and, where the format gives one, its line. */
  readonly problems: readonly Problem[]
}

export type ParseResult = ParseSuccess | ParseFailure

/** The pieces a `combine` receives: one document per binding, in capability order. */
export interface CombinePart {
  /** The binding that produced this part, e.g. `capabilities.mcp`. */
  readonly binding: string
  readonly content: string | Uint8Array
}

export type CombineResult =
  | { readonly ok: true; readonly content: string | Uint8Array }
  | { readonly ok: false; readonly reason: string }

export interface RendererPlugin<O = unknown> {
  readonly kind: 'renderer'
  readonly apiVersion: number
  readonly meta: PluginMeta
  /** Values an adapter may write in `render = "…"`. */
  readonly formats: readonly string[]
  /** Capability classes this renderer accepts. An adapter binding it to another class is refused at load. */
  readonly classes: readonly CapabilityClass[]
  /**
   * Strict schema for the binding's `[capabilities.<class>.options]` table.
   * Absent: the renderer takes no options and an `options` table is refused.
   */
  readonly options?: $ZodType<O>
  /**
   * Renders one binding. Pure and deterministic: no I/O, no clock, no
   * randomness. Resolve `undefined` to decline, letting the next renderer of
   * the same format answer.
   */
  render(input: RenderInput<O>, context: RenderContext): Promise<RenderOutput | undefined> | RenderOutput | undefined
  /**
   * Reads this format back into canonical items: the inverse of `render`, so
   * `parse(render(x))` equals `x`. Failures are values, never throws.
   * Present only on formats that `omh config … import` can read.
   */
  parse?(documents: readonly ParseDocument[], context: ParseContext<O>): ParseResult
  /**
   * Joins documents of one syntax that several bindings write to one guest
   * path, keyed by syntax. Refuse (ok: false) rather than let one part
   * overwrite another.
   */
  readonly combine?: Readonly<Record<string, (parts: readonly CombinePart[]) => CombineResult>>
}

/** What a parser may know beyond the documents. */
export interface ParseContext<O = unknown> {
  readonly capability: CapabilityClass
  readonly binding: Binding
  readonly adapter: AdapterFacts
  /**
   * The binding's `[capabilities.<class>.options]`, checked against `options` as for `render`:
   * a format whose shape an option changes reads it back the same way.
   * @since 1
   */
  readonly options: O
  /** Host environment, for formats that name secrets by variable. */
  readonly env: Readonly<Record<string, string | undefined>>
}

// ─── Runtimes ────────────────────────────────────────────────────────────────

/** What `detect` found: this engine is usable here. */
export interface RuntimeInfo {
  /** The plugin's `engine`. */
  readonly engine: string
  /** The engine's server version (for an engine without a server, its own version). */
  readonly version: string
  /** Where the engine is reached, when not the local default (a remote host or a named context). */
  readonly endpoint?: string
}

/** Why an engine is not usable, for the error listing what was tried. */
export interface RuntimeUnavailable {
  /** The plugin's `engine`. */
  readonly engine: string
  /** What was found, precisely: not installed, installed but not answering (and where), no permission. */
  readonly reason: string
  /** What the user can do about it, in one sentence. */
  readonly hint?: string
}

export interface RuntimeContext {
  /**
   * The environment the engine's client runs with. Runtimes pass it whole and
   * add nothing, so the variables and contexts that point a client at a
   * remote engine work unchanged.
   */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Streams a line of progress (build output) to the user's stderr. */
  progress(line: string): void
  /** The user asked for detail: runtimes may say more through `progress`. */
  readonly verbose: boolean
  /** Aborts the engine's client; the operation rejects. */
  readonly signal?: AbortSignal
}

/** An image to build from a recipe handed to the engine on stdin, with an empty context. */
export interface ImageRecipe {
  /** Full tag, a digest of the recipe: never `:latest`. */
  readonly tag: string
  /** The Containerfile text. Its `FROM` may name a public image; the engine pulls it only when absent. */
  readonly containerfile: string
  /** Labels the built image carries (`omh.kind`, `omh.adapter`, …). */
  readonly labels: Readonly<Record<string, string>>
  /** Build-time network, e.g. `host` where the bridge cannot reach a registry. Absent: the engine's default. */
  readonly network?: string
  /**
   * A host directory sent as the build context, for a recipe that copies
   * files in (a repository's own Containerfile). Absent: an empty context.
   * @since 1
   */
  readonly context?: string
  /** `ARG` values for the build (`--build-arg`). @since 1 */
  readonly buildArgs?: Readonly<Record<string, string>>
  /** The stage of a multi-stage Containerfile to build (`--target`). @since 1 */
  readonly target?: string
}

export interface Mount {
  /** Absolute host path of an existing file or directory. A missing one fails; engines never create it. */
  readonly host: string
  /** Absolute guest path. A file mounts over a file, a directory over a directory. */
  readonly guest: string
  readonly readOnly: boolean
}

/**
 * The two ways the files of a container reach it. `mounted`: the engine shares
 * this machine's disk and bind-mounts host paths (`ContainerSpec.mounts`).
 * `copied`: it does not (an engine on another machine, a cluster), so the files
 * are copied into volumes the engine keeps (`ContainerSpec.volumes`, filled
 * and read back through `RuntimePlugin.volumes`).
 * @since 1
 */
export type FileWay = 'mounted' | 'copied'

/**
 * A file on this machine that a runtime looks for through its engine, to tell
 * whether the engine shares this disk. Made by omh for one check and removed
 * after it.
 * @since 1
 */
export interface FileProbe {
  /** Absolute host directory holding the file and nothing else. */
  readonly dir: string
  /** The file's name in that directory. */
  readonly file: string
  /** What the file holds. An engine that shows other content, an empty directory or nothing does not share this disk. */
  readonly token: string
  /** An image the engine holds, for a runtime that needs a container to look through. */
  readonly image: string
}

/** What a runtime found out about the ways files reach its containers. @since 1 */
export interface FileWays {
  /** The ways that work here, best first. Empty: neither does, and `why` says why. */
  readonly ways: readonly FileWay[]
  /** Why `mounted` is not among the ways, in words (`the engine at tcp://… does not see /tmp/…`). */
  readonly why?: string
}

/** A volume the engine keeps, mounted into a container. @since 1 */
export interface VolumeMount {
  /** The volume's name in the engine (a PersistentVolumeClaim's, on a cluster). */
  readonly volume: string
  /** Absolute guest directory. A volume is always a directory. */
  readonly guest: string
  readonly readOnly: boolean
}

/** What moving an archive into or out of a volume needs: a runtime may run a short-lived helper for it. @since 1 */
export interface VolumeHelper {
  /** An image the engine holds that has `sh` and `tar`. */
  readonly image: string
  /** Whose the files put into the volume are, by number (the container user of the containers that mount it). */
  readonly owner: HostUser
  /**
   * A running container that mounts the volume at `guest`: a runtime may
   * read the volume through it (`exec … tar`), cheaper than a helper of its
   * own. Absent, or gone: the runtime starts what it needs.
   */
  readonly via?: { readonly container: string; readonly guest: string }
}

/**
 * Volumes the engine keeps, for the `copied` way. Archives are tar files on
 * this machine (POSIX ustar or GNU, paths relative to the volume's root); a
 * runtime moves them however its engine allows (a copy into a created container, `exec -i tar`, a
 * helper pod), so only the archive crosses the network. Every operation that
 * fails in the engine rejects with CONTAINER_FAILED.
 * @since 1
 */
export interface VolumeOps {
  /** Creates the volume with these labels unless one of that name exists; resolves whether it created it. */
  create(volume: string, labels: Readonly<Record<string, string>>, context: RuntimeContext): Promise<boolean>
  /** Names of the volumes carrying every given label; an empty value matches any value of its label. */
  list(labels: Readonly<Record<string, string>>, context: RuntimeContext): Promise<readonly string[]>
  /** Removes the volume. A volume already gone is not an error; one a container still uses is refused. */
  remove(volume: string, context: RuntimeContext): Promise<void>
  /** Replaces the volume's whole contents with the archive at the host path `archive`, owned by `helper.owner`. */
  put(volume: string, archive: string, helper: VolumeHelper, context: RuntimeContext): Promise<void>
  /** Writes the volume's whole contents as an archive to the host path `archive` (created or replaced). */
  get(volume: string, archive: string, helper: VolumeHelper, context: RuntimeContext): Promise<void>
}

/** A user of the host, by number. */
export interface HostUser {
  readonly uid: number
  readonly gid: number
}

/**
 * A container, described completely. The runtime turns it into its CLI's
 * flags and adds nothing but `--pull=never` (omh's tags exist only locally).
 */
export interface ContainerSpec {
  /** A tag that exists in the engine; it is never pulled. */
  readonly image: string
  /** The container's name; absent, the engine makes one up. */
  readonly name?: string
  /** Bind mounts, in order: a later mount may sit inside an earlier one (a file over `/work/AGENTS.md`). */
  readonly mounts: readonly Mount[]
  /**
   * Volumes the engine keeps (the `copied` way), mounted before `mounts`. A
   * runtime without `volumes` refuses a spec that names any. Absent: none.
   * @since 1
   */
  readonly volumes?: readonly VolumeMount[]
  /** Values travel in the engine client's environment, not on its command line, unless the client reads that name itself. */
  readonly env: Readonly<Record<string, string>>
  /** Labels `list` finds the container by. */
  readonly labels: Readonly<Record<string, string>>
  /** Absolute guest directory the process starts in; empty: the image's own. */
  readonly workdir: string
  /** `uid:gid` or a user name; empty: the image's own. */
  readonly user: string
  /**
   * The host user who runs the engine's client and owns the read-write
   * mounts. Present, the runtime makes that user's files appear as `user`'s
   * (a numeric `uid:gid`) inside, and what `user` creates that user's on the
   * host: an engine that maps users per container (a rootless one) maps this
   * user onto `user`; one that gives containers the host's IDs as they are
   * (a daemon running as root) needs `user` to be these very IDs, and fails
   * the container otherwise. Absent: no mapping is asked for.
   */
  readonly hostUser?: HostUser
  /** The process to run, overriding the image's command. */
  readonly argv: readonly string[]
  /** An engine network name (`none`, `host`, …). Absent: the engine's default. */
  readonly network?: string
  /**
   * Further names the container answers to on `network`.
   * @since 1
   */
  readonly aliases?: readonly string[]
  /**
   * Ports published on the host, bound to 127.0.0.1. Without `host`, the
   * engine picks a free one as the container starts (`inspect` and `list`
   * say which), so a port taken on the host never stops a container.
   */
  readonly ports?: readonly { readonly host?: number; readonly guest: number }[]
  /** Give the process a terminal. For `run`, ignored when omh's own stdin is not one. */
  readonly tty?: boolean
  /** Give the process the user's stdin. */
  readonly interactive?: boolean
  /** Linux capabilities to drop; `['ALL']` for a session. */
  readonly capDrop?: readonly string[]
  /** Forbid gaining privileges (setuid binaries, file capabilities). */
  readonly noNewPrivileges?: boolean
  /** Run a minimal init as PID 1 so orphaned processes are reaped. */
  readonly init?: boolean
  /**
   * What the container may use at most. An engine that cannot enforce a
   * limit it is given rejects (CONTAINER_FAILED) rather than run without it.
   * @since 1
   */
  readonly limits?: ResourceLimits
}

/** A container's ceilings; an absent one is the engine's default (none). */
export interface ResourceLimits {
  /** Bytes of memory, swap included: the kernel kills inside the container past it. */
  readonly memory?: number
  /** Processes and threads at once: `fork` fails past it. */
  readonly pids?: number
  /** CPUs' worth of time, fractions allowed. */
  readonly cpus?: number
}

export interface RunResult {
  /** The process's exit status. */
  readonly exitCode: number
  /** Captured output, exactly as written; empty when the process had the user's terminal. */
  readonly stdout: string
  /** Like `stdout`. */
  readonly stderr: string
}

export interface ContainerInfo {
  /** The full container id. */
  readonly id: string
  /** The container's name, without a leading slash. */
  readonly name: string
  /** Running now; a stopped container is listed too. */
  readonly running: boolean
  /** The image as the container was created from it (a tag, not an id). */
  readonly image: string
  /** Every label the container carries, including ones inherited from its image. */
  readonly labels: Readonly<Record<string, string>>
  /**
   * The TCP ports a running container publishes, as the engine bound them;
   * empty for a stopped one. Absent: this runtime cannot tell, and
   * `omh attach` cannot reach the container.
   */
  readonly ports?: readonly PublishedPort[]
}

/** An image the engine holds. */
export interface ImageInfo {
  /** The full image id. */
  readonly id: string
  /** Every `repository:tag` it carries. */
  readonly tags: readonly string[]
  /** When it was built, ISO 8601. */
  readonly created: string
  /** Its size in bytes, as the engine counts it. */
  readonly size: number
  readonly labels: Readonly<Record<string, string>>
}

/** A container's TCP port published on the host. */
export interface PublishedPort {
  /** The port inside the container. */
  readonly guest: number
  /** The port on the host: the one the spec named, or the one the engine picked. */
  readonly host: number
  /** The host address it is bound to, e.g. `127.0.0.1`. */
  readonly hostIp: string
}

export interface ExecOptions {
  /** Give the process a terminal. Ignored when omh's own stdin is not one. */
  readonly tty: boolean
  /** Give the process the user's stdin. */
  readonly interactive?: boolean
  /** Run as this user instead of the container's. */
  readonly user?: string
  /** Start in this guest directory instead of the container's. */
  readonly workdir?: string
  /** Values travel in the engine client's environment, not on its command line, unless the client reads that name itself. */
  readonly env?: Readonly<Record<string, string>>
  /** Capture output instead of passing the user's terminal through. */
  readonly capture?: boolean
  /**
   * With `capture`: each line of output also goes to `context.progress` as it
   * comes, stdout and stderr together (and together in `stdout`), for a
   * long command whose progress the user watches. A runtime that cannot
   * stream captures as usual.
   * @since 1
   */
  readonly stream?: boolean
}

/** A process to start: the program, its arguments, its whole environment, and what its stdin, stdout and stderr are. */
export interface ClientProcess {
  readonly file: string
  readonly args: readonly string[]
  readonly env: Readonly<Record<string, string>>
  readonly stdio: readonly ['inherit' | 'ignore', 'inherit' | 'ignore', 'inherit' | 'ignore']
}

/** A runtime's client program, as data. */
export interface RuntimeClient {
  /**
   * The process `exec` starts for these arguments when the output is not
   * captured, exactly: `exec` runs this very process.
   */
  exec(container: string, argv: readonly string[], options: ExecOptions, context: RuntimeContext): ClientProcess
  /**
   * Arguments for the client that print a line per named container, a line
   * that changes whenever the container is replaced or stops: asked before
   * and after, equal answers mean the very same containers still run.
   */
  containerState(containers: readonly string[]): readonly string[]
}

/**
 * A container engine. Every operation that fails in the engine (not in the
 * process it runs) rejects with an OmhError: CONTAINER_FAILED, or
 * IMAGE_BUILD_FAILED for `build`, carrying the client's error as `cause`.
 */
export interface RuntimePlugin<O = unknown> {
  readonly kind: 'runtime'
  readonly apiVersion: number
  readonly meta: PluginMeta
  /** The engine's name as `runtime = "…"` and `--runtime` spell it. */
  readonly engine: string
  /**
   * Strict schema for this runtime's own table in the settings,
   * `[runtimes.<engine>]` (a cluster's context, a claim's size). omh merges
   * the table key by key across the settings layers (the most specific
   * layer's value wins) and validates it here; what the schema refuses is a
   * settings error naming the file, line and key. Absent: the runtime takes no
   * settings and such a table is refused.
   * @since 1
   */
  readonly options?: $ZodType<O>
  /**
   * Receives the table as `options` parsed it (defaults applied), once, when
   * omh loads its plugins and before anything else is asked, also when the
   * settings name no table (then parsed from `{}`). Synchronous and free of
   * I/O: a runtime keeps what it needs for later calls.
   * @since 1
   */
  configure?(options: O): void
  /** Is this engine installed and answering here? Resolve the reason when it is not; never reject. */
  detect(context: RuntimeContext): Promise<RuntimeInfo | RuntimeUnavailable>
  /** Whether an image with this exact tag exists. */
  hasImage(tag: string, context: RuntimeContext): Promise<boolean>
  /** Builds `recipe.tag`, streaming output through `context.progress`. */
  build(recipe: ImageRecipe, context: RuntimeContext): Promise<void>
  /** Starts a detached, long-lived container (never removed on exit); resolves its id. */
  up(spec: ContainerSpec, context: RuntimeContext): Promise<string>
  /**
   * Runs argv in a running container; resolves the process's exit status.
   * An engine that cannot start the process at all (no such container, not
   * running) resolves the engine's own status with its message on stderr,
   * or rejects when the output was captured.
   */
  exec(container: string, argv: readonly string[], options: ExecOptions, context: RuntimeContext): Promise<RunResult>
  /** Runs a one-shot container that is removed when it exits; resolves the process's exit status. */
  run(spec: ContainerSpec, context: RuntimeContext): Promise<RunResult>
  /** Containers (running or not) carrying every given label; an empty value matches any value of its label. */
  list(labels: Readonly<Record<string, string>>, context: RuntimeContext): Promise<readonly ContainerInfo[]>
  /**
   * The container of this name or id, running or not; undefined when there
   * is none. Rejects (CONTAINER_FAILED) when the engine does not answer, and
   * within seconds when it hangs: an answer proves the engine usable, so a
   * launch asks this instead of `detect` and `list`. Optional: without it, a
   * launch detects and lists.
   */
  inspect?(container: string, context: RuntimeContext): Promise<ContainerInfo | undefined>
  /**
   * The client program this runtime runs for its engine (a container
   * engine's command-line client), described as data, for a caller that starts it without
   * loading the runtime. Absent: a runtime that talks to its engine without
   * a client program.
   * @since 1
   */
  readonly client?: RuntimeClient
  /** Stops and removes a container at once. Resolves when it is gone; a container already gone is not an error. */
  down(container: string, context: RuntimeContext): Promise<void>
  /**
   * Which ways files reach this engine's containers, found out by checking,
   * never guessed: whether a container sees `probe` through a bind mount, or
   * the runtime's own knowledge (an engine that never shares this disk, such
   * as a cluster, answers `['copied']` without looking). Rejects only when the
   * engine does not answer. Absent: `['mounted']`.
   * @since 1
   */
  fileWays?(probe: FileProbe, context: RuntimeContext): Promise<FileWays>
  /** Volumes the engine keeps, for the `copied` way. Absent: this runtime can only mount. @since 1 */
  readonly volumes?: VolumeOps
  /** Images carrying every given label, as `list` matches them. Optional: without it, `omh images` cannot show this engine's. */
  images?(labels: Readonly<Record<string, string>>, context: RuntimeContext): Promise<readonly ImageInfo[]>
  /** Removes an image tag (the image with its last tag), or an untagged image by id; an image a container uses is refused (CONTAINER_FAILED). Optional, with `images`. */
  removeImage?(image: string, context: RuntimeContext): Promise<void>
  /**
   * Pushes an image this engine holds to the registry its tag names, with
   * the engine's own login for it (CONTAINER_FAILED when refused). Optional:
   * without it, `omh images push` cannot use this engine.
   * @since 1
   */
  pushImage?(tag: string, context: RuntimeContext): Promise<void>
  /**
   * Engine networks. Optional: without it, or when `create` cannot make an
   * internal network here, sessions cannot be limited to an egress proxy
   * (EGRESS_UNSUPPORTED).
   * @since 1
   */
  readonly networks?: RuntimeNetworks
}

/** What a runtime does with engine networks. Every operation rejects with CONTAINER_FAILED. */
export interface RuntimeNetworks {
  /**
   * The network a container joins when none is named, so a container started
   * on another network can be joined to it as well. Absent: the engine's default cannot be named, and a
   * container that needs both starts on the default.
   * @since 1
   */
  readonly defaultNetwork?: string
  /**
   * Makes the network unless it exists. `internal`: no route out of it, not
   * even to the host; reject when the engine cannot promise that.
   */
  create(name: string, options: { readonly internal: boolean; readonly labels: Readonly<Record<string, string>> }, context: RuntimeContext): Promise<void>
  /**
   * Whether the engine has a network of this name. Optional: without it a network a setting names
   * is passed to the engine unchecked.
   * @since 1
   */
  exists?(name: string, context: RuntimeContext): Promise<boolean>
  /** Joins a running container to a network, reachable there under `aliases`; already joined is not an error. */
  connect(network: string, container: string, aliases: readonly string[], context: RuntimeContext): Promise<void>
  /**
   * Takes a container off a network by force, also when the container is gone and the engine
   * kept its endpoint; not joined, or no such network, is not an error.
   */
  disconnect(network: string, container: string, context: RuntimeContext): Promise<void>
  /** Removes the network; one already gone is not an error. */
  remove(name: string, context: RuntimeContext): Promise<void>
}

// ─── Extensions ──────────────────────────────────────────────────────────────

/** What a renderer pipeline produced for one harness, as a launch hands it on. */
export interface RenderedHarness {
  /** The harness name: the bare word after `omh`. */
  readonly harness: string
  /** The final files by guest path, after combining. */
  readonly files: readonly StagedEntry[]
  /** Every item the harness will not see, with the reason. */
  readonly dropped: readonly DroppedItem[]
  /** Every item the harness sees as something else, and what. */
  readonly translated: readonly TranslatedItem[]
  /** Environment the rendered files need (a secret a document names by variable). */
  readonly env: Readonly<Record<string, string>>
}

/** A launch, described completely, before anything starts. */
export interface LaunchPlan {
  readonly harness: string
  /** The session id, e.g. `s01`. */
  readonly session: string
  /** The session's branch, `omh/<sid>`. */
  readonly branch: string
  /** The checkout the session belongs to: its real path, and the id sessions, worktrees and containers are keyed by. */
  readonly repository: { readonly root: string; readonly id: string }
  /** Host path of the worktree mounted at the guest's work directory. */
  readonly worktree: string
  readonly render: RenderedHarness
  /** The session container. Its plan digest is taken after the last tap, so a changed spec restarts an idle container. */
  readonly spec: ContainerSpec
  /** What runs in the container for the harness. */
  readonly exec: readonly string[]
}

/** A hook an extension taps. `name` names the tap in traces; errors are reported with the plugin's name. */
export interface Tappable<A extends readonly unknown[], R> {
  tap(name: string, fn: (...args: A) => R): void
}

/**
 * The hooks an extension may tap, each fired by omh itself. A tap that
 * throws is reported as PLUGIN_ERROR naming the plugin and the hook.
 */
export interface ExtensionHooks {
  /**
   * A launch is planned and nothing has started yet (`--dry-run` shows the
   * result too). Waterfall: return the plan, changed or not; the next tap
   * receives it.
   */
  readonly beforeLaunch: Tappable<[plan: LaunchPlan], LaunchPlan | Promise<LaunchPlan>>
  /** The harness of a launch exited with `status`. Runs in order; return value ignored. */
  readonly launched: Tappable<[plan: LaunchPlan, status: number], void | Promise<void>>
  /**
   * A command failed with this error, just before omh reports it. Synchronous
   * and observational: a tap cannot change or hide the error.
   */
  readonly failed: Tappable<[error: OmhError], void>
}

/**
 * Code that takes part in omh's own operations: auditing launches, adding a
 * label or a mount, reporting failures somewhere. Loaded like every plugin;
 * `apply` runs once, after every plugin named by the settings has loaded.
 */
export interface ExtensionPlugin {
  readonly kind: 'extension'
  readonly apiVersion: number
  readonly meta: PluginMeta
  apply(hooks: ExtensionHooks): void
}

export type Plugin = RendererPlugin<any> | RuntimePlugin | ExtensionPlugin

/** Typing helper for renderer packages; returns its argument unchanged. */
export const defineRenderer = <O = undefined>(plugin: RendererPlugin<O>): RendererPlugin<O> => plugin

/** Typing helper for runtime packages; returns its argument unchanged. */
export const defineRuntime = <O = unknown>(plugin: RuntimePlugin<O>): RuntimePlugin<O> => plugin

/** Typing helper for extension packages; returns its argument unchanged. */
export const defineExtension = (plugin: ExtensionPlugin): ExtensionPlugin => plugin
