/**
 * A repository's devcontainer.json, read as data: the image or build that is
 * the project's environment, its variables, the commands that set a new
 * session up, its ports and its user. What omh does not honour is named, key
 * by key, never applied: the sandbox's limits win over a repository's wishes
 * (`runArgs`, `mounts`, `privileged`, `capAdd`, `features`, a compose file).
 *
 * JSONC (comments, trailing commas) is read with jsonc-parser, the parser of
 * VS Code itself; a syntax error is SETTINGS_INVALID with line and column.
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { findNodeAtLocation, parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser'
import { OmhError, SETTINGS_INVALID, type Problem } from '@omh/plugin-api'
import { readTextSafe } from '../safe-read.js'

/** One create command as devcontainer.json writes it: a shell line, an argv, or named ones to run side by side. */
export type LifecycleCommand = string | readonly string[] | Readonly<Record<string, string | readonly string[]>>

/** The commands that make a new session ready, in the order the devcontainer spec runs them. */
export const CREATE_COMMANDS = ['onCreateCommand', 'updateContentCommand', 'postCreateCommand'] as const
export type CreateCommandKey = (typeof CREATE_COMMANDS)[number]

export interface Devcontainer {
  /** The file, absolute. */
  readonly file: string
  /** An image used as it is. */
  readonly image?: string
  /** A Containerfile built with the repository's files. */
  readonly build?: {
    /** Absolute, inside the repository. */
    readonly dockerfile: string
    /** Absolute directory, inside the repository. */
    readonly context: string
    readonly args: Readonly<Record<string, string>>
    readonly target?: string
  }
  /** `containerEnv` then `remoteEnv`; `${NAME}` in a value is the image's own variable. */
  readonly env: Readonly<Record<string, string>>
  readonly create: readonly { readonly key: CreateCommandKey; readonly command: LifecycleCommand }[]
  readonly forwardPorts: readonly number[]
  /** `remoteUser`, else `containerUser`. */
  readonly user?: string
  /** Keys omh does not honour, each with why: announced, never applied. */
  readonly unsupported: readonly { readonly key: string; readonly why: string }[]
}

/** Where `[image] devcontainer = "auto"` looks, in this order. */
const AUTO = ['.devcontainer/devcontainer.json', '.devcontainer.json']

/** What the setting chose: a file, none, or why none could be chosen. */
export type DevcontainerChoice = { readonly file: string } | { readonly none: string | undefined }

/**
 * The devcontainer.json `[image] devcontainer` names: `auto` (the default)
 * takes `.devcontainer/devcontainer.json`, then `.devcontainer.json`, then the
 * one `.devcontainer/<name>/devcontainer.json` when there is exactly one;
 * `none` takes none; any other value is such a name.
 */
export function chooseDevcontainer(root: string, setting: string | undefined): DevcontainerChoice {
  const value = setting ?? 'auto'
  if (value === 'none') return { none: undefined }
  const isFile = (rel: string) => statSync(path.join(root, rel), { throwIfNoEntry: false })?.isFile() ?? false
  if (value !== 'auto') {
    const rel = `.devcontainer/${value}/devcontainer.json`
    return isFile(rel) ? { file: path.join(root, rel) } : { none: `[image] devcontainer = "${value}" names ${rel}, which is not there` }
  }
  const found = AUTO.find(isFile)
  if (found) return { file: path.join(root, found) }
  const dir = path.join(root, '.devcontainer')
  const named = existsSync(dir) && statSync(dir).isDirectory() ? readdirSync(dir).filter((n) => isFile(`.devcontainer/${n}/devcontainer.json`)).sort() : []
  if (named.length === 1) return { file: path.join(root, '.devcontainer', named[0]!, 'devcontainer.json') }
  if (named.length > 1) return { none: `.devcontainer/ holds ${named.length} (${named.join(', ')}): name one with [image] devcontainer` }
  return { none: undefined }
}

/** Keys omh reads; everything else is named as not honoured. */
const HONOURED = new Set(['name', '$schema', 'image', 'build', 'dockerFile', 'context', 'containerEnv', 'remoteEnv', 'remoteUser', 'containerUser', 'forwardPorts', ...CREATE_COMMANDS])

