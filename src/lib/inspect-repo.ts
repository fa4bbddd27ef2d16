import { lstatSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { readTextSafe } from '@omh/kernel'

/** One thing `omh init` found, and the file that told it. */
export interface Finding {
  readonly name: string
  /** The file or key it was read from, relative to the repository. */
  readonly from: string
}

/** A harness's file already in the repository, and what omh makes of it. */
export interface HarnessFile {
  readonly path: string
  /** `file`, `directory`, or `link` (never followed, never read). */
  readonly kind: 'file' | 'directory' | 'link'
  /** The harness it belongs to. */
  readonly harness: string
  /** What omh does with it, in words. */
  readonly use: string
  /** For files omh can import MCP servers from: the harness whose reader reads it. */
  readonly importsWith?: string
}

export interface RepositoryFacts {
  readonly packageManager: Finding | null
  readonly lockfile: string | null
  readonly languages: readonly Finding[]
  readonly test: Finding | null
  readonly harnessFiles: readonly HarnessFile[]
  /** Debian packages the session's environment needs for what was found, each with why. */
  readonly packages: readonly { readonly name: string; readonly why: string }[]
  /** Commands that make a new session ready (`npm ci` for an npm lockfile). */
  readonly setup: readonly Finding[]
  /** Untracked files at the top that look like local configuration (`.env`), for `carry_in`. */
  readonly localConfig: readonly string[]
}

/** Lockfiles, most specific first: the first one present names the package manager. */
const LOCKFILES: readonly [string, string][] = [
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'yarn'],
  ['bun.lock', 'bun'],
  ['bun.lockb', 'bun'],
  ['package-lock.json', 'npm'],
  ['npm-shrinkwrap.json', 'npm'],
  ['Cargo.lock', 'cargo'],
  ['uv.lock', 'uv'],
  ['poetry.lock', 'poetry'],
  ['Pipfile.lock', 'pipenv'],
  ['go.sum', 'go'],
  ['Gemfile.lock', 'bundler'],
  ['composer.lock', 'composer'],
  ['mix.lock', 'mix'],
]

const LANGUAGES: readonly [string, string][] = [
  ['tsconfig.json', 'TypeScript'],
  ['package.json', 'JavaScript'],
  ['Cargo.toml', 'Rust'],
  ['go.mod', 'Go'],
  ['pyproject.toml', 'Python'],
  ['setup.py', 'Python'],
  ['requirements.txt', 'Python'],
  ['Gemfile', 'Ruby'],
  ['pom.xml', 'Java'],
  ['build.gradle', 'Java'],
  ['build.gradle.kts', 'Kotlin'],
  ['composer.json', 'PHP'],
  ['mix.exs', 'Elixir'],
  ['Package.swift', 'Swift'],
  ['deno.json', 'TypeScript'],
]

const HARNESS_FILES: readonly { path: string; harness: string; use: string; importsWith?: string }[] = [
  { path: 'AGENTS.md', harness: 'every harness', use: "the project's rules: composed into every session as they are" },
  { path: 'CLAUDE.md', harness: 'claude', use: "the project's rules for Claude Code: composed into its sessions as they are" },
  { path: '.mcp.json', harness: 'claude', use: 'MCP servers Claude Code reads', importsWith: 'claude' },
  { path: '.codex/config.toml', harness: 'codex', use: 'Codex settings and MCP servers', importsWith: 'codex' },
  { path: '.codex', harness: 'codex', use: 'Codex project files; omh reads its config.toml only' },
  { path: 'opencode.json', harness: 'opencode', use: 'OpenCode settings and MCP servers', importsWith: 'opencode' },
  { path: '.cursor/rules', harness: 'cursor', use: 'Cursor rules: no harness omh runs reads them; copy what you want into AGENTS.md' },
]

/**
 * What a repository says about itself, read as omh reads anything a
 * repository holds: its own files only (a link is reported, never
 * followed), regular files, each up to `maxBytes`, and only the few names
 * asked for, never a walk of the tree.
 */
