#!/usr/bin/env node
// Nothing is imported before this check but Node's own: omh's code needs Node 22, and on an older
// one it would fail to parse, as a stack trace.
if (Number(process.versions.node.split('.')[0]) < 22) {
  process.stderr.write(
    `Error: omh needs Node 22 or later; this is Node ${process.versions.node}.\nTry this: Install Node 22 or later (https://nodejs.org), or put it first on your PATH, then run omh again.\nCode: NODE_UNSUPPORTED\n`,
  )
  process.exit(1)
}
// Output piped into a reader that stops early (`omh --help | head`) ends omh quietly, as it ends
// any command-line tool, rather than leave a write failing under a pending command.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0)
  throw error
})
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
// The fast path (packages/fast-path), bundled into one file that imports nothing but Node's own.
const { boot } = await import('../dist/boot.js')
await boot(process.argv.slice(2), new URL('..', import.meta.url))
