import type { PlacedHook } from '@omh/plugin-kit'

/**
 * Codex's approval of a hook (its config calls it trust; omh's trust is the
 * user's leave for a repository). Codex runs a hook from a user's hooks.json
 * only once that exact definition is approved: `[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash`
 * in config.toml must equal the hash Codex computes for the hook. Without the
 * record the hook is skipped without a word, so a hook omh writes without one
 * would be a promise nobody keeps.
 *
 * The hash, as Codex 0.171.0 computes it (checked against `hooks/list` of the
 * real binary by this package's tests): SHA-256 over compact JSON with every
 * object's keys sorted, of the hook's identity — the event's snake_case
 * label, the group's matcher when it has one, and the one handler normalized
 * (`timeout` defaults to 600 seconds, `async` to false; absent optional fields
 * are left out). The file's path is part of the key, not of the hash.
 */
export function approvalHash(event: string, matcher: string | undefined, command: string): string {
  const identity = {
    event_name: eventLabel(event),
    ...(matcher !== undefined ? { matcher } : {}),
    hooks: [{ type: 'command', command, timeout: 600, async: false }],
  }
  // Taken here, not imported: omh imports this plugin to check adapters that never render hooks,
  // and node:crypto costs about 9 ms to load.
  const { createHash } = process.getBuiltinModule('node:crypto')
  return `sha256:${createHash('sha256').update(JSON.stringify(sorted(identity))).digest('hex')}`
}

/** `PreToolUse` → `pre_tool_use`: how Codex names an event in a trust key. */
export const eventLabel = (event: string): string => event.replace(/(?<=[a-z0-9])([A-Z])/g, '_$1').toLowerCase()

/** The trust key Codex looks a hook up by. */
export const trustKey = (file: string, placed: PlacedHook): string => `${file}:${eventLabel(placed.event)}:${placed.group}:0`

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted)
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
    )
  }
  return value
}

/**
 * The config.toml part that trusts every hook omh wrote to `file`. Only the
 * `hooks` table: the kernel joins it with the other parts of the same file
 * (MCP servers) when another binding writes there too.
 */
export function approvalDocument(file: string, placed: readonly PlacedHook[]): string {
  const lines = [
    `# Written by omh: trust records for the hooks in ${file}.`,
    '# Codex runs a hook only when its definition still hashes to the recorded value.',
  ]
  for (const p of placed) {
    lines.push('', `[hooks.state.${JSON.stringify(trustKey(file, p))}]`)
    lines.push(`trusted_hash = ${JSON.stringify(approvalHash(p.event, p.entry.matcher, p.entry.hooks[0]!.command))}`)
  }
  return `${lines.join('\n')}\n`
}
