import { execFileSync } from 'node:child_process'
import { symlinkSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { testdir } from '@omh/test-utils'
import { accountNameProblem, accountToCapture, capturedAccounts, chooseAccount, credentialHostPath, isPlaceholder, unfilledTokens } from './accounts.js'
import { isOmhError } from '@omh/plugin-api'

const adapter = { name: 'h', token: ['/home/agent/.h/token.json', '/home/agent/.h.json'] }

const home = (accounts: Record<string, Record<string, string>>) =>
  testdir(Object.fromEntries(Object.entries(accounts).flatMap(([a, files]) => Object.entries(files).map(([f, c]) => [`creds/h/${a}/${f}`, c]))))

const codeOf = async (p: Promise<unknown>) => p.then(() => 'no error', (e) => (isOmhError(e) ? `${e.code}: ${e.message}` : String(e)))

describe('accounts', () => {
  it('keep guest paths under the home by their relative path, and others under _root/', () => {
    expect(credentialHostPath('/o/creds/h/a', '/home/agent/.claude/')).toBe('/o/creds/h/a/.claude')
    expect(credentialHostPath('/o/creds/h/a', '/home/agent/.claude.json')).toBe('/o/creds/h/a/.claude.json')
    expect(credentialHostPath('/o/creds/h/a', '/etc/h/login')).toBe('/o/creds/h/a/_root/etc/h/login')
  })

  it('are named by one path component', () => {
    expect(accountNameProblem('work')).toBeUndefined()
    expect(accountNameProblem('a.b-c_1')).toBeUndefined()
    expect(['', '.', '..', 'a/b', 'a\\b', '.hidden', 'a b'].map((n) => accountNameProblem(n) !== undefined)).toEqual(Array(7).fill(true))
  })

  it('count as captured only with every token holding real content', async () => {
    expect(['', '  \n', '{}', '{ }\n', '[]', 'null'].every(isPlaceholder)).toBe(true)
    expect(isPlaceholder('{"token":"x"}')).toBe(false)
    const dir = home({
      full: { '.h/token.json': '{"t":1}', '.h.json': '{"u":1}' },
      half: { '.h/token.json': '{"t":1}', '.h.json': '{}' },
      started: { '.h/settings.json': '{"theme":"dark"}' },
    })
    expect(await capturedAccounts(dir, adapter)).toEqual(['full'])
    expect(await unfilledTokens(adapter, path.join(dir, 'creds/h/half'))).toEqual(['/home/agent/.h.json'])
    expect(await capturedAccounts(dir, { name: 'h', token: [] })).toEqual([])
    expect(await capturedAccounts(testdir({}), adapter)).toEqual([])
  })

  it('take a FIFO or a link out of the account in place of a token for no login, without waiting on it', async () => {
    const dir = home({ fifo: { '.h/token.json': '{"t":1}' }, linked: { '.h/token.json': '{"t":1}' }, outside: { 'secret.json': '{"real":1}' } })
    execFileSync('mkfifo', [path.join(dir, 'creds/h/fifo/.h.json')])
    symlinkSync(path.join(dir, 'creds/h/outside/secret.json'), path.join(dir, 'creds/h/linked/.h.json'))
    expect(await unfilledTokens(adapter, path.join(dir, 'creds/h/fifo'))).toEqual(['/home/agent/.h.json'])
    expect(await unfilledTokens(adapter, path.join(dir, 'creds/h/linked'))).toEqual(['/home/agent/.h.json'])
  })

  it('resolve -a before the setting, the only captured one without either, and nothing when none is captured', async () => {
    const one = home({ work: { '.h/token.json': 'x', '.h.json': 'y' } })
    expect(await chooseAccount(one, adapter, {})).toEqual({ account: 'work', by: 'only' })
    expect(await chooseAccount(one, adapter, { setting: 'work' })).toEqual({ account: 'work', by: 'setting' })
    const two = home({ work: { '.h/token.json': 'x', '.h.json': 'y' }, home: { '.h/token.json': 'x', '.h.json': 'y' } })
    expect(await chooseAccount(two, adapter, { flag: 'home', setting: 'work' })).toEqual({ account: 'home', by: 'flag' })
    expect(await chooseAccount(testdir({}), adapter, {})).toEqual({ account: undefined, by: 'none' })
  })

  it('refuse to guess between two captured accounts, and name a missing one with those captured', async () => {
    const two = home({ work: { '.h/token.json': 'x', '.h.json': 'y' }, home: { '.h/token.json': 'x', '.h.json': 'y' } })
    expect(await codeOf(chooseAccount(two, adapter, {}))).toBe('ACCOUNT_AMBIGUOUS: h has several accounts (home, work), and nothing says which to use.')
    expect(await codeOf(chooseAccount(two, adapter, { setting: 'play' }))).toBe('ACCOUNT_NOT_FOUND: h has no account "play" (captured: home, work).')
    expect(await codeOf(chooseAccount(two, adapter, { flag: '../x' }))).toMatch(/^ACCOUNT_INVALID: /)
  })

  it('use a named account of a harness without token files when omh auth made it, and none by default', async () => {
    const dir = home({ work: { '.h/settings.json': '{"theme":"dark"}' } })
    const tokenless = { name: 'h', token: [] }
    expect(await chooseAccount(dir, tokenless, { flag: 'work' })).toEqual({ account: 'work', by: 'flag' })
    expect(await chooseAccount(dir, tokenless, {})).toEqual({ account: undefined, by: 'none' })
    expect(await codeOf(chooseAccount(dir, tokenless, { setting: 'play' }))).toMatch(/^ACCOUNT_NOT_FOUND/)
  })

  it('log into the named account, else the only captured one, else default; never guess between two', async () => {
    const one = home({ work: { '.h/token.json': 'x', '.h.json': 'y' } })
    expect(await accountToCapture(testdir({}), adapter, {})).toEqual({ account: 'default', captured: [] })
    expect(await accountToCapture(one, adapter, {})).toEqual({ account: 'work', captured: ['work'] })
    expect(await accountToCapture(one, adapter, { argument: 'new', flag: 'other' })).toEqual({ account: 'new', captured: ['work'] })
    const two = home({ a: { '.h/token.json': 'x', '.h.json': 'y' }, b: { '.h/token.json': 'x', '.h.json': 'y' } })
    expect(await codeOf(accountToCapture(two, adapter, {}))).toMatch(/^ACCOUNT_AMBIGUOUS: /)
  })
})
