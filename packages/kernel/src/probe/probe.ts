/**
 * Probes as an adapter declares them: a command that makes the harness say
 * what it loaded, and what each staged item must look like in its output.
 * `omh doctor` runs and judges them; the adapter schema checks them.
 */
import type { CapabilityClass } from '@omh/plugin-api'

/** Placeholders a capability's patterns may name: `{{name}}`, `{{path}}` (the binding's guest path), and per class more. */
export const PLACEHOLDERS: Readonly<Record<CapabilityClass, readonly string[]>> = {
  rules: ['name', 'path', 'origin'],
  skills: ['name', 'path'],
  mcp: ['name', 'path'],
  commands: ['name', 'path'],
  subagents: ['name', 'path'],
  hooks: ['name', 'path'],
}

/** One piece of evidence, as an adapter writes it. */
export interface Evidence {
  readonly line?: string
  readonly json?: string
  readonly match?: string | Readonly<Record<string, string>>
  readonly absent?: boolean
}

/** Evidence tied to a probe, as a capability writes it. */
export interface Expectation extends Evidence {
  readonly probe: string
  /** Shows the item connected, beyond loaded: a miss is a warning, never a failure. */
  readonly connected?: boolean
}

export interface ProbeStep {
  readonly line: string
  readonly until?: string
}

/** A command that makes the harness say what it loaded. */
export interface Probe {
  readonly run: string
  readonly send?: readonly ProbeStep[]
  readonly env?: Readonly<Record<string, string>>
  /** Seconds. */
  readonly timeout?: number
  readonly exit?: readonly number[]
  readonly expect?: readonly Evidence[]
}