/** Why a key commonly met is not honoured, in words; any other key is simply not one omh reads. */
const WHY: Readonly<Record<string, string>> = {
  features: 'features install with their own scripts; add what they bring to the image or [image] packages',
  runArgs: "the sandbox's container flags are omh's",
  mounts: 'nothing of the host is mounted but the worktree',
  workspaceMount: 'the worktree is always /work',
  workspaceFolder: 'the worktree is always /work',
  privileged: 'a session never runs privileged',
  capAdd: 'a session drops every capability',
  securityOpt: "the sandbox's security options are omh's",
  init: 'omh always runs an init',
  dockerComposeFile: 'services come from [services.<name>]',
  service: 'services come from [services.<name>]',
  runServices: 'services come from [services.<name>]',
  initializeCommand: 'it would run on the host, and omh runs no repository code there',
  postStartCommand: 'only the create commands run, once per new session',
  postAttachCommand: 'only the create commands run, once per new session',
  appPort: 'ports come from forwardPorts and [session] ports, on 127.0.0.1 only',
  shutdownAction: 'omh stops sessions itself',
  overrideCommand: 'omh runs its own keeper',
  hostRequirements: 'limits come from [session] memory, pids and cpus',
  customizations: "an editor's own settings",
  updateRemoteUserUID: "the agent always takes omh's IDs",
  userEnvProbe: 'the environment is the image\'s and containerEnv',
}

interface Located {
  readonly data: unknown
  readonly tree: Node | undefined
  readonly text: string
}

/** 1-based line and column of an offset. */
function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset)
  const line = before.split('\n').length
  return { line, column: offset - before.lastIndexOf('\n') }
}

/** Reads a devcontainer.json inside `root`; bad JSONC or a bad key is SETTINGS_INVALID naming file, line and key. */
export function readDevcontainer(file: string, root: string, maxBytes?: number): Devcontainer {
  const text = readTextSafe(file, { within: root, maxBytes })
  if (text === undefined) throw OmhError.of(SETTINGS_INVALID, { args: [file, 1], problems: [{ file, message: 'the file is not there' }] })
  const errors: ParseError[] = []
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false })
  if (errors.length) {
    const problems = errors.map((e) => ({ file, ...position(text, e.offset), message: `JSONC: ${printParseErrorCode(e.error)}` }))
    throw OmhError.of(SETTINGS_INVALID, { args: [file, problems.length], problems })
  }
  const doc: Located = { data: tree ? toValue(tree) : undefined, tree, text }
  const problems: Problem[] = []
  const at = (keyPath: (string | number)[], message: string) => {
    const node = doc.tree ? findNodeAtLocation(doc.tree, keyPath) : undefined
    problems.push({ file, ...(node ? position(text, node.parent?.type === 'property' ? node.parent.offset : node.offset) : {}), path: keyPath.join('.'), message })
  }
  const data = doc.data
  if (!isRecord(data)) {
    at([], 'a devcontainer.json is an object')
    throw OmhError.of(SETTINGS_INVALID, { args: [file, problems.length], problems })
  }
  const dir = path.dirname(file)
  const inside = (keyPath: string[], rel: string): string | undefined => {
    const full = path.resolve(dir, rel)
    const relative = path.relative(root, full)
    if (relative.startsWith('..') || path.isAbsolute(relative)) {
      at(keyPath, `${JSON.stringify(rel)} leads outside the repository`)
      return undefined
    }
    return full
  }
  const str = (keyPath: string[], value: unknown): string | undefined => {
    if (value === undefined) return undefined
    // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
    if (typeof value !== 'string' || !value || /[\u0000-\u001f\u007f]/.test(value)) {
      at(keyPath, 'expected a string without control characters')
      return undefined
    }
    return value
  }

  const unsupported: { key: string; why: string }[] = []
  for (const key of Object.keys(data).sort()) if (!HONOURED.has(key)) unsupported.push({ key, why: WHY[key] ?? 'omh does not read it' })

  const image = str(['image'], data['image'])
  let build: Devcontainer['build']
  const buildData = data['build'] ?? (data['dockerFile'] !== undefined ? { dockerfile: data['dockerFile'], context: data['context'] } : undefined)
  const buildKey = data['build'] !== undefined ? 'build' : 'dockerFile'
  if (buildData !== undefined) {
    if (!isRecord(buildData)) at([buildKey], 'expected an object with dockerfile, context, args and target')
    else {
      for (const key of Object.keys(buildData)) {
        if (!['dockerfile', 'context', 'args', 'target', 'cacheFrom', 'options'].includes(key)) at([buildKey, key], `unknown key; build takes dockerfile, context, args and target`)
        else if (key === 'cacheFrom' || key === 'options') unsupported.push({ key: `build.${key}`, why: "the build's flags are omh's" })
      }
      const dockerfile = str([buildKey, 'dockerfile'], buildData['dockerfile'])
      const context = str([buildKey, 'context'], buildData['context']) ?? '.'
      const target = str([buildKey, 'target'], buildData['target'])
      const args: Record<string, string> = {}
      if (buildData['args'] !== undefined) {
        if (!isRecord(buildData['args'])) at([buildKey, 'args'], 'expected an object of strings')
        else for (const [k, v] of Object.entries(buildData['args'])) {
          const value = str([buildKey, 'args', k], v)
          const resolved = value === undefined ? undefined : substitute(value, root, unsupported, `build.args.${k}`)
          if (resolved !== undefined) args[k] = resolved
        }
      }
      if (!dockerfile) at([buildKey], 'a build names its dockerfile')
      else {
        const df = inside([buildKey, 'dockerfile'], dockerfile)
        const ctx = inside([buildKey, 'context'], context)
        if (df && ctx) build = { dockerfile: df, context: ctx, args, ...(target ? { target } : {}) }
      }
    }
  }
  if (image && buildData !== undefined) at(['image'], 'image and build exclude each other: the environment is one or the other')

  const env: Record<string, string> = {}
  for (const key of ['containerEnv', 'remoteEnv'] as const) {
    const table = data[key]
    if (table === undefined) continue
    if (!isRecord(table)) {
      at([key], 'expected an object of strings')
      continue
    }
    for (const [name, value] of Object.entries(table)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) at([key, name], 'a variable name is letters, digits and _')
      else if (value === null && key === 'remoteEnv') continue
      else {
        const v = typeof value === 'string' && value === '' ? '' : str([key, name], value)
        if (v !== undefined) {
          const resolved = substitute(v, root, unsupported, `${key}.${name}`)
          if (resolved !== undefined) env[name] = resolved
        }
      }
    }
  }

  const create: { key: CreateCommandKey; command: LifecycleCommand }[] = []
  for (const key of CREATE_COMMANDS) {
    const value = data[key]
    if (value === undefined) continue
    const command = lifecycle(value)
    if (command === undefined) at([key], 'expected a command: a string, an array of strings, or an object of those')
    else create.push({ key, command })
  }

  const forwardPorts: number[] = []
  const ports = data['forwardPorts']
  if (ports !== undefined) {
    if (!Array.isArray(ports)) at(['forwardPorts'], 'expected an array of ports')
    else for (const [n, p] of ports.entries()) {
      if (typeof p === 'number' && Number.isInteger(p) && p > 0 && p < 65536) forwardPorts.push(p)
      else if (typeof p === 'string' && /^\d+$/.test(p) && Number(p) > 0 && Number(p) < 65536) forwardPorts.push(Number(p))
      else if (typeof p === 'string') unsupported.push({ key: `forwardPorts[${n}]`, why: `${JSON.stringify(p)} names another container's port; services are reached by name on the session's network` })
      else at(['forwardPorts', n], 'expected a port number')
    }
  }

  const user = str(['remoteUser'], data['remoteUser']) ?? str(['containerUser'], data['containerUser'])
  if (problems.length) throw OmhError.of(SETTINGS_INVALID, { args: [file, problems.length], problems })
  return {
    file,
    ...(image ? { image } : {}),
    ...(build ? { build } : {}),
    env,
    create,
    forwardPorts: [...new Set(forwardPorts)],
    ...(user ? { user } : {}),
    unsupported,
  }
}

