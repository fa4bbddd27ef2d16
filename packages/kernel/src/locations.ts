import os from 'node:os'
import path from 'node:path'
type Env = Readonly<Record<string, string | undefined>>
const home = (env: Env) => env['HOME'] ?? os.homedir()

/** The profile, the user's own and fit for a dotfiles repository: `$OMH_HOME`, else `~/.omh`. */
export const omhHomeOf = (env: Env): string => (env['OMH_HOME'] ? path.resolve(env['OMH_HOME']) : path.join(home(env), '.omh'))

/**
 * omh's state, never the user's to edit and never inside a profile or a checkout: `$OMH_STATE`, else
 * `$XDG_STATE_HOME/omh` (ignored when relative, as the XDG spec says), else `~/.local/state/omh`.
 */
export function omhStateOf(env: Env): string {
  if (env['OMH_STATE']) return path.resolve(env['OMH_STATE'])
  const xdg = env['XDG_STATE_HOME'] && path.isAbsolute(env['XDG_STATE_HOME']) ? env['XDG_STATE_HOME'] : path.join(home(env), '.local', 'state')
  return path.join(xdg, 'omh')
}

/** Every top-level entry of the state directory; what adds one names it here, so a move out of an old profile carries it. */
export const STATE_ENTRIES = ['creds', 'keys', 'logins', 'run', 'scratch', 'setups', 'shadow', 'ssh', 'trust.json', 'worktrees'] as const
export const statePath = (state: string, entry: (typeof STATE_ENTRIES)[number], ...rest: string[]): string => path.join(state, entry, ...rest)
export const MOVE_JOURNAL = '.move-journal.json' // in the state directory while a move out of an old profile is unfinished
