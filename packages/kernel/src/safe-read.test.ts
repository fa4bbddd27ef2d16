import { execFileSync } from 'node:child_process'
import { mkdirSync, symlinkSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { isOmhError, type OmhError } from '@omh/plugin-api'
import { testdir } from '@omh/test-utils'
import { listDirSafe, readTextSafe, type ReadBounds } from './safe-read.js'

const refusal = (file: string, bounds: ReadBounds = {}): OmhError => {
  try {
    readTextSafe(file, bounds)
  } catch (error) {
    if (isOmhError(error)) return error
    throw error
  }
  throw new Error('expected a refusal')
}

describe('readTextSafe', () => {
  it('reads a regular file, and nothing where nothing is, a dangling link included', () => {
    const dir = testdir({ 'a.md': 'A\n' })
    symlinkSync(path.join(dir, 'gone.md'), path.join(dir, 'dangling.md'))
    expect(readTextSafe(path.join(dir, 'a.md'))).toBe('A\n')
    expect(readTextSafe(path.join(dir, 'missing.md'))).toBeUndefined()
    expect(readTextSafe(path.join(dir, 'dangling.md'), { within: dir })).toBeUndefined()
    expect(readTextSafe(path.join(dir, 'no/such/dir.md'), { within: dir })).toBeUndefined()
  })

  it('refuses a FIFO without waiting for a writer, a device and a directory, saying which', () => {
    const dir = testdir()
    execFileSync('mkfifo', [path.join(dir, 'p.md')])
    mkdirSync(path.join(dir, 'd.md'))
    expect(refusal(path.join(dir, 'p.md')).message).toMatch(/p\.md is a FIFO, not a regular file/)
    expect(refusal('/dev/zero').message).toMatch(/^\/dev\/zero is a character device/)
    expect(refusal(path.join(dir, 'd.md')).code).toBe('FILE_NOT_REGULAR')
    expect(refusal(path.join(dir, 'p.md')).exit).toBe(2)
  })

  it('names a link that leads back to itself as the user mistake it is, exit 2, inside a tree or not', () => {
    const dir = testdir()
    const loop = path.join(dir, 'loop.md')
    symlinkSync(loop, loop)
    for (const bounds of [{}, { within: dir }]) {
      const error = refusal(loop, bounds)
      expect([error.code, error.exit, error.message]).toEqual(['NOT_A_FILE', 2, `${loop} is a link that leads back to itself.`])
    }
    const folder = path.join(dir, 'skills')
    symlinkSync(folder, folder)
    let listed: unknown
    try {
      listDirSafe(folder)
    } catch (error) {
      listed = error
    }
    expect(listed).toMatchObject({ code: 'NOT_A_FILE', message: `${folder} is a link that leads back to itself.` })
  })

  it('refuses a file longer than the bound, whether its size says so or only its reading does', () => {
    const dir = testdir({ 'big.md': 'x'.repeat(11) })
    expect(readTextSafe(path.join(dir, 'big.md'), { maxBytes: 11 })).toBe('x'.repeat(11))
    expect(refusal(path.join(dir, 'big.md'), { maxBytes: 10 }).message).toBe(`${path.join(dir, 'big.md')} holds 11 bytes, more than the 10 omh reads from one file.`)
    // Files under /proc say they are empty.
    expect(refusal('/proc/self/status', { maxBytes: 10 }).message).toBe('/proc/self/status holds more than the 10 bytes omh reads from one file.')
  })

  it('follows a link that stays inside its tree, and refuses one that leaves, at the file or on the way', () => {
    const outside = testdir({ 'secret': 'SECRET\n', 'dir/x.json': '{}' })
    const tree = testdir({ 'docs/rules.md': '# Ours\n' })
    symlinkSync('docs/rules.md', path.join(tree, 'CLAUDE.md'))
    symlinkSync(path.join(outside, 'secret'), path.join(tree, 'AGENTS.md'))
    symlinkSync(path.join(outside, 'dir'), path.join(tree, 'hooks'))
    symlinkSync('../../..', path.join(tree, 'docs/up'))
    expect(readTextSafe(path.join(tree, 'CLAUDE.md'), { within: tree })).toBe('# Ours\n')
    const leaving = refusal(path.join(tree, 'AGENTS.md'), { within: tree })
    expect(leaving.code).toBe('FILE_OUTSIDE_TREE')
    expect(leaving.message).toContain(`${path.join(tree, 'AGENTS.md')} leads outside ${tree}, to ${path.join(outside, 'secret')}`)
    expect(refusal(path.join(tree, 'hooks/x.json'), { within: tree }).code).toBe('FILE_OUTSIDE_TREE')
    expect(refusal(path.join(tree, 'docs/up', outside.slice(1), 'secret'), { within: tree }).code).toBe('FILE_OUTSIDE_TREE')
    // The user's own files may link anywhere.
    expect(readTextSafe(path.join(tree, 'AGENTS.md'))).toBe('SECRET\n')
  })

  it('checks the tree by its real path, so a tree reached through a link still holds its files', () => {
    const real = testdir({ 'AGENTS.md': 'A\n' })
    const alias = path.join(testdir(), 'alias')
    symlinkSync(real, alias)
    expect(readTextSafe(path.join(alias, 'AGENTS.md'), { within: alias })).toBe('A\n')
  })
})

describe('listDirSafe', () => {
  it('lists a directory, nothing when it is missing, and refuses one reached through a link out of its tree', () => {
    const outside = testdir({ 'x.json': '{}' })
    const tree = testdir({ 'own/a.json': '{}' })
    symlinkSync(outside, path.join(tree, 'hooks'))
    expect(listDirSafe(path.join(tree, 'own'), { within: tree })?.map((e) => e.name.toString())).toEqual(['a.json'])
    expect(listDirSafe(path.join(tree, 'none'), { within: tree })).toBeUndefined()
    expect(() => listDirSafe(path.join(tree, 'hooks'), { within: tree })).toThrow(/leads outside/)
    expect(listDirSafe(path.join(tree, 'hooks'))?.map((e) => e.name.toString())).toEqual(['x.json'])
  })
})
