/**
 * Secrets bound to hosts. A secret the session is given (`[secrets.NAME]`, or a `<secret NAME>` in
 * an MCP server's environment or headers) that names the hosts it may go to never enters the
 * session: the session holds a placeholder, its clients reach the network through the credential
 * proxy's front, and the front puts the value in place of the placeholder only on requests to
 * those hosts (credential-proxy.ts). A remote MCP server's header secret is bound to that server's
 * host without being named.
 */
import { createHash } from 'node:crypto'
import { OmhError, SECRET_MISSING, type McpServer } from '@omh/plugin-api'
import { SECRET_REFERENCE, secretNames } from '@omh/plugin-kit'
import type { EffectiveSettings } from '@omh/kernel'
import type { FrontRoute, SecretBinding } from './credential-proxy.js'
import type { Authority } from './authority.js'
import type { PlannedLogin } from './logins.js'
import { CREDS_HOST, type Proxied } from './credentials.js'
import { PROXY_HOST, PROXY_PORT } from './egress.js'

/** The front's port on the credential proxy: the session's HTTP proxy when a secret is bound. */
export const FRONT_PORT = 4490
/** Where the session finds the authority the front answers bound hosts with. */
export const GUEST_AUTHORITY = '/etc/omh/authority.pem'
/** The bundle the session's container makes at its start: the image's authorities and the session's. */
export const GUEST_BUNDLE = '/tmp/omh-ca-bundle.pem'

/** What each client reads for the authorities it trusts: OpenSSL, curl, git, Python, Node, Cargo, Deno. */
const TRUST_ENV = {
  SSL_CERT_FILE: GUEST_BUNDLE,
  CURL_CA_BUNDLE: GUEST_BUNDLE,
  GIT_SSL_CAINFO: GUEST_BUNDLE,
  REQUESTS_CA_BUNDLE: GUEST_BUNDLE,
  PIP_CERT: GUEST_BUNDLE,
  CARGO_HTTP_CAINFO: GUEST_BUNDLE,
  DENO_CERT: GUEST_BUNDLE,
  NODE_EXTRA_CA_CERTS: GUEST_AUTHORITY,
}

/**
 * The session container's first command when a secret is bound: it writes the bundle (the image's
 * own authorities, wherever its distribution keeps them, and the session's), then keeps the
 * container as the plain keeper does.
 */
export const bundleKeeper = (keeper: readonly string[]): string[] => [
  'sh',
  '-c',
  `for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do if [ -f "$f" ]; then cat "$f"; break; fi; done > ${GUEST_BUNDLE}.new; cat ${GUEST_AUTHORITY} >> ${GUEST_BUNDLE}.new; mv -f ${GUEST_BUNDLE}.new ${GUEST_BUNDLE}; exec "$@"`,
  'omh-keeper',
  ...keeper,
]

/** Each bound secret's hosts, by name: `[secrets.NAME] hosts` of every layer, and the hosts of the remote MCP servers whose headers name it. */
export function secretHosts(settings: Pick<EffectiveSettings, 'layers'>, mcp: readonly McpServer[]): Map<string, { hosts: string[]; declared: boolean }> {
  const out = new Map<string, { hosts: string[]; declared: boolean }>()
  const add = (name: string, hosts: readonly string[], declared: boolean) => {
    const seen = out.get(name)
    out.set(name, { hosts: [...new Set([...(seen?.hosts ?? []), ...hosts.map((h) => h.toLowerCase())])], declared: declared || (seen?.declared ?? false) })
  }
  for (const layer of settings.layers) for (const [name, secret] of Object.entries(layer.settings.secrets ?? {})) add(name, secret.hosts, true)
  for (const server of mcp) {
    if (server.transport === 'stdio') continue
    let host: string
    try {
      host = new URL(server.url).hostname
    } catch {
      continue
    }
    for (const value of Object.values(server.headers)) for (const name of secretNames(value)) add(name, [host], false)
  }
  return out
}

/**
 * Where no proxy is beside the session (egress open or none), each `[secrets.NAME]` as a reference
 * the launch resolves to the value, as an unbound `<secret NAME>` is.
 */
