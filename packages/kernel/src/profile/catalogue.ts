import { isUtf8 } from 'node:buffer'
import path from 'node:path'
import type { OmhError, Problem, CapabilityClass, ItemOf } from '@omh/plugin-api'
import { listDirSafe, type ReadBounds } from '../safe-read.js'
import { showBytes } from '../user-files.js'

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
  /** The most bytes read from one file (`[limits] file_bytes`); absent: DEFAULT_FILE_BYTES. */
  readonly fileBytes?: number | undefined
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
  /** Things the user should know, one sentence each, such as a file left out. */
  readonly notices?: readonly string[]
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

/** How the user's own files are read: a link may lead anywhere, the size is bounded. */
export const profileBounds = (at: CatalogueLocation): ReadBounds => ({ maxBytes: at.fileBytes })

/** How the project's files are read: besides the bound, no link may lead out of the project. */
export const projectBounds = (at: CatalogueLocation): ReadBounds => ({ within: at.projectDir, maxBytes: at.fileBytes })

/** A directory's entries, and a notice for each one left out. */
export interface DirectoryNames {
  /** Sorted by name; hidden names are left out. */
  readonly entries: readonly { readonly name: string; readonly isDirectory: boolean }[]
  readonly notices: readonly string[]
}

/**
 * The names in a directory; none when it does not exist. A name that is not
 * UTF-8 is left out with a notice: read as text it would name another file,
 * and a harness could be given neither.
 */
export async function namesIn(dir: string, bounds: ReadBounds = {}): Promise<DirectoryNames> {
  const entries: { name: string; isDirectory: boolean }[] = []
  const notices: string[] = []
  for (const e of listDirSafe(dir, bounds) ?? []) {
    if (e.name[0] === 0x2e) continue
    if (isUtf8(e.name)) entries.push({ name: e.name.toString('utf8'), isDirectory: e.isDirectory() })
    else notices.push(`skipped ${path.join(dir, showBytes(e.name))}: its name is not UTF-8, so no harness could be given it; rename it`)
  }
  return { entries: entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)), notices }
}
