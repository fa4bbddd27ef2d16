/**
 * The launch's types in one place: what its caller hands in and hears back, and what the phases
 * pass one another. The entry (index.ts) re-exports the public ones; they live here because the
 * phase files need them too, and a phase file importing the entry would be a circle.
 */
import type { ContainerInfo, ContainerSpec, FileWay, LaunchPlan, RuntimeContext, RuntimePlugin } from '@omh/plugin-api'
import type { Adapter, HarnessRender, RenderReport } from '@omh/kernel'
import type { KernelView } from '../../kernel-view.js'
import type { AgentUser } from '../../agent-user.js'
import type { ProjectEnvironment, SetupStep } from '../../environment/project.js'
import type { Proxied } from '../../network/credentials.js'
import type { SessionPort } from '../../network/beside.js'
import type { SessionPaths } from '../../host/layout.js'
import type { SessionPlan } from '../plan.js'
import type { Sessions, SessionChoice } from '../sessions.js'
import type { LaunchHooks } from './hooks.js'
import type { ImageSource } from './image.js'
import type { Early } from './shared.js'

export interface LaunchRequest extends SessionChoice {
  readonly harness: string
  /** Arguments for the harness, passed on untouched. */
  readonly args: readonly string[]
  /** `auto` or an engine name; absent: the `runtime` setting. */
  readonly engine?: string
  /** `-a`: the captured account whose login to mount; absent: the `account` setting, or the only one captured. */
  readonly account?: string
  /** Give the harness the user's terminal. */
  readonly tty: boolean
  /** Start the harness in the background, under dtach, and return once it runs. */
  readonly detach?: boolean
  /** Makes the repository's spare of this harness: a new session whose launch stops once its container is up (spare.ts). */
  readonly spare?: boolean
}

/** What the launch tells the user once the container is ready, just before the harness starts. */
export interface LaunchAnnouncement {
  readonly harness: string
  readonly session: string
  readonly branch: string
  /** The session was created by this launch. */
  readonly created: boolean
  readonly dropped: RenderReport['dropped']
  /** Items the harness sees as something else, and what. */
  readonly translated: RenderReport['translated']
  /** What the profile's resolution has to say (selection, composition). */
  readonly notices: readonly string[]
  /** The project's environment, when it is more than omh's base, and what of it omh does not honour. */
  readonly environment?: EnvironmentView
}

/** The project's environment as a launch and its preview tell it. */
export interface EnvironmentView {
  /** What it is: `omh's base`, `.devcontainer/devcontainer.json`, `.omh/Containerfile on omh's base`. */
  readonly describe: string
  readonly setup: readonly SetupStep[]
  /** Whether this session's setup has run to the end once. */
  readonly setupDone: boolean
  readonly ports: readonly number[]
  /** Where this machine reaches each port, once the container is up. */
  readonly published?: readonly SessionPort[]
  readonly unsupported: ProjectEnvironment['unsupported']
  readonly notes: readonly string[]
  readonly test?: string
}

export interface LaunchHost {
  /** Where images come from; absent: omh's recipes (`planImages`, `ensureImage`). */
  readonly images?: ImageSource
  readonly context: RuntimeContext
  /** A progress line for the user (stderr), e.g. a restart and why. */
  notice(line: string): void
  /** The one status line of a launch. */
  announce(announcement: LaunchAnnouncement): void
  /** Asked once a launch's container is up, when the repository has no spare of the harness: starts making one, apart from this process. */
  prepareSpare?(harness: string): void
}

/** What every phase of one launch reads. */
export interface Launch {
  readonly kernel: KernelView
  /** This launch's hooks, with the extensions' taps in them. */
  readonly hooks: LaunchHooks
  readonly sessions: Sessions
  readonly adapter: Adapter
  readonly account: string
  readonly request: LaunchRequest
  readonly images: ImageSource
  /** Who the agent is in the session's container. */
  readonly agent: AgentUser
}

/** The engine a launch uses, and the session's container as it stood when asked. */
export interface EngineView {
  readonly runtime: RuntimePlugin
  /** Running or not, this session's container; empty when it has none. */
  readonly containers: readonly ContainerInfo[]
  /** Its egress proxy as the engine answered beside the container (`found` absent: it has none); absent when not asked. */
  readonly proxy?: { readonly found?: ContainerInfo }
  /** Whether the harness image exists, when that was asked on the way. */
  readonly image?: boolean
  /** A new session's file way, asked of this engine about `image` while the session is made. */
  readonly way?: EarlyWay
}

/** Which way files reach a container, asked ahead of need; `stop` ends the question when nothing will need it. */
export interface EarlyWay {
  readonly image: string
  readonly answer: Early<FileWay>
  /** Whether the answer is in. */
  readonly settled: boolean
  stop(): void
}

/** Phase 1's result: the session this launch holds, created or not. */
export interface Claimed {
  readonly sid: string
  readonly created: boolean
  /** The session's `last-used` stamp as read under the lock, before this launch stamped it. */
  readonly lastUsed?: number
  /** The engine's answer about this session, when one asked before the claim still stands. */
  readonly engine?: EngineView
  release(): Promise<void>
}

/** Phase 2's result: the profile rendered and staged, and the container the launch wants. */
export interface Prepared {
  readonly paths: SessionPaths
  readonly render: HarnessRender
  readonly planned: SessionPlan
  /** The plan after `beforeLaunch` taps. */
  readonly plan: LaunchPlan
  /** The container spec, stamped with its plan digest. */
  readonly spec: ContainerSpec
  /** The spec's variables with every `<secret NAME>` resolved: for the engine only, never shown or staged. */
  readonly secretEnv?: Readonly<Record<string, string>>
  /** API keys the host holds, for the credential proxy alone. */
  readonly proxied?: Proxied
  /** The project's environment, when the image source plans one. */
  readonly environment?: ProjectEnvironment
}
