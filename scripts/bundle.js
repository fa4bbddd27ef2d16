// Bundles the CLI (oclif, the kernel and every command) into dist/omh.cjs, and dist/omh.js, which runs it.
// A short command's wall time is mostly module resolution; one file removes it.
// Plugins stay separate: they are found at run time, like third-party ones.
import { execFileSync } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { parse } from 'acorn'
import { build, transform } from 'esbuild'

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

// oclif finds a command in src/commands.ts's COMMANDS only when it runs it (the manifest answers
// everything else), yet an ES module's imports are all evaluated when it loads: every command, the
// kernel, the sandbox and their schemas, about half of a short command's start. Here each entry
// becomes a getter that requires its module, which esbuild then evaluates on first use, so a run
// evaluates the command it runs and what that imports, and `--help` none. The build fails when the
// file no longer has the shape read here, so the rewrite is looked at again rather than half done.
const lazyCommands = {
  name: 'lazy-commands',
  setup(build) {
    build.onLoad({ filter: /[\\/]dist[\\/]commands\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8')
      const modules = new Map([...text.matchAll(/^import (\w+) from '(\.\/[^']+)';$/gm)].map(([, name, from]) => [name, from]))
      const entries = [...text.matchAll(/^ {4}'?([\w:]+)'?: (\w+),$/gm)].map(([, id, name]) => [id, modules.get(name)])
      const hook = text.match(/^export \{ (\w+) \};$/m)?.[1]
      if (!hook || !modules.has(hook) || entries.length !== modules.size - 1 || entries.some(([, from]) => !from)) {
        throw new Error(`${args.path} no longer has the shape lazy-commands reads; review scripts/bundle.js`)
      }
      const getters = entries.map(([id, from]) => `  get ${JSON.stringify(id)}() { return require(${JSON.stringify(from)}).default },`)
      return {
        contents: [
          `export const COMMANDS = {\n${getters.join('\n')}\n}`,
          `export async function ${hook}(options) { return require(${JSON.stringify(modules.get(hook))}).default.call(this, options) }`,
        ].join('\n'),
        loader: 'js',
        resolveDir: path.dirname(args.path),
      }
    })
  },
}

// oclif asks wsl-utils at every start whether it runs on WSL, and that package loads
// node:child_process and PowerShell's helpers as it is imported, about 8 ms. Its answer is
// is-wsl's, imported here on its own; the rest of it (where PowerShell is, asked only on WSL or
// Windows without $SHELL) is imported when asked. The build fails when oclif asks it for more.
const WSL_UTILS_ASKED = new Set(['isWsl', 'powerShellPath'])
const wslUtilsOnDemand = {
  name: 'wsl-utils-on-demand',
  setup(build) {
    build.onResolve({ filter: /^wsl-utils$/ }, (args) => (args.pluginData?.whole ? undefined : { path: 'wsl-utils', namespace: 'omh-wsl-utils', pluginData: { resolveDir: args.resolveDir } }))
    build.onLoad({ filter: /^/, namespace: 'omh-wsl-utils' }, (args) => ({
      contents: "export { default as isWsl } from 'is-wsl'\nexport const powerShellPath = async () => (await import('wsl-utils')).powerShellPath()\n",
      resolveDir: args.pluginData.resolveDir,
      loader: 'js',
      pluginData: { whole: true },
    }))
    build.onLoad({ filter: /@oclif[\\/]core[\\/]lib[\\/].*\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8')
      const asked = [...text.matchAll(/import\('wsl-utils'\)\)\)?\.(\w+)/g)].map(([, name]) => name)
      if (asked.some((name) => !WSL_UTILS_ASKED.has(name))) throw new Error(`${args.path} asks wsl-utils for ${asked.join(', ')}; review scripts/bundle.js`)
      return undefined
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
    // oclif's help renders templates with ejs; omh's only name the binary (scripts/ejs-lite.js).
    ejs: path.resolve('scripts/ejs-lite.js'),
    // Its main is a UMD module whose requires esbuild cannot follow; its ES module bundles whole.
    'jsonc-parser': createRequire(import.meta.url).resolve('jsonc-parser', { paths: ['packages/kernel'] }).replace(/umd([\\/])main\.js$/, 'esm$1main.js'),
  },
  banner: {
    js: "import { createRequire as __omhCreateRequire } from 'node:module'; const require = __omhCreateRequire(import.meta.url);",
  },
}

// The packages plugins share with the bundle (src/lib/shared-modules.ts), at the versions bundled.
const sharedVersions = Object.fromEntries(
  await Promise.all(['zod', '@omh/plugin-api', '@omh/plugin-kit'].map(async (name) => [name, JSON.parse(await readFile(path.join('node_modules', name, 'package.json'), 'utf8')).version])),
)

// Every template in a help text is one scripts/ejs-lite.js renders, or the build says which is not.
const { VALUE } = await import('./ejs-lite.js')
const templates = (await readFile('oclif.manifest.json', 'utf8')).match(/<%.*?%>/g) ?? []
const unrendered = templates.filter((t) => !new RegExp(`^${VALUE.source}$`).test(t))
if (unrendered.length) throw new Error(`oclif.manifest.json: help templates scripts/ejs-lite.js does not render: ${unrendered.join(' ')}`)

// Builtins Node has not loaded by the time omh runs, each costing milliseconds to load.
const LAZY_BUILTINS = new Set(['child_process', 'crypto', 'dgram', 'dns', 'http', 'http2', 'https', 'inspector', 'net', 'os', 'perf_hooks', 'readline', 'readline/promises', 'stream', 'stream/promises', 'tls', 'tty', 'v8', 'worker_threads', 'zlib'])

// The bundle is a script, not a module: Node's compile cache keeps only what V8 compiled before a
// module ran, while a script's code cache can be made after it ran, with every function it called
// (packages/fast-path/src/script.ts runs it, src/entry.ts stands for it as dist/omh.js). A script
// has neither import() nor import.meta: both become names the runner passes in, so every import
// resolves from dist/omh.js as before. A top-level await anywhere fails this build.
await writeScript(await build({
  ...common,
  format: 'cjs',
  banner: {},
  // Minified below, once the names read here are renamed.
  minify: false,
  entryPoints: ['dist/index.js'],
  outfile: 'dist/omh.cjs',
  write: false,
  define: { OMH_SHARED_VERSIONS: JSON.stringify(sharedVersions), 'import.meta.url': '__omhMetaUrl' },
  // cosmiconfig loads TypeScript only for a .ts config file; omh reads none.
  external: ['typescript'],
  plugins: [oclifPlainSort, lazyCommands, wslUtilsOnDemand],
}))

/** Writes esbuild's unminified output as the script it was built to be, then minified. */
async function writeScript(built) {
  const [{ path: file, text }] = built.outputFiles
  const { code } = await transform(scriptForm(text, path.relative('.', file)), { format: 'cjs', minify: common.minify, keepNames: true, target: common.target, legalComments: 'none' })
  await writeFile(file, code)
}

/**
 * The bundle, rewritten as the script packages/fast-path/src/script.ts runs: each `import(` call
 * made a call of `__omhImport(`, and each Node builtin a module requires (or imports by name) taken
 * through `__omhLazy`, which loads it at its first use rather than when the module is evaluated
 * (node:crypto alone is about 9 ms, for commands that never hash; oclif's readline and perf_hooks
 * serve flags and timings few runs use). Found by parsing, so no string, property or method of the
 * same name is touched; a builtin is taken lazily only where every use of its name anywhere in the
 * bundle reads a property of it, as a named import does.
 */
function scriptForm(text, file) {
  const renames = []
  const builtins = []
  const others = new Set()
  const visit = (node, parent) => {
    if (Array.isArray(node)) return node.forEach((child) => visit(child, parent))
    if (!node || typeof node.type !== 'string') return
    if (node.type === 'ImportExpression') renames.push([node.start, 'import', '__omhImport'])
    if (node.type === 'MetaProperty' && node.meta.name === 'import') throw new Error(`${file}: import.meta.${node.property.name} at ${node.start} is not rewritten; review scripts/bundle.js`)
    const [target, value] = node.type === 'AssignmentExpression' ? [node.left, node.right] : node.type === 'VariableDeclarator' ? [node.id, node.init] : []
    if (target?.type === 'Identifier' && value?.type === 'CallExpression' && value.callee.type === 'Identifier' && value.callee.name === 'require' && value.arguments.length === 1 && typeof value.arguments[0].value === 'string' && LAZY_BUILTINS.has(value.arguments[0].value.replace(/^node:/, ''))) {
      builtins.push([target.name, value.callee.start])
    }
    if (node.type === 'Identifier') {
      // Declared, assigned, or a property read: anything else is a use of the module itself. (A name
      // declared with another value is held to the same, as names are compared, not bindings.)
      const named = (parent?.type === 'VariableDeclarator' && parent.id === node) || (parent?.type === 'AssignmentExpression' && parent.left === node) || (parent?.type === 'MemberExpression' && parent.object === node)
      if (!named) others.add(node.name)
    }
    for (const [key, value] of Object.entries(node)) if (key !== 'type' && value && typeof value === 'object') visit(value, node)
  }
  visit(parse(text, { ecmaVersion: 'latest', sourceType: 'script', allowHashBang: true }))
  for (const [name, at] of builtins) if (!others.has(name)) renames.push([at, 'require', '__omhLazy'])
  renames.sort((a, b) => a[0] - b[0])
  let out = ''
  let from = 0
  for (const [start, was, now] of renames) {
    if (text.slice(start, start + was.length) !== was) throw new Error(`${file}: no ${was} at ${start}; review scripts/bundle.js`)
    out += `${text.slice(from, start)}${now}`
    from = start + was.length
  }
  return out + text.slice(from)
}

await build({
  ...common,
  entryPoints: ['dist/entry.js'],
  outfile: 'dist/omh.js',
})

// Every command has its class once the bundle has run: said here, at the build, rather than by the
// first user to run one.
const unready = execFileSync(process.execPath, ['--input-type=module', '-e', `
  const { COMMANDS } = await import(${JSON.stringify(new URL('../dist/omh.js', import.meta.url).href)})
  process.stdout.write(Object.keys(COMMANDS).filter((id) => typeof COMMANDS[id]?.run !== 'function').join(' '))
`], { encoding: 'utf8' })
if (unready) throw new Error(`dist/omh.cjs: no command class for ${unready}`)

// The runtimes' process library, bundled in place of the re-export tsc emitted:
// plugins stay separate packages, but loading execa as one file instead of a
// hundred-odd modules takes about 100 ms off every command that asks an engine.
await build({
  ...common,
  stdin: { contents: "export { execa } from 'execa'", resolveDir: 'packages/container-cli', loader: 'js' },
  outfile: 'packages/container-cli/dist/execa.js',
  allowOverwrite: true,
})

// zod/mini whole, in one script run as the bundle is, for plugins whose zod is the one bundled
// (src/lib/shared-modules.ts).
await writeScript(await build({
  ...common,
  format: 'cjs',
  banner: {},
  minify: false,
  stdin: { contents: "export * from 'zod/mini'", resolveDir: '.', loader: 'js' },
  outfile: 'dist/zod-mini.cjs',
  write: false,
}))

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