/**
 * The devcontainer variables omh can give a value to: the worktree's place
 * inside (`${containerWorkspaceFolder}` is /work) and the image's own
 * variables (`${containerEnv:NAME}` becomes `${NAME}`). `${localEnv:…}` would
 * carry this machine's variables into the sandbox: the value is dropped and
 * named. Resolves undefined for a dropped value.
 */
function substitute(value: string, root: string, unsupported: { key: string; why: string }[], key: string): string | undefined {
  let dropped = false
  const out = value.replace(/\$\{([^}]*)\}/g, (whole, inner: string) => {
    const [kind, name, fallback] = inner.split(':')
    if (inner === 'containerWorkspaceFolder') return '/work'
    if (inner === 'containerWorkspaceFolderBasename') return 'work'
    if (inner === 'localWorkspaceFolderBasename') return path.basename(root)
    if (kind === 'containerEnv' && name && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && fallback === undefined) return `\${${name}}`
    dropped = true
    unsupported.push({
      key,
      why: kind === 'localEnv' ? `${whole} would carry this machine's ${name ?? ''} into the sandbox; use [secrets] for what a session needs` : `${whole} has no value in a session`,
    })
    return whole
  })
  return dropped ? undefined : out
}

function lifecycle(value: unknown): LifecycleCommand | undefined {
  const argv = (v: unknown) => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')
  if (typeof value === 'string') return value.trim() ? value : undefined
  if (argv(value)) return value as string[]
  if (isRecord(value) && Object.keys(value).length && Object.values(value).every((v) => (typeof v === 'string' && v.trim()) || argv(v))) {
    return value as Record<string, string | string[]>
  }
  return undefined
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function toValue(node: Node): unknown {
  switch (node.type) {
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const prop of node.children ?? []) {
        const [k, v] = prop.children ?? []
        if (k && v) out[String(k.value)] = toValue(v)
      }
      return out
    }
    case 'array':
      return (node.children ?? []).map(toValue)
    default:
      return node.value
  }
}
