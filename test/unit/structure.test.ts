import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '../..')
// Test tools are no production code: never shipped, never imported by it.
const packages = readdirSync(path.join(root, 'packages')).filter((name) => name !== 'test-utils')

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : [],
  )
}

/** Every production module with the modules it imports: relative ones resolved to files, `@omh/<name>` to that package's entry. */
function importGraph(): Map<string, string[]> {
  const files = [...packages.flatMap((p) => sources(path.join(root, 'packages', p, 'src'))), ...sources(path.join(root, 'src'))]
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    const targets: string[] = []
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)(?:\s+type)?[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g)) {
      const spec = m[1] ?? m[2]!
      if (spec.startsWith('.')) targets.push(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')))
      else if (spec.startsWith('@omh/')) {
        const [, name, sub] = /^@omh\/([^/]+)(?:\/(.+))?$/.exec(spec)!
        targets.push(entryOf(name!, sub))
      }
    }
    graph.set(file, targets)
  }
  return graph
}

/** The source file a package's name (and subpath) leads to, as its package.json exports say. */
function entryOf(name: string, sub: string | undefined): string {
  const manifest = JSON.parse(readFileSync(path.join(root, 'packages', name, 'package.json'), 'utf8')) as { exports?: Record<string, { source?: string } | string> }
  const target = manifest.exports?.[sub ? `./${sub}` : '.']
  return path.join(root, 'packages', name, typeof target === 'object' && target.source ? target.source : 'src/index.ts')
}

const packageOf = (file: string) => path.relative(root, file).split(path.sep).slice(0, 2).join('/')

describe('the code layout', () => {
  it('has no circle of imports, within a package or across packages', () => {
    const graph = importGraph()
    const circles: string[] = []
    const state = new Map<string, 'open' | 'done'>()
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === 'done') return
      if (state.get(file) === 'open') {
        circles.push([...trail.slice(trail.indexOf(file)), file].map((f) => path.relative(root, f)).join(' → '))
        return
      }
      state.set(file, 'open')
      for (const next of graph.get(file) ?? []) visit(next, [...trail, file])
      state.set(file, 'done')
    }
    for (const file of graph.keys()) visit(file, [])
    expect(circles).toEqual([])
  })

  it('reaches another package only by its name, never by a relative path', () => {
    // Every file a package's exports lead to: reached by name, it counts as that package.
    const exported = new Set(
      packages.flatMap((name) => {
        const manifest = JSON.parse(readFileSync(path.join(root, 'packages', name, 'package.json'), 'utf8')) as { exports?: Record<string, unknown> }
        return Object.keys(manifest.exports ?? { '.': 0 }).map((sub) => path.relative(root, entryOf(name, sub === '.' ? undefined : sub.slice(2))))
      }),
    )
    const leaks = [...importGraph()].flatMap(([file, targets]) =>
      file.includes(`${path.sep}packages${path.sep}`)
        ? targets.filter((t) => packageOf(t) !== packageOf(file)).map((t) => `${path.relative(root, file)} → ${path.relative(root, t)}`)
        : [],
    )
    // A package's entry reached by name counts as that package: only relative paths are leaks here.
    const relative = leaks.filter((leak) => !exported.has(leak.split(' → ')[1]!))
    expect(relative).toEqual([])
  })

  // A file past this holds more than one idea, unless its header says why it is one.
  it('keeps every production file under 400 lines, or says at its top why it is longer', () => {
    const files = [...packages.flatMap((p) => sources(path.join(root, 'packages', p, 'src'))), ...sources(path.join(root, 'src'))]
    const long = files.flatMap((file) => {
      const text = readFileSync(file, 'utf8')
      const lines = text.split('\n').length - 1
      const header = text.split('\n').slice(0, 40).join('\n')
      return lines >= 400 && !/Longer than 400 lines: \S/.test(header) ? [`${path.relative(root, file)}: ${lines} lines`] : []
    })
    expect(long).toEqual([])
  })
})
