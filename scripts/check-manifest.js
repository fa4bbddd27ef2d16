// Fails when oclif.manifest.json is not what `oclif manifest` generates from
// the current build: a stale manifest makes oclif describe commands that differ
// from the ones it runs.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const committed = readFileSync('oclif.manifest.json', 'utf8')
execFileSync('npx', ['oclif', 'manifest'], { stdio: ['ignore', 'ignore', 'inherit'] })
const generated = readFileSync('oclif.manifest.json', 'utf8')
if (generated !== committed) {
  execFileSync('git', ['--no-pager', 'diff', '--stat', '--', 'oclif.manifest.json'], { stdio: 'inherit' })
  console.error('oclif.manifest.json is stale: run `npm run build && npm run manifest` and commit the result.')
  process.exit(1)
}
console.log('oclif.manifest.json is current.')
