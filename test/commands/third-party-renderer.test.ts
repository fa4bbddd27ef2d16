import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

// A renderer that exists only in this project's node_modules: not part of the
// workspace, not named by omh's defaults. omh must find it through the
// project's settings exactly as it finds its own.
const SHOUT = `
export default {
  kind: 'renderer',
  apiVersion: 1,
  meta: { name: 'omh-renderer-shout', version: '3.1.4' },
  formats: ['shout'],
  classes: ['rules'],
  render(input) {
    const text = input.items.map((s) => s.text.toUpperCase()).join('\\n')
    return { files: [{ kind: 'file', guest: input.binding.path, content: text }], dropped: [] }
  },
}
`

describe('a third-party renderer', () => {
  it('is found through the project settings and used by omh render', () => {
    const repo = gitRepo({
      'AGENTS.md': 'be kind\n',
      '.omh/settings.toml': 'plugins = ["omh-renderer-shout"]\n',
      'node_modules/omh-renderer-shout/package.json': JSON.stringify({
        name: 'omh-renderer-shout',
        version: '3.1.4',
        type: 'module',
        exports: { '.': { import: './index.js' } },
      }),
      'node_modules/omh-renderer-shout/index.js': SHOUT,
    })
    const home = testdir({
      'adapters/loud.toml': 'name = "loud"\nbin = "loud"\ninstall = "true"\n[capabilities.rules]\npath = "/work/LOUD.md"\nrender = "shout"\n',
    })

    // A repository's settings that name plugins run only once the user trusts them.
    expect(omh(['trust'], { cwd: repo, env: { OMH_HOME: home } }).status).toBe(0)
    const plugins = omh(['plugins', '--json'], { cwd: repo, env: { OMH_HOME: home } })
    expect(plugins.status).toBe(0)
    expect(plugins.json().result.plugins).toContainEqual(
      expect.objectContaining({
        name: 'omh-renderer-shout',
        version: '3.1.4',
        kind: 'renderer',
        formats: ['shout'],
        namedBy: { file: path.join(repo, '.omh/settings.toml'), layer: 'shared' },
      }),
    )

    const ran = omh(['render', 'loud', '--json'], { cwd: repo, env: { OMH_HOME: home } })
    expect(ran.status).toBe(0)
    const rules = ran.json().result.capabilities[0]
    expect(rules).toMatchObject({ capability: 'rules', render: 'shout', renderer: { name: 'omh-renderer-shout', version: '3.1.4' } })
    expect(rules.files).toEqual([expect.objectContaining({ guest: '/work/LOUD.md', kind: 'file', bytes: 'BE KIND\n'.length })])
  })
})

// A renderer that says which zod/mini it was handed: a zod of its own answers `own`.
const WHICH_ZOD = `
import * as z from 'zod/mini'
export default {
  kind: 'renderer',
  apiVersion: 1,
  meta: { name: 'omh-renderer-which', version: '1.0.0' },
  formats: ['which'],
  classes: ['rules'],
  render(input) {
    const text = z.own ?? \`omh's: \${typeof z.strictObject}\`
    return { files: [{ kind: 'file', guest: input.binding.path, content: text }], dropped: [] }
  },
}
`

describe("the packages a plugin shares with omh", () => {
  const bundledZod = (JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../node_modules/zod/package.json'), 'utf8')) as { version: string }).version

  const rendered = (zodVersion: string): string => {
    const repo = gitRepo({
      'AGENTS.md': 'be kind\n',
      '.omh/settings.toml': 'plugins = ["omh-renderer-which"]\n',
      'node_modules/omh-renderer-which/package.json': JSON.stringify({ name: 'omh-renderer-which', version: '1.0.0', type: 'module', exports: { '.': { import: './index.js' } } }),
      'node_modules/omh-renderer-which/index.js': WHICH_ZOD,
      'node_modules/zod/package.json': JSON.stringify({ name: 'zod', version: zodVersion, type: 'module', exports: { './mini': { import: './mini.js' } } }),
      'node_modules/zod/mini.js': 'export const own = "its own"\n',
    })
    const home = testdir({ 'adapters/which.toml': 'name = "which"\nbin = "which"\ninstall = "true"\n[capabilities.rules]\npath = "/work/WHICH.md"\nrender = "which"\n' })
    expect(omh(['trust'], { cwd: repo, env: { OMH_HOME: home } }).status).toBe(0)
    const ran = omh(['render', 'which', '--content', '--json'], { cwd: repo, env: { OMH_HOME: home } })
    expect(ran.status).toBe(0)
    return ran.json().result.capabilities[0].files[0].content
  }

  it("hands a plugin omh's zod where its own resolves to the version omh bundled", () => {
    expect(rendered(bundledZod)).toBe("omh's: function")
  })

  it('leaves a plugin its own zod at any other version', () => {
    expect(rendered('0.0.1-other')).toBe('its own')
  })
})
