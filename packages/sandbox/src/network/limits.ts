/**
 * What a session container may use of this machine: memory, processes and CPUs, from the settings,
 * so a fork bomb or a memory hog stays inside.
 */
import os from 'node:os'
import type { ResourceLimits } from '@omh/plugin-api'
import type { EffectiveSettings } from '@omh/kernel'
import { memoryBytes } from '@omh/plugin-kit'

/** The ceilings a session container runs under, from `[session] memory`, `pids` and `cpus`. */
export function sessionLimits(settings: EffectiveSettings, total = os.totalmem()): ResourceLimits {
  const { memory, pids, cpus } = settings.sessionLimits
  return {
    ...(memory ? { memory: memoryBytes(memory.value, total) } : {}),
    ...(pids ? { pids: pids.value } : {}),
    ...(cpus ? { cpus: cpus.value } : {}),
  }
}
