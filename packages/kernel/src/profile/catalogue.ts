import { readdirSync } from 'node:fs'
import { FILE_UNREADABLE, OmhError, type Problem } from '@omh/plugin-api'
import type { CapabilityClass, ItemOf } from '@omh/plugin-api'

/** Where a profile is read from. */
export interface CatalogueLocation {
  readonly omhHome: string
  /** Where the project's own files are read from: the session's worktree, or the checkout. */
  readonly projectDir?: string
  /**
   * The project's own rules files to compose, in preference order; the first
   * that is not blank is composed. `AGENTS.md` is always tried first.
   */
  readonly projectRules?: readonly string[]
}

/** One entry of the catalogue, named before it is read. */
export interface CatalogueEntry<T> {
  readonly name: string
  /** Host file or directory the entry lives in. */
  readonly source: string
  /** Reads and checks the entry; only selected entries are read. */
  load(): Promise<Loaded<T>>
}

/** An item, or everything wrong with the file it came from. */
export type Loaded<T> = { readonly ok: true; readonly item: T } | { readonly ok: false; readonly problems: readonly Problem[] }

/** What listing a class found: its entries in catalogue order, or why they cannot be listed. */
export interface Listing<T> {
  readonly entries: readonly CatalogueEntry<T>[]
  readonly problems: readonly Problem[]
}

/** What follows the selection whatever `[use]` says, such as the project's own rules. */
export interface Extra<T> {
  readonly items: readonly T[]
  /** Things the user should know, one sentence each. */
  readonly notices: readonly string[]
  /** Why a file that would follow cannot. */
  readonly problems?: readonly Problem[]
}

/**
 * How one capability class is kept in `$OMH_HOME`. The resolver lists every
 * source, applies `[use]`, then reads only the selected entries; adding a
 * class is adding a source to `CATALOGUE_SOURCES`.
 */
export interface CatalogueSource<C extends CapabilityClass = CapabilityClass> {
  readonly capability: C
  /** The directory or file the user keeps this class in, for messages. */
  where(at: CatalogueLocation): string
  list(at: CatalogueLocation): Promise<Listing<ItemOf<C>>>
  extra?(at: CatalogueLocation): Promise<Extra<ItemOf<C>>>
  /** The error to report when only this class's entries have problems; absent: PROFILE_INVALID. */
  invalid?(problems: readonly Problem[]): OmhError
}

// Catalogue files are many and small: reading them synchronously costs a tenth of the thread
// pool's round trips (measured: 500 SKILL.md files, 8 ms against 70 ms).

/** The names in a directory, sorted; none when it does not exist. Hidden names are skipped. */
export async function namesIn(dir: string): Promise<{ name: string; isDirectory: boolean }[]> {
  try {
    const entries = readdirSync(dir, { withFileTypes: true })
    return entries
      .filter((e) => !e.name.startsWith('.'))
      .map((e) => ({ name: e.name, isDirectory: e.isDirectory() }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw OmhError.of(FILE_UNREADABLE, { args: [dir, (error as Error).message], cause: error })
  }
}
