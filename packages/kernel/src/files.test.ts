import { promises, chmodSync, lstatSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { failure } from '@omh/test-utils'
import { testdir } from '@omh/test-utils'
import { replaceFile, snapshot, updateFile } from './files.js'

const originals = { rename: promises.rename, open: promises.open }

/** Runs `before` once, on the first call of `name` whose first argument satisfies `when`, then the real call. */
function intercept<K extends keyof typeof originals>(name: K, when: (first: string, ...rest: unknown[]) => boolean, before: () => Promise<void> | void): void {
  let done = false
  const original = originals[name] as (...args: unknown[]) => Promise<unknown>
  ;(promises as Record<string, unknown>)[name] = async (...args: unknown[]) => {
    if (!done && when(String(args[0]), ...args.slice(1))) {
      done = true
      await before()
    }
    return original(...args)
  }
  syncBuiltinESMExports()
}

afterEach(() => {
  Object.assign(promises, originals)
  syncBuiltinESMExports()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('replaceFile', () => {
  it('a second writer that starts while the first is between its check and its rename finds the file changed, and loses nothing', async () => {
    const file = path.join(testdir({ 'f.json': 'A' }), 'f.json')
    const first = await snapshot(file)
    const second = await snapshot(file)
    let late: Promise<unknown> | undefined
    intercept(
      'rename',
      (from) => /\.f\.json\.omh-\d+-/.test(from),
      async () => {
        late = replaceFile(second, 'C').then(
          () => 'written',
          (error: { code?: string }) => error.code,
        )
        // Long enough for the second writer to check and rename, were nothing holding it back.
        await sleep(200)
      },
    )
    await replaceFile(first, 'B')
    expect(await late).toBe('FILE_CHANGED')
    expect(readFileSync(file, 'utf8')).toBe('B')
  })

  it('an edit made by hand while the new bytes are written is seen before the rename, and kept', async () => {
    const file = path.join(testdir({ 'f.json': 'A' }), 'f.json')
    const before = await snapshot(file)
    intercept(
      'open',
      (p, flags) => /\.f\.json\.omh-\d+-/.test(p) && flags === 'wx',
      () => writeFileSync(file, 'by hand'),
    )
    expect((await failure(() => replaceFile(before, 'B'))).code).toBe('FILE_CHANGED')
    expect(readFileSync(file, 'utf8')).toBe('by hand')
    expect(readdirSync(path.dirname(file))).toEqual(['f.json'])
  })

  it('writes through a link to the file it names, and the link stays a link', async () => {
    const dotfiles = testdir({ 'mcp.json': 'old' })
    const home = testdir()
    const link = path.join(home, 'mcp.json')
    symlinkSync(path.join(dotfiles, 'mcp.json'), link)
    await replaceFile(await snapshot(link), 'new')
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(readFileSync(path.join(dotfiles, 'mcp.json'), 'utf8')).toBe('new')
    expect(readdirSync(home)).toEqual(['mcp.json'])
    expect(readdirSync(dotfiles)).toEqual(['mcp.json'])
  })

  it('writes through a relative link, and creates the file a dangling link names', async () => {
    const home = testdir({ 'dotfiles/.keep': '' })
    symlinkSync('dotfiles/mcp.json', path.join(home, 'mcp.json'))
    await replaceFile(await snapshot(path.join(home, 'mcp.json')), 'made')
    expect(readlinkSync(path.join(home, 'mcp.json'))).toBe('dotfiles/mcp.json')
    expect(readFileSync(path.join(home, 'dotfiles/mcp.json'), 'utf8')).toBe('made')
    expect(statSync(path.join(home, 'dotfiles/mcp.json')).mode & 0o777).toBe(0o600)
  })

  it('refuses a read-only file and leaves it as it is', async () => {
    const file = path.join(testdir({ 'mcp.json': 'mine' }), 'mcp.json')
    chmodSync(file, 0o444)
    const error = await failure(async () => replaceFile(await snapshot(file), 'theirs'))
    expect(error.code).toBe('FILE_READ_ONLY')
    expect(error.exit).toBe(1)
    expect(error.message).toBe(`${file} is read-only, so omh left it as it is.`)
    expect(readFileSync(file, 'utf8')).toBe('mine')
    expect(statSync(file).mode & 0o777).toBe(0o444)
  })

  it('removes the temporary copies a killed write left behind, and nothing else', async () => {
    const dir = testdir({
      'mcp.json': '{}',
      '.mcp.json.omh-4242-0badc0de': '{"secret": "left behind"}',
      '.mcp.json.omh-notes': 'mine',
      '.other.json.omh-4242-0badc0de': 'another file’s',
    })
    await replaceFile(await snapshot(path.join(dir, 'mcp.json')), '{"a": 1}')
    expect(readdirSync(dir).sort()).toEqual(['.mcp.json.omh-notes', '.other.json.omh-4242-0badc0de', 'mcp.json'])
  })
})

describe('updateFile', () => {
  it('hands the plan the file as it is under the lock, again after an edit made meanwhile', async () => {
    const file = path.join(testdir({ 'f.txt': 'one\n' }), 'f.txt')
    intercept(
      'open',
      (p, flags) => /\.f\.txt\.omh-\d+-/.test(p) && flags === 'wx',
      () => writeFileSync(file, 'one\ntwo\n'),
    )
    const seen: string[] = []
    await updateFile(file, (now) => {
      seen.push(now.bytes!.toString())
      return `${now.bytes!.toString()}three\n`
    })
    expect(seen).toEqual(['one\n', 'one\ntwo\n'])
    expect(readFileSync(file, 'utf8')).toBe('one\ntwo\nthree\n')
  })

  it('writes as many updates at once as are asked, one after another', async () => {
    const file = path.join(testdir({ 'n.txt': '' }), 'n.txt')
    await Promise.all(Array.from({ length: 20 }, (_, n) => updateFile(file, (now) => `${now.bytes!.toString()}${n}\n`)))
    expect(readFileSync(file, 'utf8').trim().split('\n').map(Number).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, n) => n))
    expect(readdirSync(path.dirname(file))).toEqual(['n.txt'])
  })
})
