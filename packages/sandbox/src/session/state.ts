/**
 * What a harness in a session is doing, told by the harness itself. Every launch renders hooks of
 * omh's own beside the user's, one per moment its adapter binds: each replaces
 * `<harness>.state` beside the harness's socket with one line, `{"state":"working"|"waiting","at":<unix s>}`.
 * The agent runs as the user who writes that file, so it can write anything there: the host reads
 * it as data (bounded, a regular file, strictly validated) and shows only words of its own. Where
 * the adapter binds no moment, the state comes from the process: running, or finished with the
 * status its supervisor kept.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { GUEST_SOCKETS } from '@omh/image'
import type { Hook, Moment } from '@omh/plugin-api'
import type { Adapter } from '@omh/kernel'

/** What the harness's own hooks may say: at work, or waiting for the user. */
export const HOOK_STATES = ['working', 'waiting'] as const
export type HookState = (typeof HOOK_STATES)[number]

/** What each moment means for the state. */
const STATE_AT: Readonly<Record<Moment, HookState>> = {
  'session-start': 'working',
  'before-tool': 'working',
  'after-tool': 'working',
  'turn-end': 'waiting',
  waiting: 'waiting',
}

/** The names of omh's state hooks: a leading `.` no hook of the user's can have (the profile skips hidden files). */
export const STATE_HOOK_PREFIX = '.omh-state-'

/**
 * The hooks that keep `<harness>.state`, for every moment the adapter's hooks binding names. The
 * file is replaced whole (a temporary file, then `mv`), so a reader never sees half a line; the
 * command always exits 0, so a failure to write never shows as the hook's failure.
 */
export function stateHooks(adapter: Adapter): Hook[] {
  const events = adapter.bindings.find((b) => b.capability === 'hooks')?.events ?? {}
  return (Object.keys(STATE_AT) as Moment[])
    .filter((moment) => events[moment])
    .map((moment) => ({
      name: `${STATE_HOOK_PREFIX}${moment}`,
      on: moment,
      action: { kind: 'run', command: stateCommand(adapter.name, STATE_AT[moment]) },
      fields: [],
      source: adapter.file,
    }))
}

/** The shell that writes one state line; the harness's name is an adapter's (lowercase letters, digits, `-`). */
export function stateCommand(harness: string, state: HookState): string {
  const file = `${GUEST_SOCKETS}/${harness}.state`
  return `d=${GUEST_SOCKETS}; t="$d/.${harness}.state.$$"; mkdir -p "$d" && printf '{"state":"${state}","at":%s}\\n' "$(date +%s)" > "$t" && mv -f "$t" "${file}"; exit 0`
}

/** A state file larger than this is not one a hook wrote. */
export const STATE_FILE_BYTES = 4096
/** `at` outside these seconds (2001 to 2100) is not a clock's. */
const AT_RANGE = [1_000_000_000, 4_102_444_800] as const

/** A state file's text as the harness's hooks write it, or undefined for anything else. */
export function parseStateText(text: string): { state: HookState; at: number } | undefined {
  if (text.length > STATE_FILE_BYTES) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const record = value as Record<string, unknown>
  if (Object.keys(record).sort().join(',') !== 'at,state') return undefined
  const { state, at } = record
  if (typeof state !== 'string' || !(HOOK_STATES as readonly string[]).includes(state)) return undefined
  if (typeof at !== 'number' || !Number.isInteger(at) || at < AT_RANGE[0] || at > AT_RANGE[1]) return undefined
  return { state: state as HookState, at }
}

/** Where a harness's state comes from: its own hooks, or only its process. */
export type StateSource = 'hooks' | 'process'

/** What `omh sessions ls` and `show` say a harness does. */
export interface HarnessState {
  readonly harness: string
  /** `working`/`waiting` from its hooks; `running`/`finished` from its process; `unknown` when what was found is not data omh reads. */
  readonly state: HookState | 'running' | 'finished' | 'unknown'
  /** The exit status, once finished. */
  readonly exit?: number
  readonly from: StateSource
  /** Unix seconds of its last sign of activity, when one is known. */
  readonly lastActive?: number
}