export function inspectRepository(root: string, maxBytes: number | undefined): RepositoryFacts {
  const kind = (rel: string): 'file' | 'directory' | 'link' | undefined => {
    // Each parent too: a directory of the repository that is a link leads out of it.
    const parts = rel.split('/')
    for (let n = 1; n <= parts.length; n++) {
      let stat
      try {
        stat = lstatSync(path.join(root, ...parts.slice(0, n)))
      } catch {
        return undefined
      }
      if (stat.isSymbolicLink()) return 'link'
      if (n === parts.length) return stat.isFile() ? 'file' : stat.isDirectory() ? 'directory' : undefined
      if (!stat.isDirectory()) return undefined
    }
    return undefined
  }
  const isFile = (rel: string) => kind(rel) === 'file'
  const read = (rel: string) => (isFile(rel) ? readTextSafe(path.join(root, rel), { within: root, maxBytes }) : undefined)

  const lock = LOCKFILES.find(([file]) => isFile(file))
  let packageManager: Finding | null = lock ? { name: lock[1], from: lock[0] } : null
  const pkg = parseJson(read('package.json'))
  const declared = typeof pkg?.['packageManager'] === 'string' ? /^(npm|pnpm|yarn|bun)@/.exec(pkg['packageManager'])?.[1] : undefined
  if (declared && (!packageManager || ['npm', 'pnpm', 'yarn', 'bun'].includes(packageManager.name))) packageManager = { name: declared, from: 'package.json packageManager' }
  if (!packageManager && pkg) packageManager = { name: 'npm', from: 'package.json (no lockfile)' }

  const languages: Finding[] = []
  for (const [file, name] of LANGUAGES) if (isFile(file) && !languages.some((l) => l.name === name)) languages.push({ name, from: file })
  const top = names(root, '.')
  const c = top.find((n) => /\.[ch]$/.test(n)) ?? names(root, 'src').find((n) => /\.[ch]$/.test(n))
  const cMake = isFile('CMakeLists.txt') ? 'CMakeLists.txt' : isFile('Makefile') && c ? 'Makefile' : undefined
  if (cMake && !languages.some((l) => l.name === 'C')) languages.push({ name: 'C', from: cMake })
  // A Python project without a manifest still has its modules where they are looked for first.
  if (!languages.some((l) => l.name === 'Python')) {
    const module = [...top.map((n) => [n, n]), ...['src', 'tests', 'test'].flatMap((dir) => names(root, dir).map((n) => [n, `${dir}/${n}`]))].find(([n]) => /\.py$/.test(n!))
    if (module) languages.push({ name: 'Python', from: module[1]! })
  }

  const test = testCommand(pkg, packageManager, isFile, read)
  return {
    packageManager,
    lockfile: lock?.[0] ?? null,
    languages,
    test,
    harnessFiles: harnessFiles(kind),
    packages: packagesFor(languages, test, lock?.[0], read),
    setup: lock?.[0] === 'package-lock.json' || lock?.[0] === 'npm-shrinkwrap.json' ? [{ name: 'npm ci', from: lock[0] }] : [],
    localConfig: top.filter((n) => /^\.env(\..+)?$/.test(n) && !/\.(example|sample|template|dist)$/.test(n) && isFile(n)),
  }
}

/** The names in one directory of the repository (not through a link), or none. */
function names(root: string, rel: string): string[] {
  try {
    if (rel !== '.' && lstatSync(path.join(root, rel)).isSymbolicLink()) return []
    return readdirSync(path.join(root, rel)).sort()
  } catch {
    return []
  }
}

/**
 * Debian packages for what the repository is written in: an interpreter or a
 * toolchain the agent needs to build and test it. Only what Debian names
 * well; a language not listed here is reported, and `[image] packages` is the
 * place to add it.
 */
