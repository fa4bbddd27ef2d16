#!/usr/bin/env node
import module from 'node:module'

// oclif answers `--version` only after loading itself and its configuration;
// the answer needs neither, so give it straight away (same text as oclif's).
if (process.argv[2] === '--version') {
  const { readFileSync } = await import('node:fs')
  const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`${name}/${version} ${process.platform}-${process.arch} node-${process.version}\n`)
} else {
  // Loading omh's code dominates a short command's wall time; Node's compile
  // cache keeps its bytecode between runs.
  module.enableCompileCache?.()
  const { execute } = await import('../dist/omh.js')
  await execute({ dir: import.meta.url })
}
