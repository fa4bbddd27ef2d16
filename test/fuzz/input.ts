/** What the fuzz suite feeds omh: a tree of user files, and for `command` one command line. */

export const FAMILIES = ['adapter', 'settings', 'mcp', 'hooks', 'catalogue', 'command'] as const
export type Family = (typeof FAMILIES)[number]

/** Bytes of a file; a string is written as UTF-8. */
export type Bytes = string | Uint8Array

/** Something other than a file where omh expects one. */
export type Oddity = { readonly kind: 'dir' | 'fifo' } | { readonly kind: 'link'; readonly target: string }

export interface FuzzFile {
  /** Under the scratch root: `home/…` is $OMH_HOME, `repo/…` the repository. Bytes for a name that is not UTF-8. */
  readonly path: string | Uint8Array
  readonly content: Bytes | Oddity
}

export interface FuzzInput {
  readonly family: Family
  readonly files: readonly FuzzFile[]
  /** `command`: one omh command line. */
  readonly argv?: readonly string[]
  /** `[use]` per capability, for families that resolve a profile without settings. */
  readonly use?: Readonly<Record<string, readonly string[]>>
}

/**
 * How one input ended. `refused`: an OmhError with exit 2 naming the file;
 * `accepted`: a result that holds what it must. The rest are defects:
 * `internal` (not an OmhError, or INTERNAL), `unclean` (an OmhError that
 * breaks the contract, or a wrong acceptance), `hang` (no answer in time).
 */
export interface Verdict {
  readonly kind: 'accepted' | 'refused' | 'internal' | 'unclean' | 'hang'
  readonly code?: string
  readonly detail?: string
  /** How long the input took, answer included. */
  readonly ms?: number
}

/** Messages between the suite and the fuzz process. */
export type ToDriver = { readonly id: number; readonly input: FuzzInput }
export type FromDriver = { readonly ready: true } | { readonly id: number; readonly verdict: Verdict }
