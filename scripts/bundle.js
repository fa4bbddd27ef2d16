// Bundles the CLI (oclif, the kernel and every command) into dist/omh.js.
// A short command's wall time is mostly module resolution; one file removes it.
// Plugins stay separate: they are found at run time, like third-party ones.
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
  banner: {
    js: "import { createRequire as __omhCreateRequire } from 'node:module'; const require = __omhCreateRequire(import.meta.url);",
  },
})
