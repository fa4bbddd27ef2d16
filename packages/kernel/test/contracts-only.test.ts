import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const packages = path.resolve(import.meta.dirname, '../..')
const kernelSrc = path.join(packages, 'kernel/src')
// The floors that know contracts only: the kernel, and the images, the sandbox, doctor and the fast path on top of it.
const contractOnly = [kernelSrc, ...['image', 'sandbox', 'doctor', 'fast-path', 'plugin-api', 'plugin-kit'].map((name) => path.join(packages, name, 'src'))]

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : [],
  )
}

/** Every render string a workspace renderer answers, read from its source. */
function formats(): string[] {
  const out = new Set<string>()
  for (const name of readdirSync(packages).filter((n) => n.startsWith('renderer-'))) {
    const text = readFileSync(path.join(packages, name, 'src/index.ts'), 'utf8')
    for (const m of text.matchAll(/formats:\s*\[([^\]]*)\]/g)) for (const f of m[1]!.matchAll(/['"]([^'"]+)['"]/g)) out.add(f[1]!)
  }
  return [...out]
}

describe('the kernel knows contracts only', () => {
  it('names no concrete render format as a string', () => {
    const known = formats()
    expect(known).toContain('concat')
    const hits = contractOnly.flatMap(sources).flatMap((file) => {
      const text = readFileSync(file, 'utf8')
      return known.filter((f) => new RegExp(`['"\`]${f}['"\`]`).test(text)).map((f) => `${path.relative(packages, file)}: ${f}`)
    })
    expect(hits).toEqual([])
  })

  it('names no container engine anywhere below the CLI, and no harness in the kernel, comments included', () => {
    const engines = readdirSync(packages)
      .filter((n) => n.startsWith('runtime-'))
      .map((n) => n.slice('runtime-'.length))
    expect(engines.length).toBeGreaterThan(0)
    const harnesses = ['claude', 'opencode', 'codex']
    const hits = [...contractOnly.flatMap(sources).map((file) => ({ file, words: engines })), ...sources(kernelSrc).map((file) => ({ file, words: harnesses }))].flatMap(({ file, words }) => {
      const text = readFileSync(file, 'utf8')
      return words.filter((w) => new RegExp(`\\b${w}\\b`, 'i').test(text)).map((w) => `${path.relative(packages, file)}: ${w}`)
    })
    expect(hits).toEqual([])
  })
})
