import { existsSync, readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { testdir, write } from '@omh/test-utils'

// Packages as a third party would publish them: each depends on omh's
// contracts by range, which the plugin folder answers with omh's own copies.
const manifest = (name: string) =>
  JSON.stringify({
    name,
    version: '1.2.3',
    type: 'module',
    exports: { '.': './index.js' },
    peerDependencies: { '@omh/plugin-api': '^1' },
    dependencies: { '@omh/plugin-kit': '^1' },
  })

const SHOUT = `
import { PLUGIN_API_VERSION } from '@omh/plugin-api'
import { closest } from '@omh/plugin-kit'
export default {
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name: 'omh-renderer-shout', version: '1.2.3' },
  formats: ['shout'],
  classes: ['rules'],
  render(input) {
    closest('a', ['b'])
    return { files: [{ kind: 'file', guest: input.binding.path, content: input.items.map((s) => s.text.toUpperCase()).join('\\n') }], dropped: [] }
  },
}
`

const LOUD = 'name = "loud"\nbin = "loud"\ninstall = "true"\n[capabilities.rules]\npath = "/work/LOUD.md"\nrender = "shout"\n'

const SETTINGS = '# mine\nruntime = "podman" # keep this\n\n[image]\nbase = "localhost/omh-base:debian"\n'

function packages(root: string): void {
  write(root, {
    'shout/package.json': manifest('omh-renderer-shout'),
    'shout/index.js': SHOUT,
    'shout/adapters/loud.toml': LOUD,
    'shout/editors/ed.toml': 'name = "ed"\nbin = "ed"\nfolder = "{{host}}:{{path}}"\n',
    'empty/package.json': manifest('omh-not-a-plugin'),
    'empty/index.js': 'export default { hello: 1 }\n',
    'future/package.json': manifest('omh-future'),
    'future/index.js': "export default { kind: 'extension', apiVersion: 99, meta: { name: 'omh-future', version: '9.0.0' }, apply() {} }\n",
    'throws/package.json': manifest('omh-throws'),
    'throws/index.js': "throw new Error('kaboom at import')\n",
    'nothing/README.md': 'not a package\n',
    'applies/package.json': manifest('omh-applies'),
    'applies/index.js': "export default { kind: 'extension', apiVersion: 1, meta: { name: 'omh-applies', version: '1.0.0' }, apply() { throw new Error('kaboom in apply') } }\n",
  })
}

/** The plugin folder and the settings file, byte for byte, with what node_modules holds. */
function state(home: string) {
  const folder = path.join(home, 'plugins')
  const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : undefined)
  return {
    settings: read(path.join(home, 'settings.toml')),
    manifest: read(path.join(folder, 'package.json')),
    lock: read(path.join(folder, 'package-lock.json')),
    modules: existsSync(path.join(folder, 'node_modules')) ? readdirSync(path.join(folder, 'node_modules')).sort() : undefined,
    packs: existsSync(path.join(folder, 'packs')) ? readdirSync(path.join(folder, 'packs')).sort() : undefined,
  }
}

