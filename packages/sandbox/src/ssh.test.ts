import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { failure } from '@omh/test-utils'
import { testdir } from '@omh/test-utils'
import { editorArgs, ensureInclude, ensureKeyPair, hostEntry, sshAlias, sshPaths, sshUrl, writeHostEntry } from './ssh.js'

describe('attach', () => {
  it('gives each session an alias', () => {
    expect(sshAlias('api-1a2b3c', 's01')).toBe('omh-api-1a2b3c-s01')
  })

  it('fills $URL and $ALIAS in an editor’s args', () => {
    expect(editorArgs(['--remote', 'ssh-remote+$ALIAS', '/work'], 'omh-a-s01')).toEqual(['--remote', 'ssh-remote+omh-a-s01', '/work'])
    expect(editorArgs(['$URL'], 'omh-a-s01')).toEqual([sshUrl('omh-a-s01')])
    expect(sshUrl('omh-a-s01')).toBe('ssh://omh-a-s01/work')
  })

  it('writes one entry per session, reaching 127.0.0.1 with the repository key only', async () => {
    const home = testdir()
    const paths = sshPaths(home, 'api-1')
    const file = await writeHostEntry(paths, 'omh-api-1-s01', hostEntry('omh-api-1-s01', 23456, paths.key))
    expect(readFileSync(file, 'utf8')).toBe(
      `Host omh-api-1-s01\n  HostName 127.0.0.1\n  Port 23456\n  User agent\n  IdentityFile ${paths.key}\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n`,
    )
    expect(statSync(file).mode & 0o777).toBe(0o600)
  })

  it('makes a key pair once per repository', async () => {
    const home = testdir()
    const { key } = sshPaths(home, 'api-1')
    const pub = await ensureKeyPair(key, 'omh api-1')
    expect(pub).toMatch(/^ssh-ed25519 \S+ omh api-1$/)
    expect(await ensureKeyPair(key, 'omh api-1')).toBe(pub)
    expect(statSync(key).mode & 0o077).toBe(0)
  })

  it('makes one pair when attaches run at once, each finding it whole', async () => {
    const home = testdir()
    const { key } = sshPaths(home, 'api-1')
    const pubs = await Promise.all(Array.from({ length: 8 }, () => ensureKeyPair(key, 'omh api-1')))
    expect(new Set(pubs).size).toBe(1)
    expect(pubs[0]).toBe(readFileSync(`${key}.pub`, 'utf8').trim())
    // The private key on disk is the one the public key was made with.
    const fields = (pub: string) => pub.split(' ').slice(0, 2).join(' ')
    expect(fields(execFileSync('ssh-keygen', ['-y', '-f', key], { encoding: 'utf8' }))).toBe(fields(pubs[0]!))
    expect(readdirSync(path.dirname(path.dirname(key)))).toEqual(['api-1'])
  })

  it('says which package to install when there is no ssh-keygen, and keeps nothing', async () => {
    const home = testdir()
    const { key } = sshPaths(home, 'api-1')
    const error = await failure(() => ensureKeyPair(key, 'omh api-1', { PATH: path.join(home, 'no-bin') }))
    expect(error.code).toBe('SSH_KEY_FAILED')
    expect(error.message).toBe(`Could not make the SSH key ${key}: there is no ssh-keygen on PATH.`)
    expect(error.hint).toContain('openssh-client')
    expect(existsSync(path.dirname(key))).toBe(false)
    expect(readdirSync(path.dirname(path.dirname(key)))).toEqual([])
  })

  it('puts the include first in the user’s ssh config, keeps the rest, and does it once', async () => {
    const home = testdir({ '.ssh/config': 'Host *\n  ServerAliveInterval 30\n' })
    const config = path.join(home, '.ssh/config')
    chmodSync(config, 0o644)
    const include = 'Include /o/ssh/hosts/*.conf'
    expect(await ensureInclude(config, include)).toBe('added')
    expect(readFileSync(config, 'utf8')).toBe(`${include}\n\nHost *\n  ServerAliveInterval 30\n`)
    expect(statSync(config).mode & 0o777).toBe(0o644)
    expect(await ensureInclude(config, include)).toBe('present')
    expect(readFileSync(config, 'utf8')).toBe(`${include}\n\nHost *\n  ServerAliveInterval 30\n`)
  })

  it('creates the user’s ssh config when there is none, private to the user', async () => {
    const home = testdir()
    const config = path.join(home, '.ssh/config')
    expect(await ensureInclude(config, 'Include /o/*.conf')).toBe('created')
    expect(readFileSync(config, 'utf8')).toBe('Include /o/*.conf\n')
    expect(statSync(config).mode & 0o777).toBe(0o600)
    expect(statSync(path.dirname(config)).mode & 0o777).toBe(0o700)
  })

  it('leaves a config that changed meanwhile untouched', async () => {
    const home = testdir({ '.ssh/config': 'Host a\n' })
    const config = path.join(home, '.ssh/config')
    const { default: fs } = await import('node:fs')
    const { syncBuiltinESMExports } = await import('node:module')
    const original = fs.openSync
    let reads = 0
    // The second read (just before the rename) sees another writer's change.
    fs.openSync = ((...args: Parameters<typeof original>) => {
      if (String(args[0]) === config && ++reads === 2) writeFileSync(config, 'Host b\n')
      return original(...args)
    }) as typeof original
    syncBuiltinESMExports()
    try {
      await expect(ensureInclude(config, 'Include x')).rejects.toMatchObject({ code: 'FILE_CHANGED', message: expect.stringMatching(/changed while omh was working on it/) })
    } finally {
      fs.openSync = original
      syncBuiltinESMExports()
    }
    expect(readFileSync(config, 'utf8')).toBe('Host b\n')
  })
})
