/**
 * Secrets kept out of everything omh prints about MCP servers: plans, lists,
 * errors, in text and in `--json`. Only `omh render --content`, which exists to
 * show the staged documents, prints values as they are.
 */
import { serverValues, type McpServer, type ProfileItems, type RefusedValue } from '@omh/plugin-api'

/** What stands in for a value omh does not show. */
export const REDACTED = '•••'

/** A name that says its value is a secret: `--api-key`, `GITHUB_TOKEN`, `client_secret`, `sig`. */
const SECRET_NAME = /token|secret|passw(or)?d|pwd|api.?key|access.?key|private.?key|credential|cookie|auth|bearer|session|signature|(^|[-_.])(key|pass|sig)$/i

/** Well-known token shapes, and long single words that mix cases and digits as generated keys do. */
const TOKEN_SHAPES = [
  /^(sk|pk|rk)[-_]\w/,
  /^(ghp|gho|ghu|ghs|ghr|github_pat)_\w/,
  /^glpat-/,
  /^xox[abposr]-/,
  /^(AKIA|ASIA)[0-9A-Z]{12,}$/,
  /^eyJ[\w-]+\.[\w-]+\./,
  /^[0-9a-f]{32,}$/i,
]
const looksGenerated = (word: string) => word.length >= 20 && /^[\w.+=~-]+$/.test(word) && /[a-z]/.test(word) && /[A-Z]/.test(word) && /\d/.test(word)

/** Whether a lone word looks like a key or token. */
const looksSecret = (word: string): boolean => TOKEN_SHAPES.some((shape) => shape.test(word)) || looksGenerated(word)

const URL_PARTS = /^([a-z][a-z0-9+.-]*:\/\/)(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(?:\?([^#]*))?(#.*)?$/i

/**
 * A URL with its secrets hidden: the password (or a lone user name, often a
 * token), every query value (which parameter carries a key is each service's
 * choice; the names stay), and path segments shaped like tokens. Rebuilt
 * from the text, so what is shown is what the user wrote.
 */
export function redactUrl(url: string): string {
  const parts = URL_PARTS.exec(url)
  if (!parts) return looksSecret(url) ? REDACTED : url
  const [, scheme, userinfo, host, pathname = '', query, fragment = ''] = parts
  const user = userinfo === undefined ? '' : `${userinfo.includes(':') ? `${userinfo.slice(0, userinfo.indexOf(':'))}:` : ''}${REDACTED}@`
  const segments = pathname
    .split('/')
    .map((s) => (looksSecret(s) ? REDACTED : s))
    .join('/')
  const search =
    query === undefined
      ? ''
      : `?${query
          .split('&')
          .map((pair) => (pair.includes('=') ? `${pair.slice(0, pair.indexOf('='))}=${REDACTED}` : pair))
          .join('&')}`
  // A fragment of name=value pairs carries what an implicit grant returns (`#access_token=…`).
  const hash = fragment.includes('=')
    ? `#${fragment
        .slice(1)
        .split('&')
        .map((pair) => (pair.includes('=') ? `${pair.slice(0, pair.indexOf('='))}=${REDACTED}` : pair))
        .join('&')}`
    : looksSecret(fragment.slice(1))
      ? `#${REDACTED}`
      : fragment
  return `${scheme}${user}${host}${segments}${search}${hash}`
}

/** One argument with its secret hidden, judged on its own. */
function redactWord(arg: string): string {
  if (URL_PARTS.test(arg)) return redactUrl(arg)
  const assigned = /^(-{0,2}[A-Za-z_][\w.-]*)(=|:\s*)(.*)$/s.exec(arg)
  if (assigned) {
    const [, name = '', sign = '', value = ''] = assigned
    if (SECRET_NAME.test(name)) return `${name}${sign}${REDACTED}`
    return `${name}${sign}${redactWord(value)}`
  }
  const scheme = /^(Bearer|Basic|Token)\s+\S/i.exec(arg)
  if (scheme) return `${scheme[1]} ${REDACTED}`
  return looksSecret(arg) ? REDACTED : arg
}

/**
 * Arguments with their secrets hidden: the value after a flag whose name says
 * secret (`--token X`, `--api-key=X`), `NAME=X` whose name says so, `Bearer X`,
 * URLs as `redactUrl` says, and words shaped like tokens. What is left shows
 * what the server runs.
 */
export function redactArgs(args: readonly string[]): string[] {
  return args.map((arg, n) => {
    const flag = /^--?([A-Za-z][\w.-]*)$/.exec(n > 0 ? args[n - 1]! : '')
    if (flag && SECRET_NAME.test(flag[1]!) && !arg.startsWith('-')) return REDACTED
    // `-p` is a password to some clients (mysql, sshpass) and a port to others, which are numbers.
    if (flag?.[0] === '-p' && !arg.startsWith('-') && !/^\d{1,5}$/.test(arg)) return REDACTED
    return redactWord(arg)
  })
}

/**
 * What the user typed for `--env`/`--header` when it is not `NAME=VALUE`:
 * what looks like a name stays, so the mistake can be seen; the rest is hidden.
 */
export function redactPair(text: string): string {
  const name = /^([A-Za-z_][\w.-]*)(:\s*|\s+)\S/.exec(text)
  return name ? `${name[1]}${name[2]}${REDACTED}` : REDACTED
}

/** A server as omh shows it: every value above hidden; env and header names kept. */
export function redactServer<S extends McpServer>(server: S): S {
  const hide = (record: Readonly<Record<string, string>>) => Object.fromEntries(Object.keys(record).map((k) => [k, REDACTED]))
  if (server.transport === 'stdio') return { ...server, args: redactArgs(server.args), env: hide(server.env) }
  return { ...server, url: redactUrl(server.url), headers: hide(server.headers) }
}

/** A value a renderer refused, as omh shows it: a server's value as `redactServer` shows it; a field it does not have hidden whole. */
export function redactRefused(refused: RefusedValue, profile: ProfileItems): RefusedValue {
  if (refused.capability !== 'mcp') return refused
  const server = profile.mcp.find((s) => s.name === refused.name)
  const value = server ? new Map(serverValues(redactServer(server))).get(refused.field) : undefined
  return { ...refused, value: value ?? REDACTED }
}
