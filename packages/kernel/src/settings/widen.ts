import os from 'node:os'
import { memoryBytes } from '@omh/plugin-kit'
import type { KeyPath } from '@omh/plugin-kit'
import { DEFAULT_FILE_BYTES } from '../safe-read.js'
import type { Settings } from './schema.js'

/** What the user's own layers decided, as the settings merge gives it. */
export interface MineSettings {
  readonly egress: { readonly value: 'allowlist' | 'open' | 'none' } | undefined
  readonly registries: { readonly value: readonly string[] } | undefined
  readonly allow: readonly { readonly value: string }[]
  readonly sessionNetwork: { readonly value: string } | undefined
  readonly sessionLimits: {
    readonly memory: { readonly value: string | number } | undefined
    readonly pids: { readonly value: number } | undefined
    readonly cpus: { readonly value: number } | undefined
  }
  readonly fileBytes: { readonly value: number } | undefined
  readonly last: <T>(pick: (s: Settings) => T | undefined) => { readonly value: T } | undefined
}

/** The most bytes carry_in copies into a session, all files together, unless `[limits] carry_in_bytes` says. */
export const DEFAULT_CARRY_IN_BYTES = 64 * 1024 * 1024

const EGRESS_RANK = { none: 0, allowlist: 1, open: 2 } as const

/**
 * The keys of a repository's settings layer that would let a session do more
 * than the user's own layers (`mine`: omh's defaults and the personal layer)
 * let it: a wider way out, higher limits, more of the user's files, or an
 * image and a build step of the repository's choosing. Whoever can push to a
 * repository writes these, so they wait for `omh trust`; a layer that only
 * narrows the sandbox needs none.
 */
export function wideningKeys(layer: Settings, mine: MineSettings, totalMemory = os.totalmem()): KeyPath[] {
  const keys: KeyPath[] = []
  const network = layer.network
  const reachable = new Set([...(mine.registries?.value ?? []), ...mine.allow.map((d) => d.value)])
  if (network?.egress && EGRESS_RANK[network.egress] > EGRESS_RANK[mine.egress?.value ?? 'allowlist']) keys.push(['network', 'egress'])
  if (network?.allow?.some((host) => !reachable.has(host))) keys.push(['network', 'allow'])
  if (network?.registries?.some((host) => !reachable.has(host))) keys.push(['network', 'registries'])

  const session = layer.session
  if (session?.network && session.network !== 'none' && session.network !== mine.sessionNetwork?.value) keys.push(['session', 'network'])
  const limits = mine.sessionLimits
  if (session?.memory !== undefined && limits.memory && memoryBytes(session.memory, totalMemory) > memoryBytes(limits.memory.value, totalMemory)) {
    keys.push(['session', 'memory'])
  }
  if (session?.pids !== undefined && limits.pids && session.pids > limits.pids.value) keys.push(['session', 'pids'])
  if (session?.cpus !== undefined && limits.cpus && session.cpus > limits.cpus.value) keys.push(['session', 'cpus'])
  const carried = new Set(mine.last((s) => s.session?.carry_in)?.value ?? [])
  if (session?.carry_in?.some((entry) => !carried.has(entry))) keys.push(['session', 'carry_in'])

  const bytes = layer.limits
  if (bytes?.carry_in_bytes !== undefined && bytes.carry_in_bytes > (mine.last((s) => s.limits?.carry_in_bytes)?.value ?? DEFAULT_CARRY_IN_BYTES)) {
    keys.push(['limits', 'carry_in_bytes'])
  }
  if (bytes?.file_bytes !== undefined && bytes.file_bytes > (mine.fileBytes?.value ?? DEFAULT_FILE_BYTES)) keys.push(['limits', 'file_bytes'])

  for (const key of ['base', 'network', 'registry'] as const) {
    const value = layer.image?.[key]
    if (value !== undefined && value !== mine.last((s) => s.image?.[key])?.value) keys.push(['image', key])
  }
  // Build steps run at build, as root, with the build network: any the user's layers did not name.
  for (const key of ['packages', 'setup'] as const) {
    const mineList = new Set(mine.last((s) => s.image?.[key])?.value ?? [])
    if (layer.image?.[key]?.some((entry) => !mineList.has(entry))) keys.push(['image', key])
  }
  if (layer.image?.containerfile !== undefined && layer.image.containerfile !== mine.last((s) => s.image?.containerfile)?.value) keys.push(['image', 'containerfile'])
  // A service is an image of the repository's choosing, run beside the session.
  const services = mine.last((s) => s.services)?.value ?? {}
  for (const [name, service] of Object.entries(layer.services ?? {})) {
    if (JSON.stringify(service) !== JSON.stringify(services[name])) keys.push(['services', name])
  }
  // A secret of the user's, sent to a host of the repository's choosing.
  const secrets = mine.last((s) => s.secrets)?.value ?? {}
  for (const [name, secret] of Object.entries(layer.secrets ?? {})) {
    const yours = new Set(secrets[name]?.hosts ?? [])
    if (secret.hosts.some((host) => !yours.has(host))) keys.push(['secrets', name])
  }
  for (const [engine, table] of Object.entries(layer.runtimes ?? {})) {
    if (JSON.stringify(table) !== JSON.stringify(mine.last((s) => s.runtimes?.[engine])?.value)) keys.push(['runtimes', engine])
  }
  return keys
}
