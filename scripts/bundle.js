// Bundles the CLI (oclif, the kernel and every command) into dist/omh.js.
// A short command's wall time is mostly module resolution; one file removes it.
// Plugins stay separate: they are found at run time, like third-party ones.
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { build } from 'esbuild'

// oclif sorts its commands with localeCompare whenever it loads, and the first
// localeCompare in a process builds an ICU collator: about 14 ms of every
// command, a launch included, for an order omh's lowercase command ids do not
// need. The build fails when oclif no longer has this line, so the patch is
// looked at again rather than silently lost.
const OCLIF_SORT = '.sort((a, b) => a.id.localeCompare(b.id))'
const oclifPlainSort = {
  name: 'oclif-plain-sort',
  setup(build) {
    build.onLoad({ filter: /@oclif[\\/]core[\\/]lib[\\/]config[\\/]plugin\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8')
      if (!text.includes(OCLIF_SORT)) throw new Error(`${args.path} no longer sorts commands with localeCompare; review scripts/bundle.js`)
      return { contents: text.replace(OCLIF_SORT, '.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))'), loader: 'js' }
    })
  },
}

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  keepNames: true,
  legalComments: 'none',
  logLevel: 'warning',
  // cosmiconfig requires js-yaml and the profile imports it: one copy (the CommonJS one) serves both.
  alias: {
    'js-yaml': createRequire(import.meta.url).resolve('js-yaml', { paths: ['packages/kernel'] }),
    // Its main is a UMD module whose requires esbuild cannot follow; its ES module bundles whole.
    'jsonc-parser': createRequire(import.meta.url).resolve('jsonc-parser', { paths: ['packages/kernel'] }).replace(/umd([\\/])main\.js$/, 'esm$1main.js'),
  },
  banner: {
    js: "import { createRequire as __omhCreateRequire } from 'node:module'; const require = __omhCreateRequire(import.meta.url);",
  },
}

await build({
  ...common,
  entryPoints: ['dist/index.js'],
  outfile: 'dist/omh.js',
  // cosmiconfig loads TypeScript only for a .ts config file; omh reads none.
  external: ['typescript'],
  plugins: [oclifPlainSort],
})

// The runtimes' process library, bundled in place of the re-export tsc emitted:
// plugins stay separate packages, but loading execa as one file instead of a
// hundred-odd modules takes about 100 ms off every command that asks an engine.
await build({
  ...common,
  stdin: { contents: "export { execa } from 'execa'", resolveDir: 'packages/container-cli', loader: 'js' },
  outfile: 'packages/container-cli/dist/execa.js',
  allowOverwrite: true,
})

// The fast path: one file that imports nothing but Node's own until it decides to load omh, with
// the command grammar from oclif's manifest folded in, so no run reads the manifest to decide.
const { grammarOf } = await import('../packages/fast-path/dist/grammar.js')
const manifest = JSON.parse(await readFile('oclif.manifest.json', 'utf8'))
await build({
  ...common,
  banner: {},
  entryPoints: ['packages/fast-path/dist/boot.js'],
  outfile: 'dist/boot.js',
  // Loaded only when a launch is replayed or recorded, from omh's own packages.
  external: ['@omh/sandbox/claim', '@omh/sandbox/watch-files', '@omh/sandbox/idle-due'],
  define: { OMH_GRAMMAR: JSON.stringify(grammarOf(manifest)) },
})