export function declaredSecrets(settings: Pick<EffectiveSettings, 'layers'>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const layer of settings.layers) for (const name of Object.keys(layer.settings.secrets ?? {})) out[name] = `<secret ${name}>`
  return out
}

export interface BoundSecrets {
  /** For the session container: each declared secret's placeholder by name, the front as its proxy, and the authorities to trust. */
  readonly env: Readonly<Record<string, string>>
  /** What each bound secret is replaced by in the session's other variables. */
  readonly placeholders: ReadonlyMap<string, string>
  /** For the credential proxy. */
  readonly front: FrontRoute
  /** For the credential proxy's environment alone: the values, by the variable each binding names. */
  readonly values: Readonly<Record<string, string>>
}

/** The variable holding a bound secret's value in the credential proxy. */
const valueVariable = (name: string) => `OMH_SECRET_${name}`

/**
 * The session's bound secrets, their values found on the host; undefined when none is bound. A
 * declared secret with no value stops the launch, as a missing `<secret NAME>` does.
 */
export function boundSecrets(
  hosts: ReadonlyMap<string, { hosts: readonly string[]; declared: boolean }>,
  find: (name: string) => string | undefined,
  token: string,
  where: (name: string) => string,
  secretsFile: string,
): BoundSecrets | undefined {
  if (!hosts.size) return undefined
  const bindings: SecretBinding[] = []
  const values: Record<string, string> = {}
  const placeholders = new Map<string, string>()
  const env: Record<string, string> = {}
  for (const [name, bound] of [...hosts].sort(([a], [b]) => a.localeCompare(b))) {
    const value = find(name)
    if (value === undefined) throw OmhError.of(SECRET_MISSING, { args: [name, where(name)], hintArgs: [name, secretsFile] })
    // Made from the session's own placeholder: the same at every launch, worth nothing anywhere else.
    const placeholder = `omh-secret-${createHash('sha256').update(`${token}\0${name}`).digest('hex').slice(0, 32)}`
    placeholders.set(name, placeholder)
    if (bound.declared) env[name] = placeholder
    values[valueVariable(name)] = value
    bindings.push({ name, placeholder, variable: valueVariable(name), hosts: [...bound.hosts] })
  }
  return { env: { ...env, ...frontEnv() }, placeholders, values, front: { ...emptyFront(), bindings } }
}

/** The session's variables that send its clients through the front, trusting the session's authority. */
export function frontEnv(): Record<string, string> {
  const url = `http://${CREDS_HOST}:${FRONT_PORT}`
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, ...TRUST_ENV }
}

/** The front with nothing bound yet: a login's tokens are added when its vault is. */
export const emptyFront = (): FrontRoute => ({ port: FRONT_PORT, egress: `${PROXY_HOST}:${PROXY_PORT}`, bindings: [] })

/** The session's variables with each bound `<secret NAME>` replaced by its placeholder, so only unbound ones are resolved to values. */
export function withPlaceholders(vars: Readonly<Record<string, string>>, placeholders: ReadonlyMap<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [variable, value] of Object.entries(vars)) out[variable] = value.replace(SECRET_REFERENCE, (whole, name: string) => placeholders.get(name) ?? whole)
  return out
}

/**
 * What the credential proxy serves: the adapter's kept keys, the bound secrets, or both; undefined
 * when there is neither. The bound secrets' values join the keys in the proxy's environment alone.
 */
export function withBound(
  keys: Proxied | undefined,
  bound: BoundSecrets | undefined,
  authority: Authority | undefined,
  token: string | undefined,
  logins: readonly PlannedLogin[] = [],
): Proxied | undefined {
  if ((!bound && !logins.length) || !authority || !token) return keys
  return {
    env: { ...keys?.env, ...(bound?.env ?? frontEnv()) },
    args: keys?.args ?? [],
    routes: keys?.routes ?? [],
    keys: { ...keys?.keys, ...bound?.values },
    token,
    front: bound?.front ?? emptyFront(),
    authority,
    ...(logins.length ? { logins } : {}),
  }
}
