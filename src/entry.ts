/**
 * dist/omh.js: omh's entry points, taken from the bundle (dist/omh.cjs, built by scripts/bundle.js
 * from index.ts), which runs as a script with the code cache of what it ran
 * (packages/fast-path/src/script.ts). Everything that loads omh imports this module.
 */
import { fileURLToPath } from 'node:url'
import { runScript } from '@omh/fast-path/script'
import type * as Omh from './index.js'

const omh = runScript(fileURLToPath(new URL('omh.cjs', import.meta.url)), {
  url: import.meta.url,
  // Made here, so a specifier the bundle imports resolves from where its module stands.
  importer: (specifier) => import(specifier),
}) as unknown as typeof Omh

export const { COMMANDS, commandNotFound, execute, completionValues, keptAllowlist } = omh
