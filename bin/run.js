#!/usr/bin/env node
// Nothing is imported before this check but Node's own: omh's code needs Node 22, and on an older
// one it would fail to parse, as a stack trace.
if (Number(process.versions.node.split('.')[0]) < 22) {
  process.stderr.write(
    `Error: omh needs Node 22 or later; this is Node ${process.versions.node}.\nTry this: Install Node 22 or later (https://nodejs.org), or put it first on your PATH, then run omh again.\nCode: NODE_UNSUPPORTED\n`,
  )
  process.exit(1)
}
// Output piped into a reader that stops early (\`omh --help | head\`) ends omh quietly, as it ends
// any command-line tool, rather than leave a write failing under a pending command.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0)
  throw error
})
const { default: module } = await import('node:module')

const argv = process.argv.slice(2)
// Every path omh reads is found from where it runs: a directory removed under the shell is said
// plainly (in the form of omh's other refusals), never as Node's stack.
try {
  process.cwd()
} catch {
  process.stderr.write(
    'Error: The current directory no longer exists: it was removed while this shell was in it.\nTry this: cd to a directory that exists (your repository), then run omh again.\nCode: USAGE\n',
  )
  process.exit(2)
}
// oclif answers `--version` only after loading itself and its configuration;
// the answer needs neither, so give it straight away (same text as oclif's).
if (argv[0] === '--version') {
  const { readFileSync } = await import('node:fs')
  const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`${name}/${version} ${process.platform}-${process.arch} node-${process.version}\n`)
} else if (process.argv[2] === '__complete') {
  // Shell completion runs at every Tab: commands and flags come from the
  // manifest through a module that imports nothing; only harness names,
  // session ids and editor names load omh's code.
  const { readFileSync } = await import('node:fs')
  const { fileURLToPath } = await import('node:url')
  const { complete, lines } = await import('../dist/lib/complete.js')
  const words = process.argv.slice(3)
  const read = (file) => JSON.parse(readFileSync(new URL(file, import.meta.url), 'utf8'))
  const found = complete({ ...read('../oclif.manifest.json'), topics: read('../package.json').oclif.topics }, words)
  let values = []
  if (found.dynamic) {
    module.enableCompileCache?.()
    const { completionValues } = await import('../dist/omh.js')
    values = await completionValues(fileURLToPath(new URL('..', import.meta.url)), found.dynamic)
  }
  const out = lines(found, values, words.at(-1) ?? '')
  process.stdout.write(out.length ? `${out.join('\n')}\n` : '')
} else {
  // A command that only reads files is answered again while they are unchanged
  // (bin/answers.js), and a warm launch into a named session goes straight to
  // the engine's exec while nothing it read changed (bin/launches.js);
  // otherwise it runs, and such a command or launch is recorded.
  const answers = argv.length && argv[0] !== '--' ? await import('./answers.js') : undefined
  const key = answers?.cacheable(argv) ? answers.answerKey(argv) : undefined
  const dir = key && answers.cacheDir()
  const launches = !key && /^(?:--session|-s|--runtime|[a-z][a-z0-9._-]*$)/.test(argv[0] ?? '') ? await import('./launches.js') : undefined
  const launch = launches?.keptCandidate(argv) ? { key: launches.launchKey(argv), dir: launches.keptDir() } : undefined
  const replayed = key ? answers.replay(key, dir) : launch ? await launches.replayLaunch(launch.key, launch.dir) : false
  if (!replayed) {
    if (key) await (await import('./record.js')).record(key, dir)
    else if (launch) await (await import('./record.js')).record(launch.key, launch.dir, { launch: true })
    // Loading omh's code dominates a short command's wall time; Node's compile
    // cache keeps its bytecode between runs.
    module.enableCompileCache?.()
    const { execute } = await import('../dist/omh.js')
    await execute({ dir: import.meta.url })
  }
}