function packagesFor(languages: readonly Finding[], test: Finding | null, lockfile: string | undefined, read: (rel: string) => string | undefined): { name: string; why: string }[] {
  const out: { name: string; why: string }[] = []
  const add = (name: string, why: string) => out.some((p) => p.name === name) || out.push({ name, why })
  const has = (name: string) => languages.find((l) => l.name === name)
  if (has('Python')) {
    add('python3', `Python (${has('Python')!.from})`)
    add('python3-venv', 'Python virtual environments')
    if (test?.name === 'pytest') add('python3-pytest', `pytest (${test.from})`)
  }
  if (has('Go')) add('golang', `Go (${has('Go')!.from})`)
  if (has('Rust')) add('cargo', `Rust (${has('Rust')!.from})`)
  if (has('C')) add('build-essential', `C (${has('C')!.from})`)
  const native = lockfile ? nativeDependencies(lockfile, read) : undefined
  if (native) {
    add('build-essential', `native Node dependencies (${native})`)
    add('python3', `node-gyp, for native Node dependencies (${native})`)
  }
  return out
}

/** The first dependency a lockfile marks as built at install (node-gyp), if any. */
function nativeDependencies(lockfile: string, read: (rel: string) => string | undefined): string | undefined {
  const text = read(lockfile)
  if (!text) return undefined
  if (lockfile === 'package-lock.json' || lockfile === 'npm-shrinkwrap.json') {
    const lock = parseJson(text)
    const packages = lock?.['packages']
    if (packages && typeof packages === 'object') {
      for (const [where, entry] of Object.entries(packages as Record<string, unknown>)) {
        if (where && entry && typeof entry === 'object' && (entry as Record<string, unknown>)['hasInstallScript'] === true) return where.replace(/^.*node_modules\//, '')
      }
    }
    return undefined
  }
  if (lockfile === 'pnpm-lock.yaml') return /^\s+requiresBuild: true$/m.test(text) ? 'pnpm-lock.yaml requiresBuild' : undefined
  return undefined
}

function harnessFiles(kind: (rel: string) => 'file' | 'directory' | 'link' | undefined): HarnessFile[] {
  const out: HarnessFile[] = []
  for (const h of HARNESS_FILES) {
    const found = kind(h.path)
    if (!found) continue
    // The directory entry is only worth a line when its config file is not already one.
    if (h.path === '.codex' && out.some((o) => o.path === '.codex/config.toml')) continue
    if (found === 'link') out.push({ path: h.path, kind: found, harness: h.harness, use: 'a link: omh does not follow it' })
    else if (h.importsWith && found !== 'file') continue
    else out.push({ path: h.path, kind: found, harness: h.harness, use: h.use, ...(h.importsWith ? { importsWith: h.importsWith } : {}) })
  }
  return out
}

/** npm's placeholder for a package without tests. */
const NO_TEST = /no test specified/

function testCommand(
  pkg: Record<string, unknown> | undefined,
  pm: Finding | null,
  isFile: (rel: string) => boolean,
  read: (rel: string) => string | undefined,
): Finding | null {
  const scripts = pkg?.['scripts']
  const test = scripts && typeof scripts === 'object' ? (scripts as Record<string, unknown>)['test'] : undefined
  if (typeof test === 'string' && test.trim() && !NO_TEST.test(test)) {
    const runner = pm && ['pnpm', 'yarn', 'bun'].includes(pm.name) ? pm.name : 'npm'
    return { name: `${runner} test`, from: 'package.json scripts.test' }
  }
  if (isFile('Cargo.toml')) return { name: 'cargo test', from: 'Cargo.toml' }
  if (isFile('go.mod')) return { name: 'go test ./...', from: 'go.mod' }
  const pyproject = read('pyproject.toml')
  if (pyproject && /^\[tool\.pytest/m.test(pyproject)) return { name: 'pytest', from: 'pyproject.toml [tool.pytest…]' }
  if (isFile('pytest.ini')) return { name: 'pytest', from: 'pytest.ini' }
  const makefile = read('Makefile')
  if (makefile && /^test\s*:/m.test(makefile)) return { name: 'make test', from: 'Makefile test target' }
  if (isFile('mix.exs')) return { name: 'mix test', from: 'mix.exs' }
  return null
}

function parseJson(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined
  try {
    const value: unknown = JSON.parse(text)
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
