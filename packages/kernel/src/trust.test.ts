import { chmodSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { failure } from '@omh/test-utils'
import { testdir } from '@omh/test-utils'
import { inspectRepositoryTrust, loadSettings } from './settings/load.js'
import { recordTrust, revokeTrust, trustStoreOf } from './trust.js'

const MARKING = `import { writeFileSync } from 'node:fs'\nwriteFileSync(new URL('./ran', import.meta.url), '')\nexport default {}\n`

function repo(files: Record<string, string>) {
  const dir = testdir({ 'repo/.git/HEAD': 'ref: refs/heads/main\n', 'defaults.toml': '', ...files })
  const at = { cwd: path.join(dir, 'repo'), repoRoot: path.join(dir, 'repo'), omhHome: path.join(dir, 'home'), omhState: path.join(dir, 'home'), defaults: path.join(dir, 'defaults.toml') }
  return { dir, at }
}

describe('repository trust', () => {
  it('refuses a repository plugin before importing it, and loads it once its files are recorded', async () => {
    const { dir, at } = repo({ 'repo/.omh/settings.toml': 'plugins = ["./x.mjs"]\n', 'repo/.omh/x.mjs': MARKING })
    const error = await failure(() => loadSettings(at))
    expect(error.code).toBe('REPOSITORY_UNTRUSTED')
    expect(error.exit).toBe(2)
    expect(error.problems).toEqual([
      { file: path.join(dir, 'repo/.omh/settings.toml'), line: 1, column: 1, path: 'plugins', message: 'settings that load code; not trusted yet' },
      { file: path.join(dir, 'repo/.omh/x.mjs'), message: 'a plugin module; not trusted yet' },
    ])

    await recordTrust(await inspectRepositoryTrust(at))
    const settings = await loadSettings(at)
    expect(settings.plugins.map((p) => p.value)).toEqual(['./x.mjs'])
    expect(statSync(trustStoreOf(at.omhHome)).mode & 0o777).toBe(0o600)
  })

  it('runs a trusted omh.config.mjs as settings, and nothing before', async () => {
    const { dir, at } = repo({ 'repo/omh.config.mjs': `${MARKING.replace('export default {}', 'export default { runtime: "podman" }')}` })
    expect((await failure(() => loadSettings(at))).code).toBe('REPOSITORY_UNTRUSTED')
    expect(existsSync(path.join(dir, 'repo/ran'))).toBe(false)
    await recordTrust(await inspectRepositoryTrust(at))
    expect((await loadSettings(at)).runtime).toMatchObject({ value: 'podman', layer: 'project' })
    expect(existsSync(path.join(dir, 'repo/ran'))).toBe(true)
  })

  it('marks a file changed since it was trusted, and a file never recorded as new', async () => {
    const { dir, at } = repo({ 'repo/.omh/settings.toml': 'plugins = ["./x.mjs"]\n', 'repo/.omh/x.mjs': MARKING })
    await recordTrust(await inspectRepositoryTrust(at))
    writeFileSync(path.join(dir, 'repo/.omh/x.mjs'), `${MARKING}// more\n`)
    writeFileSync(path.join(dir, 'repo/.omh/settings.toml'), 'plugins = ["./x.mjs", "./y.mjs"]\n')
    writeFileSync(path.join(dir, 'repo/.omh/y.mjs'), MARKING)
    const trust = await inspectRepositoryTrust(at)
    expect(trust.trusted).toBe(false)
    expect(trust.files.map((f) => [path.relative(at.repoRoot, f.file), f.reason, f.state])).toEqual([
      ['.omh/settings.toml', 'settings', 'changed'],
      ['.omh/x.mjs', 'plugin', 'changed'],
      ['.omh/y.mjs', 'plugin', 'new'],
    ])
  })

  it('needs no trust for settings that load no code, and always trusts the personal layer', async () => {
    const { at } = repo({
      'repo/.omh/settings.toml': 'runtime = "docker"\n',
      'repo/omh.config.json': '{ "account": "work" }',
      'home/settings.toml': 'plugins = ["./mine.mjs"]\n',
      'home/mine.mjs': 'export default {}\n',
    })
    const settings = await loadSettings(at)
    expect(settings.runtime?.value).toBe('docker')
    expect(settings.account?.value).toBe('work')
    expect((await inspectRepositoryTrust(at)).files).toEqual([])
    expect(existsSync(trustStoreOf(at.omhHome))).toBe(false)
  })

  it('keys the record by the real path, so a symlink to the checkout shares it', async () => {
    const { dir, at } = repo({ 'repo/.omh/settings.toml': 'plugins = ["./x.mjs"]\n', 'repo/.omh/x.mjs': MARKING })
    await recordTrust(await inspectRepositoryTrust(at))
    symlinkSync(path.join(dir, 'repo'), path.join(dir, 'link'))
    const linked = { ...at, cwd: path.join(dir, 'link'), repoRoot: path.join(dir, 'link') }
    expect((await inspectRepositoryTrust(linked)).trusted).toBe(true)
    expect(await revokeTrust(linked.repoRoot, at.omhHome)).toBe(true)
    expect((await inspectRepositoryTrust(at)).trusted).toBe(false)
    expect(await revokeTrust(at.repoRoot, at.omhHome)).toBe(false)
  })

  it('writes the records 0600 even over a wider file, and refuses records it did not write', async () => {
    const { at } = repo({ 'repo/.omh/settings.toml': 'plugins = ["./x.mjs"]\n', 'repo/.omh/x.mjs': MARKING, 'home/trust.json': '{"version":1,"repositories":{}}' })
    chmodSync(trustStoreOf(at.omhHome), 0o644)
    await recordTrust(await inspectRepositoryTrust(at))
    expect(statSync(trustStoreOf(at.omhHome)).mode & 0o777).toBe(0o600)
    expect(Object.keys(JSON.parse(readFileSync(trustStoreOf(at.omhHome), 'utf8')).repositories)).toEqual([at.repoRoot])

    writeFileSync(trustStoreOf(at.omhHome), '{"repositories": []}')
    const error = await failure(() => loadSettings(at))
    expect(error.code).toBe('FILE_UNREADABLE')
    expect(error.message).toContain('it is not a trust record omh wrote')
  })
})
