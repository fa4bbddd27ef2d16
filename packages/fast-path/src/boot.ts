/**
 * What `omh` runs first, once Node's version is known to be enough (bin/run.js): `--version` and
 * shell completion answered at once, a read-only command answered again while the files it read
 * are unchanged, a warm launch replayed straight to the engine's exec; anything else loads omh
 * and runs, a command or launch that can be kept being recorded as it does.
 */
import { readFileSync } from 'node:fs'
import module from 'node:module'
import { fileURLToPath } from 'node:url'
import { answerKey, cacheDir, canKeep, replay } from './answers.js'
import { answerable, grammarOf, type Grammar, type Manifest } from './grammar.js'
import { keptDir, keptLaunchArgs, launchKey, replayLaunch } from './launches.js'

/** Put in by the build from oclif's manifest; absent when this module runs as compiled. */
declare const OMH_GRAMMAR: Grammar | undefined

const readJson = (root: URL, file: string): unknown => JSON.parse(readFileSync(new URL(file, root), 'utf8'))

/** The grammar the build put in, or the manifest's when this module runs unbundled. */
const grammar = (root: URL): Grammar => (typeof OMH_GRAMMAR === 'undefined' ? grammarOf(readJson(root, 'oclif.manifest.json') as Manifest) : OMH_GRAMMAR)

interface Omh {
  execute(options: { dir: string }): Promise<void>
  completionValues(root: string, dynamic: unknown): Promise<string[]>
}

/** Loads omh itself (dist/omh.js runs the bundle with its own code cache); Node's compile cache keeps the bytecode of the modules around it, plugins among them. */
async function omh(root: URL): Promise<Omh> {
  module.enableCompileCache?.()
  return (await import(new URL('dist/omh.js', root).href)) as Omh
}

/** Runs `omh` with `argv`; `root` is the install, whose `bin/run.js` Node was started with. */
export async function boot(argv: readonly string[], root: URL): Promise<void> {
  if (argv[0] === '--version') {
    // oclif answers only after loading itself and its configuration; the answer needs neither (the same text as oclif's).
    const { name, version } = readJson(root, 'package.json') as { name: string; version: string }
    process.stdout.write(`${name}/${version} ${process.platform}-${process.arch} node-${process.version}\n`)
    return
  }
  if (argv[0] === '__complete') {
    // Shell completion runs at every Tab: commands and flags come from the manifest through a
    // module that imports nothing; only harness names, session ids and editor names load omh.
    const { complete, lines } = (await import(new URL('dist/lib/complete.js', root).href)) as {
      complete(manifest: unknown, words: readonly string[]): { dynamic?: unknown }
      lines(found: unknown, values: readonly string[], word: string): string[]
    }
    const words = argv.slice(1)
    const manifest = readJson(root, 'oclif.manifest.json') as object
    const topics = (readJson(root, 'package.json') as { oclif: { topics: unknown } }).oclif.topics
    const found = complete({ ...manifest, topics }, words)
    const values = found.dynamic ? await (await omh(root)).completionValues(fileURLToPath(root), found.dynamic) : []
    const out = lines(found, values, words.at(-1) ?? '')
    process.stdout.write(out.length ? `${out.join('\n')}\n` : '')
    return
  }
  const own = [fileURLToPath(new URL('bin/run.js', root)), fileURLToPath(import.meta.url)]
  const known = argv.length && argv[0] !== '--' ? grammar(root) : undefined
  const answerDir = known && answerable(argv, known) ? cacheDir() : undefined
  const launch = !answerDir && known ? keptLaunchArgs(argv, known) : undefined
  if (answerDir) {
    const key = answerKey(argv)
    if (replay(key, answerDir)) return
    // A cache that cannot be written keeps nothing, so this run is not slowed by recording.
    if (canKeep(answerDir)) await (await import('./record.js')).record(key, answerDir, { own })
  } else if (launch) {
    const key = launchKey(launch)
    const dir = keptDir()
    if (await replayLaunch(key, dir, root)) return
    await (await import('./record.js')).record(key, dir, { launch: true, own })
  }
  await (await omh(root)).execute({ dir: new URL('bin/run.js', root).href })
}
