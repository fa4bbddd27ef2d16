import os from 'node:os'
import type { ResourceLimits } from '@omh/plugin-api'
import type { EffectiveSettings } from '@omh/kernel'

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }

/**
 * Bytes for a `[session] memory` value (already checked against the settings
 * schema): a share of `total` for `N%`, a binary size otherwise.
 */
export function memoryBytes(value: string | number, total: number): number {
  if (typeof value === 'number') return value
  const share = /^([\d.]+)%$/.exec(value)
  if (share) return Math.floor((total * Number(share[1])) / 100)
  const [, amount, unit] = /^([\d.]+)\s*([kmgt]?)/i.exec(value) ?? []
  return Math.floor(Number(amount) * UNITS[(unit ?? '').toLowerCase()]!)
}

/** The ceilings a session container runs under, from `[session] memory`, `pids` and `cpus`. */
export function sessionLimits(settings: EffectiveSettings, total = os.totalmem()): ResourceLimits {
  const { memory, pids, cpus } = settings.sessionLimits
  return {
    ...(memory ? { memory: memoryBytes(memory.value, total) } : {}),
    ...(pids ? { pids: pids.value } : {}),
    ...(cpus ? { cpus: cpus.value } : {}),
  }
}
