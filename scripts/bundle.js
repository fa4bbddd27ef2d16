// Bundles the CLI (oclif, the kernel and every command) into dist/omh.js.
// A short command's wall time is mostly module resolution; one file removes it.
// Plugins stay separate: they are found at run time, like third-party ones.
import { createRequire } from 'node:module'
import { build } from 'esbuild'

await build({
  entryPoints: ['dist/index.js'],
  outfile: 'dist/omh.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  keepNames: true,
  legalComments: 'none',
  logLevel: 'warning',
  // cosmiconfig loads TypeScript only for a .ts config file; omh reads none.
  external: ['typescript'],
  // cosmiconfig requires js-yaml and the profile imports it: one copy (the CommonJS one) serves both.
  alias: { 'js-yaml': createRequire(import.meta.url).resolve('js-yaml', { paths: ['packages/kernel'] }) },
  banner: {
    js: "import { createRequire as __omhCreateRequire } from 'node:module'; const require = __omhCreateRequire(import.meta.url);",
  },
})
