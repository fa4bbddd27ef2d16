/**
 * The canonical profile: what a user keeps once, in omh's own words. Renderers
 * read these shapes and write each harness's native format; parsers read a
 * native format back into them. Nothing here knows any harness.
 */

/** The capability classes a profile carries and an adapter may bind. */
export const CAPABILITY_CLASSES = ['rules', 'skills', 'mcp', 'commands', 'subagents', 'hooks'] as const
export type CapabilityClass = (typeof CAPABILITY_CLASSES)[number]

/** omh's tool words; an adapter's `[tools]` spells each for its harness. */
export const TOOL_WORDS = ['edit', 'read', 'shell', 'search'] as const
export type ToolWord = (typeof TOOL_WORDS)[number]

/**
 * The moments a hook can attach to. `waiting`: the harness waits for the user, at a permission
 * prompt or with a notification; it comes last so documents written before it keep their order.
 */
export const MOMENTS = ['session-start', 'turn-end', 'before-tool', 'after-tool', 'waiting'] as const
export type Moment = (typeof MOMENTS)[number]

/** Payload fields a hook may read, exposed to it as `$OMH_TOOL_FILE` and `$OMH_TOOL_COMMAND`. */
export const HOOK_FIELDS = ['tool-file', 'tool-command'] as const
export type HookField = (typeof HOOK_FIELDS)[number]

/** Where the guest side of a session lives; adapters write `$HOME` for `GUEST_HOME`. */
export const GUEST_HOME = '/home/agent'
export const GUEST_WORK = '/work'
/** The unprivileged user every harness runs as; omh's base image asserts its UID when it is built. */
export const GUEST_USER = 'agent'
/** The agent's UID when omh runs as root; for anyone else the agent has their UID and GID. */
export const GUEST_UID = 1000
/** The guest user's group; the base image gives `agent` a group of its own with this id. */
export const GUEST_GID = 1000

/** One section of rules, in composition order. */
export interface RuleSection {
  /** Catalogue entry name (file stem), or the project file's name (`AGENTS.md`). */
  readonly name: string
  /** A label saying where the text came from, written into the marker line. */
  readonly origin: string
  /** Host path the text was read from. */
  readonly source: string
  readonly text: string
}

/** An Agent Skill: a directory holding `SKILL.md` and its companion files. */
export interface Skill {
  readonly name: string
  readonly description: string
  /** Host directory of the skill. */
  readonly source: string
  /** The user's word that a harness unable to express this item must not start without it. */
  readonly required?: boolean
}

/** A slash command: markdown with optional frontmatter. */
export interface Command {
  readonly name: string
  readonly description?: string
  /** Host file of the command. */
  readonly source: string
  /** Frontmatter keys beyond `description`, passed through to harnesses that read them. */
  readonly frontmatter: Readonly<Record<string, unknown>>
  readonly body: string
  /** The user's word that a harness unable to express this item must not start without it. */
  readonly required?: boolean
}

/** A subagent: a named prompt with a description, optional tool and model limits. */
export interface Subagent {
  readonly name: string
  readonly description: string
  /** omh tool words; absent means every tool. */
  readonly tools?: readonly ToolWord[]
  /**
   * The model, in the harness's own words: one name for every harness, or a
   * name per harness (keyed by adapter name); a harness not named inherits.
   */
  readonly model?: string | Readonly<Record<string, string>>
  /** Host file of the subagent. */
  readonly source: string
  /** The system prompt. */
  readonly body: string
  /** The user's word that a harness unable to express this item must not start without it. */
  readonly required?: boolean
}

/** An MCP server the harness starts as a child process. */
export interface StdioServer {
  readonly name: string
  readonly transport: 'stdio'
  readonly command: string
  readonly args: readonly string[]
  readonly env: Readonly<Record<string, string>>
  readonly cwd?: string
  /** Host file the server was read from, for messages; absent on servers a parser read back. */
  readonly source?: string
  /** The user's word that a harness unable to express this item must not start without it. */
  readonly required?: boolean
}

/** An MCP server reached over the network. */
export interface RemoteServer {
  readonly name: string
  readonly transport: 'http' | 'sse'
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** Host file the server was read from, for messages; absent on servers a parser read back. */
  readonly source?: string
  /** The user's word that a harness unable to express this item must not start without it. */
  readonly required?: boolean
}

export type McpServer = StdioServer | RemoteServer

export type HookAction =
  | { readonly kind: 'run'; readonly command: string }
  | { readonly kind: 'inject'; readonly text: string }
  | { readonly kind: 'refuse'; readonly text: string }

/** A hook in omh's vocabulary, translated per harness at staging. */
export interface Hook {
  readonly name: string
  readonly on: Moment
  /** Narrows a tool moment to these tools; absent means every tool. */
  readonly tools?: readonly ToolWord[]
  /** A shell predicate; a non-zero exit keeps the hook silent. */
  readonly when?: string
  readonly action: HookAction
  /** Payload fields the hook's text reads, derived when the file is parsed. */
  readonly fields: readonly HookField[]
  /** Host file of the hook. */
  readonly source: string
  /** The user's word that a harness unable to express this item must not start without it. */
  readonly required?: boolean
}

/** Every item of a profile, by capability class. */
export interface ProfileItems {
  readonly rules: readonly RuleSection[]
  readonly skills: readonly Skill[]
  readonly mcp: readonly McpServer[]
  readonly commands: readonly Command[]
  readonly subagents: readonly Subagent[]
  readonly hooks: readonly Hook[]
}

/** The model a subagent asks of one harness, if any. */
export const modelFor = (agent: Subagent, harness: string): string | undefined =>
  typeof agent.model === 'string' ? agent.model : agent.model?.[harness]

export type ItemOf<C extends CapabilityClass> = ProfileItems[C][number]

export const emptyProfile = (): ProfileItems => ({
  rules: [],
  skills: [],
  mcp: [],
  commands: [],
  subagents: [],
  hooks: [],
})

/** Singular nouns for counting, e.g. "1 hook", "3 subagents". */
export const CLASS_NOUN: Readonly<Record<CapabilityClass, readonly [string, string]>> = {
  rules: ['rules section', 'rules sections'],
  skills: ['skill', 'skills'],
  mcp: ['MCP server', 'MCP servers'],
  commands: ['command', 'commands'],
  subagents: ['subagent', 'subagents'],
  hooks: ['hook', 'hooks'],
}

export const countOf = (capability: CapabilityClass, n: number): string =>
  `${n} ${CLASS_NOUN[capability][n === 1 ? 0 : 1]}`

/**
 * Every value of a server a harness might read text substitutions in, with
 * its field path: command, each argument, each env value, cwd, URL, each
 * header value. Renderers check these against their harness's syntax.
 */
export function serverValues(server: McpServer): [field: string, value: string][] {
  const key = (k: string) => (/^[A-Za-z0-9_-]+$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`)
  if (server.transport === 'stdio') {
    return [
      ['command', server.command],
      ...server.args.map((a, n): [string, string] => [`args[${n}]`, a]),
      ...Object.entries(server.env).map(([k, v]): [string, string] => [`env${key(k)}`, v]),
      ...(server.cwd !== undefined ? [['cwd', server.cwd] as [string, string]] : []),
    ]
  }
  return [['url', server.url], ...Object.entries(server.headers).map(([k, v]): [string, string] => [`headers${key(k)}`, v])]
}
