import { execFileSync } from 'node:child_process'
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { KEPT_SETUPS, keepSetup, listKept, reuseSetup, setupKey, worktreeExtras } from './reuse-setup.js'

const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' }
const steps = [{ from: '[session] setup' as const, command: 'npm ci' }]

describe('setups reused between sessions', () => {
  let scratch: string
  let store: string
  const checkout = (name: string, files: Record<string, string> = { 'package.json': '{}\n', '.gitignore': 'node_modules/\n' }) => {
    const dir = path.join(scratch, name)
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
      writeFileSync(path.join(dir, file), text)
    }
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env, stdio: 'pipe' })
    git('init', '-q', '-b', 'main')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
    return dir
  }
  const inputs = (worktree: string, more: Partial<Parameters<typeof setupKey>[0]> = {}) => ({ image: 'localhost/omh-x:1', steps, worktree, carried: [], env, ...more })
  const install = (worktree: string) => {
    mkdirSync(path.join(worktree, 'node_modules/a'), { recursive: true })
    writeFileSync(path.join(worktree, 'node_modules/a/index.js'), 'module.exports = 1\n')
    symlinkSync('/etc', path.join(worktree, 'node_modules/outside'))
  }

  beforeEach(() => {
    scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-reuse-setup-')))
    store = path.join(scratch, 'store')
  })
  afterEach(() => rmSync(scratch, { recursive: true, force: true }))

  it('keys on the image, the commands, the tree and the bytes of what was carried in', async () => {
    const one = checkout('one')
    const two = checkout('two')
    const key = await setupKey(inputs(one))
    expect(key).toMatch(/^[0-9a-f]{64}$/)
    expect(await setupKey(inputs(two)), 'the same tree elsewhere').toBe(key)
    expect(await setupKey(inputs(one, { image: 'localhost/omh-x:2' }))).not.toBe(key)
    expect(await setupKey(inputs(one, { steps: [{ from: '[session] setup', command: 'npm install' }] }))).not.toBe(key)
    writeFileSync(path.join(one, '.env'), 'A=1\n')
    const carried = await setupKey(inputs(one, { carried: ['.env'] }))
    writeFileSync(path.join(one, '.env'), 'A=2\n')
    expect(await setupKey(inputs(one, { carried: ['.env'] }))).not.toBe(carried)
    rmSync(path.join(one, '.env'))
    symlinkSync('/etc/passwd', path.join(one, '.env'))
    expect(await setupKey(inputs(one, { carried: ['.env'] })), 'a carried file turned link is no input to read').toBeUndefined()
  })

  it("keeps what the setup made in the worktree and copies it, links as links, into a new worktree of the same key", async () => {
    const one = checkout('one')
    const key = (await setupKey(inputs(one)))!
    const before = (await worktreeExtras(one, env))!
    install(one)
    const after = (await worktreeExtras(one, env))!
    expect([...after.paths]).toEqual(['node_modules'])
    expect(await keepSetup({ store, key, worktree: one, session: 's01', before, after })).toEqual(['node_modules'])

    const two = checkout('two')
    const reused = await reuseSetup(store, key, two)
    expect(reused).toMatchObject({ session: 's01', paths: ['node_modules'] })
    expect(readFileSync(path.join(two, 'node_modules/a/index.js'), 'utf8')).toBe('module.exports = 1\n')
    expect(readlinkSync(path.join(two, 'node_modules/outside'))).toBe('/etc')
    expect(await reuseSetup(store, 'f'.repeat(64), checkout('three')), 'another key').toBeUndefined()
  })

  it('never fills a path a new worktree already has, or one behind a link', async () => {
    const one = checkout('one')
    const key = (await setupKey(inputs(one)))!
    const before = (await worktreeExtras(one, env))!
    mkdirSync(path.join(one, 'lib/node_modules'), { recursive: true })
    writeFileSync(path.join(one, 'lib/node_modules/x'), 'x')
    writeFileSync(path.join(one, 'lib/keep'), 'tracked\n')
    const after = (await worktreeExtras(one, env))!
    await keepSetup({ store, key, worktree: one, session: 's01', before, after })

    const taken = checkout('taken')
    mkdirSync(path.join(taken, 'lib/node_modules'), { recursive: true })
    expect(await reuseSetup(store, key, taken)).toBeUndefined()
    const linked = checkout('linked')
    const elsewhere = path.join(scratch, 'elsewhere')
    mkdirSync(elsewhere)
    symlinkSync(elsewhere, path.join(linked, 'lib'))
    expect(await reuseSetup(store, key, linked)).toBeUndefined()
    expect(lstatSync(path.join(elsewhere, 'node_modules'), { throwIfNoEntry: false })).toBeUndefined()
  })

  it('keeps no path whose name carries a control character: kept paths are printed on the terminal', async () => {
    const one = checkout('one')
    const before = (await worktreeExtras(one, env))!
    mkdirSync(path.join(one, 'node_modules'))
    writeFileSync(path.join(one, 'node_modules/x'), 'x')
    mkdirSync(path.join(one, 'out\u001b[2J'))
    writeFileSync(path.join(one, 'out\u001b[2J/y'), 'y')
    const after = (await worktreeExtras(one, env))!
    expect(await keepSetup({ store, key: 'c'.repeat(64), worktree: one, session: 's01', before, after })).toEqual(['node_modules'])
  })

  it('keeps no setup that changed a tracked file or made nothing, and only the newest few', async () => {
    const one = checkout('one')
    const before = (await worktreeExtras(one, env))!
    writeFileSync(path.join(one, 'package.json'), '{"changed":true}\n')
    install(one)
    expect(await keepSetup({ store, key: 'a'.repeat(64), worktree: one, session: 's01', before, after: (await worktreeExtras(one, env))! })).toBeUndefined()
    const clean = checkout('clean')
    const nothing = (await worktreeExtras(clean, env))!
    expect(await keepSetup({ store, key: 'b'.repeat(64), worktree: clean, session: 's02', before: nothing, after: nothing })).toBeUndefined()

    install(clean)
    const after = (await worktreeExtras(clean, env))!
    for (let n = 0; n < KEPT_SETUPS + 2; n++) {
      await keepSetup({ store, key: String(n).repeat(64), worktree: clean, session: `s0${n}`, before: nothing, after })
      // Kept at distinct times, the oldest first.
      const record = path.join(store, String(n).repeat(64), 'kept.json')
      const at = new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString()
      writeFileSync(record, JSON.stringify({ ...JSON.parse(readFileSync(record, 'utf8')), at }))
      utimesSync(record, new Date(at), new Date(at))
    }
    expect((await listKept(store)).map((k) => k.session).sort()).toEqual(['s02', 's03', 's04'])
  })
})
