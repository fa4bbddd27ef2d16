import path from 'node:path'

/** The repository's root: where the bundled adapters are. */
export const ROOT = path.resolve(import.meta.dirname, '../../..')