/** One harness's files beside its socket, as the container's listing reported them (background.ts). */
export interface HarnessFiles {
  readonly harness: string
  readonly running: boolean
  /** The exit status its supervisor kept, and when (mtime, unix seconds). */
  readonly status?: number
  readonly statusAt?: number
  /** The state file: absent, a text with its mtime, or found but not a readable regular file. */
  readonly state?: { readonly text: string; readonly at?: number } | 'unreadable'
  /** When its output was last written (mtime of its log, unix seconds). */
  readonly logAt?: number
}

/**
 * A harness's state from its files. A kept exit status makes it finished, unless the state file
 * was written after that exit (a later launch through pipes). A state file that is not what a
 * hook writes is unknown, never a guess.
 */
export function harnessState(files: HarnessFiles, from: StateSource): HarnessState {
  const { harness } = files
  const exited = !files.running && files.status !== undefined
  const said = files.state === undefined ? undefined : files.state === 'unreadable' ? null : (parseStateText(files.state.text) ?? null)
  const writtenAt = typeof files.state === 'object' ? files.state.at : undefined
  const finished = { harness, state: 'finished', exit: files.status!, from: 'process', ...(files.statusAt !== undefined ? { lastActive: files.statusAt } : {}) } as const
  if (exited && (said === undefined || (files.statusAt !== undefined && (said ? said.at : (writtenAt ?? 0)) <= files.statusAt))) return finished
  if (said === null) return { harness, state: 'unknown', from: 'hooks' }
  if (said) return { harness, state: said.state, from: 'hooks', lastActive: said.at }
  if (exited) return finished
  // Nothing said yet (or never, without hooks): the process is all there is to go by.
  const lastActive = files.logAt !== undefined ? { lastActive: files.logAt } : {}
  return files.running ? { harness, state: 'running', from: 'process', ...lastActive } : { harness, state: 'unknown', from, ...lastActive }
}

/** What a launch records of a harness it started, in the session's state directory. */
export interface LaunchRecord {
  readonly harness: string
  readonly from: StateSource
  /** Unix seconds. */
  readonly started: number
  /** The harness's arguments, when it was started in the background with some: the prompt it was given. */
  readonly prompt?: readonly string[]
}

const recordFile = (run: string, harness: string) => path.join(run, 'harnesses', `${harness}.json`)

/** Keeps what a launch started, replacing the record of the harness's previous launch. */
export async function recordLaunch(run: string, record: LaunchRecord): Promise<void> {
  const file = recordFile(run, record.harness)
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
  await writeFile(`${file}.tmp`, `${JSON.stringify(record)}\n`, { mode: 0o600 })
  await rename(`${file}.tmp`, file)
}

/** The record of a harness's last launch in a session, if one was kept and reads as one. */
export async function readLaunch(run: string, harness: string): Promise<LaunchRecord | undefined> {
  let value: unknown
  try {
    value = JSON.parse(await readFile(recordFile(run, harness), 'utf8'))
  } catch {
    return undefined
  }
  const r = value as Partial<LaunchRecord> | null
  if (!r || r.harness !== harness || (r.from !== 'hooks' && r.from !== 'process') || typeof r.started !== 'number') return undefined
  const prompt = Array.isArray(r.prompt) && r.prompt.every((w) => typeof w === 'string') ? r.prompt : undefined
  return { harness, from: r.from, started: r.started, ...(prompt ? { prompt } : {}) }
}

/** `12s ago`, `4m ago`, `3h ago`, `2d ago`. */
export function ago(at: number, now: number): string {
  const s = Math.max(0, Math.floor(now - at))
  if (s < 60) return `${s}s ago`
  if (s < 3600) return `${Math.floor(s / 60)}m ago`
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`
  return `${Math.floor(s / 86_400)}d ago`
}

/** The words of a state as a table shows them: `finished (exit 0)`, `running (process)`. */
export function stateWords(s: Pick<HarnessState, 'state' | 'exit' | 'from'>): string {
  if (s.state === 'finished') return s.exit === undefined ? 'finished' : `finished (exit ${s.exit})`
  if (s.state === 'running' && s.from === 'process') return 'running (process)'
  return s.state
}
