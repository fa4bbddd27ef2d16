import path from 'node:path'
import { GUEST_HOME, GUEST_WORK } from '@omh/plugin-api'

/** `$HOME` and `$HOME/…` are the guest home; any other path is taken as written. */
export const expandGuest = (p: string): string => (p === '$HOME' || p.startsWith('$HOME/') ? GUEST_HOME + p.slice(5) : p)

const ROOTS = [
  { root: GUEST_HOME, name: 'the guest home' },
  { root: GUEST_WORK, name: 'the work dir' },
]

/**
 * Why a guest path an adapter writes cannot name a place omh stages a file
 * to or mounts a login at; undefined when it can. Every such place is inside
 * the guest home or the work dir: the guest is built around those two, and a
 * mount over either root, or outside both, would hide or replace the
 * container's own files. `directory` allows one trailing `/`, which marks a
 * directory (`creds`).
 */
export function guestPathProblem(written: string, options: { directory?: boolean } = {}): string | undefined {
  if (!written.startsWith('/') && written !== '$HOME' && !written.startsWith('$HOME/')) return 'a guest path is absolute or starts with $HOME/'
  const shown = JSON.stringify(written)
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(written)) return `${shown} holds a control character, which a bind mount cannot name`
  if (written.includes(',')) return `${shown} holds a comma, which a bind mount cannot name`
  const expanded = expandGuest(written)
  const trailing = expanded.length > 1 && expanded.endsWith('/')
  if (trailing && !options.directory && !ROOTS.some((r) => `${r.root}/` === expanded)) return `${shown} ends in \`/\`, but names a file`
  const body = trailing ? expanded.slice(0, -1) : expanded
  if (body.split('/').includes('..')) return `${shown} has a \`..\` step; write the path it means`
  const normal = path.posix.normalize(body).replace(/(.)\/$/, '$1')
  const root = ROOTS.find((r) => normal === r.root)
  if (root) return `${shown} is ${root.name} itself; name a file or folder inside it`
  if (!ROOTS.some((r) => normal.startsWith(`${r.root}/`))) {
    return `${shown} is outside the guest home ($HOME, ${GUEST_HOME}) and the work dir (${GUEST_WORK}), where every staged file and login belongs`
  }
  if (normal !== body) {
    const again = written.startsWith('$HOME') ? `$HOME${normal.slice(GUEST_HOME.length)}` : normal
    return `${shown} is not normalised; write "${again}${trailing ? '/' : ''}"`
  }
  return undefined
}
