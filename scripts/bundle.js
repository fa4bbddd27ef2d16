// Bundles the CLI (oclif, the kernel and every command) into dist/omh.js.
// A short command's wall time is mostly module resolution; one file removes it.
// Plugins stay separate: they are found at run time, like third-party ones.
import { createRequire } from 'node:module'
import { build } from 'esbuild'

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
  alias: { 'js-yaml': createRequire(import.meta.url).resolve('js-yaml', { paths: ['packages/kernel'] }) },
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
