#!/usr/bin/env node
import module from 'node:module'

const argv = process.argv.slice(2)
// oclif answers `--version` only after loading itself and its configuration;
// the answer needs neither, so give it straight away (same text as oclif's).
if (argv[0] === '--version') {
  const { readFileSync } = await import('node:fs')
  const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`${name}/${version} ${process.platform}-${process.arch} node-${process.version}\n`)
} else {
  // A command that only reads files is answered again while they are unchanged
  // (bin/answers.js); otherwise it runs, and such a command is recorded.
  const answers = argv.length && argv[0] !== '--' ? await import('./answers.js') : undefined
  const key = answers?.cacheable(argv) ? answers.answerKey(argv) : undefined
  const dir = key && answers.cacheDir()
  if (!key || !answers.replay(key, dir)) {
    if (key) await (await import('./record.js')).record(key, dir)
    // Loading omh's code dominates a short command's wall time; Node's compile
    // cache keeps its bytecode between runs.
    module.enableCompileCache?.()
    const { execute } = await import('../dist/omh.js')
    await execute({ dir: import.meta.url })
  }
}
