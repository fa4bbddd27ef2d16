import * as z from 'zod/mini'

// Values settings and adapters share for the sandbox around a session.

/** A memory size: bytes, with a binary unit, or a share of the host's memory below 100%. */
export const MEMORY = /^(?:[1-9]\d*(?:\.\d+)?\s*(?:[kmgt]i?b?|b)?|[1-9]\d?(?:\.\d+)?%)$/i
export const memorySize = z.union([
  z.int().check(z.positive()),
  z.string().check(z.regex(MEMORY, 'a size such as "4g", "512m", bytes, or a share of the host\'s memory below 100%, such as "50%"')),
])

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }

/**
 * Bytes for a memory value (already checked against `memorySize`): a share of
 * `total` for `N%`, a binary size otherwise.
 */
export function memoryBytes(value: string | number, total: number): number {
  if (typeof value === 'number') return value
  const share = /^([\d.]+)%$/.exec(value)
  if (share) return Math.floor((total * Number(share[1])) / 100)
  const [, amount, unit] = /^([\d.]+)\s*([kmgt]?)/i.exec(value) ?? []
  return Math.floor(Number(amount) * UNITS[(unit ?? '').toLowerCase()]!)
}

/** `host[:port]`; a leading `*.` matches every subdomain. */
export const HOST_PATTERN =
  /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?::(?:[1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d\d|655[0-2]\d|6553[0-5]))?$/i
export const hostPattern = z
  .string()
  .check(z.maxLength(260), z.regex(HOST_PATTERN, 'a host pattern is host[:port], such as "registry.npmjs.org" or "*.example.com:8443"'))

/**
 * A secret named in a profile value: `<secret NAME>`, resolved at launch from
 * the host environment, the secrets file or the keyring, and handed to the
 * container as the variable NAME; never written into a staged file.
 */
export const SECRET_REFERENCE = /<secret ([A-Za-z_][A-Za-z0-9_]*)>/g

/** The secrets a value names, in order. */
export const secretNames = (value: string): string[] => [...value.matchAll(SECRET_REFERENCE)].map((m) => m[1]!)

/**
 * Replaces each `<secret NAME>` with the harness's own reference to the
 * variable NAME (`${NAME}`, `{env:NAME}`), recording in `env` that NAME
 * carries that secret.
 */
export function referSecrets(value: string, refer: (name: string) => string, env: Record<string, string>): string {
  return value.replace(SECRET_REFERENCE, (whole, name: string) => {
    env[name] = whole
    return refer(name)
  })
}
