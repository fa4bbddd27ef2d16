import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'

/**
 * Finds the module file a `plugins` entry names, the way Node's ESM loader
 * would from `fromDir`: a path is taken relative to that directory; a package
 * is looked up in each `node_modules` above it and entered through its
 * `exports` (conditions `node`, `import`, `default`) or `main`.
 *
 * Node has no public "resolve from this directory" for ESM, which is why this
 * exists; it covers what plugin packages use and nothing exotic.
 */
export function resolvePluginModule(specifier: string, fromDir: string): string | undefined {
  if (specifier.startsWith('.') || path.isAbsolute(specifier)) {
    const file = path.resolve(fromDir, specifier)
    return existsSync(file) ? file : undefined
  }
  const parts = specifier.split('/')
  // A subpath that climbs would leave the package: never resolved (the settings schema says why).
  if (specifier.includes('\\') || parts.some((part) => part === '' || part === '.' || part === '..')) return undefined
  const nameLength = specifier.startsWith('@') ? 2 : 1
  const name = parts.slice(0, nameLength).join('/')
  const subpath = parts.length > nameLength ? `./${parts.slice(nameLength).join('/')}` : '.'
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const root = path.join(dir, 'node_modules', name)
    const manifest = path.join(root, 'package.json')
    if (existsSync(manifest)) return entryOf(root, manifest, subpath)
    if (path.dirname(dir) === dir) return undefined
  }
}

const CONDITIONS = ['node', 'import', 'default']

function entryOf(root: string, manifest: string, subpath: string): string | undefined {
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: unknown; main?: string }
  if (pkg.exports !== undefined) {
    const target = fromExports(pkg.exports, subpath)
    return target ? path.join(root, target) : undefined
  }
  const file = path.join(root, subpath === '.' ? (pkg.main ?? 'index.js') : subpath)
  return existsSync(file) ? file : undefined
}

function fromExports(exports: unknown, subpath: string): string | undefined {
  if (typeof exports === 'string' || Array.isArray(exports)) return subpath === '.' ? fromTarget(exports) : undefined
  if (exports === null || typeof exports !== 'object') return undefined
  const entries = exports as Record<string, unknown>
  const keyed = Object.keys(entries).some((k) => k.startsWith('.'))
  if (!keyed) return subpath === '.' ? fromTarget(entries) : undefined
  return fromTarget(entries[subpath])
}

function fromTarget(target: unknown): string | undefined {
  if (typeof target === 'string') return target
  if (Array.isArray(target)) {
    for (const t of target) {
      const hit = fromTarget(t)
      if (hit) return hit
    }
    return undefined
  }
  if (target !== null && typeof target === 'object') {
    for (const [condition, value] of Object.entries(target)) {
      if (CONDITIONS.includes(condition)) {
        const hit = fromTarget(value)
        if (hit) return hit
      }
    }
  }
  return undefined
}