// Every add runs npm, and a refused add runs it again to prune: seconds each on a loaded machine.
describe('omh plugins add and rm', { timeout: 300_000 }, () => {
  it('installs a folder into the plugin folder, names it in the settings, finds the adapter it ships, and removes it again', () => {
    const work = testdir()
    packages(work)
    const home = testdir({ 'settings.toml': SETTINGS })
    const env = { OMH_HOME: home }

    const added = omh(['plugins', 'add', './shout', '--json'], { cwd: work, env })
    expect(added.stderr).toBe('')
    expect(added.status).toBe(0)
    expect(added.json().result).toMatchObject({
      name: 'omh-renderer-shout',
      version: '1.2.3',
      kind: 'renderer',
      from: path.join(work, 'shout'),
      folder: path.join(home, 'plugins'),
      named: true,
      adapters: ['loud'],
      editors: ['ed'],
    })
    // The user's comments and keys are kept; only `plugins` is new.
    expect(readFileSync(path.join(home, 'settings.toml'), 'utf8')).toBe(`plugins = ["omh-renderer-shout"]\n${SETTINGS}`)
    expect(readFileSync(path.join(home, 'plugins/.gitignore'), 'utf8')).toBe('node_modules/\n')
    expect(existsSync(path.join(home, 'plugins/package-lock.json'))).toBe(true)

    const listed = omh(['plugins', '--json'], { cwd: work, env }).json().result.plugins
    expect(listed).toContainEqual(
      expect.objectContaining({ name: 'omh-renderer-shout', source: { kind: 'installed', from: path.join(work, 'shout') } }),
    )
    expect(listed).toContainEqual(expect.objectContaining({ name: '@omh/renderer-concat', source: { kind: 'bundled' } }))

    const adapters = omh(['adapters', 'ls', '--json'], { cwd: work, env }).json().result.adapters
    expect(adapters).toContainEqual(
      expect.objectContaining({ name: 'loud', origin: 'plugin', plugin: 'omh-renderer-shout', valid: true }),
    )
    expect(omh(['adapters', 'ls'], { cwd: work, env }).stdout).toMatch(/loud\s+-\s+rules\s+-\s+plugin omh-renderer-shout/)

    // Adding it again changes nothing in the settings.
    const again = omh(['plugins', 'add', './shout', '--json'], { cwd: work, env })
    expect(again.status).toBe(0)
    expect(again.json().result.named).toBe(false)

    const removed = omh(['plugins', 'rm', 'omh-renderer-shout', '--json'], { cwd: work, env })
    expect(removed.status).toBe(0)
    expect(removed.json().result).toMatchObject({ name: 'omh-renderer-shout', unnamed: true })
    expect(readFileSync(path.join(home, 'settings.toml'), 'utf8')).toBe(SETTINGS)
    expect(state(home).modules).not.toContain('omh-renderer-shout')
    expect(state(home).packs).toBeUndefined()
    expect(omh(['adapters', 'ls', '--json'], { cwd: work, env }).json().result.adapters.map((a: { name: string }) => a.name)).not.toContain(
      'loud',
    )
  })

  it('refuses a package that is no plugin, speaks another API, throws on import, or does not install, leaving everything as it was', () => {
    const work = testdir()
    packages(work)
    const home = testdir({ 'settings.toml': SETTINGS })
    const env = { OMH_HOME: home }
    expect(omh(['plugins', 'add', './shout'], { cwd: work, env }).status).toBe(0)
    const before = state(home)

    const cases = [
      ['./empty', 2, 'PLUGIN_INVALID', /omh-not-a-plugin .* is not an omh plugin/],
      ['./future', 2, 'PLUGIN_API_UNSUPPORTED', /omh-future speaks plugin API 99; this omh supports 1/],
      ['./throws', 2, 'PLUGIN_LOAD_FAILED', /omh-throws .* could not be loaded: kaboom at import/],
      ['./applies', 1, 'PLUGIN_ERROR', /omh-applies failed in ExtensionPlugin\.apply: kaboom in apply/],
      ['./nothing', 1, 'PLUGIN_INSTALL_FAILED', /npm could not install \.\/nothing into /],
      ['omh-no-such-package-anywhere@0.0.0-nope', 1, 'PLUGIN_INSTALL_FAILED', /npm could not install omh-no-such-package-anywhere/],
    ] as const
    for (const [spec, exit, code, message] of cases) {
      const ran = omh(['plugins', 'add', spec, '--json'], { cwd: work, env })
      expect({ spec, status: ran.status, code: ran.json().error.code }).toEqual({ spec, status: exit, code })
      expect(ran.json().error.message).toMatch(message)
      expect(state(home)).toEqual(before)
    }
  })

  it('leaves no plugin folder behind when the first install fails', () => {
    const work = testdir()
    packages(work)
    const home = testdir()
    const ran = omh(['plugins', 'add', './empty'], { cwd: work, env: { OMH_HOME: home } })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain('Code: PLUGIN_INVALID')
    // omh's own state sits in the test's home (test/helpers/run.ts); no plugin folder beside it.
    expect(readdirSync(home).filter((name) => name !== '.state')).toEqual([])
  })

  it('rm names what is installed when the name is not', () => {
    const home = testdir()
    const ran = omh(['plugins', 'rm', 'omh-renderer-shuot'], { env: { OMH_HOME: home } })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain(`No plugin called omh-renderer-shuot is installed in ${path.join(home, 'plugins')}.`)
    expect(ran.stderr).toContain('Code: PLUGIN_NOT_INSTALLED')
  })
})

describe('a plugin folder whose package.json is broken', () => {
  it('is named, with its line, by omh plugins and omh plugins add, and nothing is installed', () => {
    const home = testdir({ 'plugins/package.json': '{\n  "dependencies": {\n    "x": 1,\n  }\n' })
    const before = readFileSync(path.join(home, 'plugins/package.json'), 'utf8')
    for (const args of [['plugins'], ['plugins', 'add', 'whatever'], ['plugins', 'rm', 'x']]) {
      const ran = omh(args, { env: { OMH_HOME: home } })
      expect({ args, status: ran.status }).toEqual({ args, status: 2 })
      expect(ran.stderr).toContain(`${path.join(home, 'plugins/package.json')} has 1 problem:`)
      expect(ran.stderr).toMatch(/line 4/)
      expect(ran.stderr).toContain('Code: SETTINGS_INVALID')
      expect(ran.stderr).not.toMatch(/\n\s+at /)
    }
    expect(readFileSync(path.join(home, 'plugins/package.json'), 'utf8')).toBe(before)
    expect(readdirSync(path.join(home, 'plugins'))).toEqual(['package.json'])
  })
})
