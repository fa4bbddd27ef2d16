import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh, ROOT } from '../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

const version = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version

describe('the command line', () => {
  it('prints its version', () => {
    const ran = omh(['--version'])
    expect(ran.status).toBe(0)
    expect(ran.stdout).toMatch(new RegExp(`^omh/${version.replaceAll('.', '\\.')} `))
  })

  it('answers every --json with exactly one document on stdout', () => {
    const home = testdir()
    for (const args of [['adapters', 'ls'], ['adapters', 'show', 'claude'], ['plugins'], ['render', 'claude']]) {
      const ran = omh([...args, '--json'], { env: { OMH_HOME: home } })
      expect(ran.status, args.join(' ')).toBe(0)
      const doc = ran.json()
      expect(doc.status).toBe(0)
      expect(doc.warnings).toEqual([])
    }
  })

  it('shows the arguments an adapter gives every session', () => {
    const ran = omh(['adapters', 'show', 'claude'], { env: { OMH_HOME: testdir() } })
    expect(ran.status).toBe(0)
    expect(ran.stdout).toMatch(/^ *args +--allowedTools=Grep\(\.\/\*\*\),Glob\(\.\/\*\*\) +\(every session passes these before yours\)$/m)
    expect(omh(['adapters', 'show', 'codex'], { env: { OMH_HOME: testdir() } }).stdout).not.toMatch(/^ *args /m)
  })

  it('treats an unknown word as a harness it does not know, exit 2', () => {
    const ran = omh(['nosuchharness'], { env: { OMH_HOME: testdir() } })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toMatch(/No harness is called "nosuchharness"/)
  })

  it('refuses an unknown flag as usage, exit 2, without a stack trace', () => {
    const ran = omh(['plugins', '--bogus'])
    expect(ran.status).toBe(2)
    expect(ran.stderr).toMatch(/^Error: Nonexistent flag: --bogus\n/)
    expect(ran.stderr).toMatch(/Code: USAGE/)
    expect(ran.stderr).not.toMatch(/ at .*\.js:\d+/)
  })

  it('colours only when asked or on a terminal, and never under NO_COLOR', () => {
    const home = testdir()
    const esc = '\u001b['
    expect(omh(['adapters', 'ls'], { env: { OMH_HOME: home } }).stdout).not.toContain(esc)
    expect(omh(['adapters', 'ls', '--color', 'always'], { env: { OMH_HOME: home } }).stdout).toContain(esc)
    expect(omh(['adapters', 'ls', '--color', 'always', '--json'], { env: { OMH_HOME: home } }).stdout).not.toContain(esc)
  })
})

describe('words from files on a terminal', () => {
  const CLEAR = '\u001b[2J'
  const TITLE = '\u001b]0;pwned\u0007'
  // Left once omh's own colours are taken out: anything a terminal would act on but tab and newline.
  // eslint-disable-next-line no-control-regex
  const acts = (text: string) => /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(text.replaceAll(/\u001b\[(?:1|2|22|31|32|33|36|39)m/g, ''))

  it('prints a file name, a [use] name and adapter values escaped, never as commands to the terminal', () => {
    const dir = testdir({ [`bad${CLEAR}.toml`]: 'name = 3\n' })
    const validate = omh(['adapters', 'validate', `bad${CLEAR}.toml`, '--color', 'always'], { cwd: dir })
    expect(validate.status).toBe(2)
    expect(validate.stderr).toContain('bad\\x1b[2J.toml')
    expect(acts(validate.stderr)).toBe(false)

    // TOML takes control characters only as escapes.
    const toml = (text: string) => JSON.stringify(text)
    const home = testdir({
      'settings.toml': `[use]\nrules = [${toml(`x${TITLE}`)}]\n`,
      'adapters/h.toml': `name = "h"\nbin = ${toml(`h${TITLE}`)}\ninstall = ${toml(`echo ${CLEAR}`)}\n[capabilities.rules]\npath = "/work/AGENTS.md"\nrender = "concat"\n`,
    })
    const render = omh(['render', 'claude', '--color', 'always'], { env: { OMH_HOME: home } })
    expect(render.status).toBe(2)
    expect(render.stderr).toContain('Code: USE_UNKNOWN')
    expect(render.stderr).toContain('x\\x1b]0;pwned\\x07')
    expect(acts(render.stderr)).toBe(false)
    const show = omh(['adapters', 'show', 'h', '--color', 'always'], { env: { OMH_HOME: home } })
    expect(show.status).toBe(0)
    expect(show.stdout).toContain('h\\x1b]0;pwned\\x07')
    expect(acts(show.stdout)).toBe(false)
  })
})

describe('a plugin that prints', () => {
  const NOISY = `
console.log('noisy: imported')
console.info('noisy: info')
process.stdout.write('noisy: raw\\n')
export default {
  kind: 'renderer', apiVersion: 1, meta: { name: 'noisy', version: '1.0.0' }, formats: ['noisy'], classes: ['rules'],
  render(input) {
    console.log('noisy: rendering')
    return { files: [{ kind: 'file', guest: input.binding.path, content: 'x' }], dropped: [] }
  },
}
`
  const home = () =>
    testdir({
      'settings.toml': 'plugins = ["./noisy.mjs"]\n',
      'noisy.mjs': NOISY,
      'adapters/loud.toml': 'name = "loud"\nbin = "loud"\ninstall = "true"\n[capabilities.rules]\npath = "/work/LOUD.md"\nrender = "noisy"\n',
    })

  it('leaves stdout to the answer: what a plugin prints goes to stderr, with --json and without', () => {
    const env = { OMH_HOME: home() }
    for (const args of [['plugins', '--json'], ['render', 'loud', '--json'], ['adapters', 'ls', '--json']]) {
      const ran = omh(args, { env, cwd: testdir() })
      expect(ran.status, args.join(' ')).toBe(0)
      expect(ran.json().status).toBe(0)
      expect(ran.stderr).toContain('noisy: imported\nnoisy: info\nnoisy: raw\n')
    }
    const render = omh(['render', 'loud'], { env, cwd: testdir() })
    expect(render.stdout).not.toContain('noisy:')
    expect(render.stderr).toContain('noisy: rendering')
  })
})

describe('settings that name plugins', () => {
  it('says which file named a plugin that is not installed, and what to do', () => {
    const repo = gitRepo({ '.omh/settings.toml': 'plugins = ["omh-renderer-nowhere"]\n' })
    const env = { OMH_HOME: testdir() }
    expect(omh(['trust'], { cwd: repo, env }).status).toBe(0)
    const ran = omh(['plugins'], { cwd: repo, env })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain(`${path.join(repo, '.omh/settings.toml')} names the plugin "omh-renderer-nowhere", which is not installed.`)
    expect(ran.stderr).toContain(`Run \`npm install omh-renderer-nowhere\` in ${path.join(repo, '.omh')}`)
  })

  it('says which file named a module that is not a plugin', () => {
    const repo = gitRepo({
      '.omh/settings.toml': 'plugins = ["./not-a-plugin.mjs"]\n',
      '.omh/not-a-plugin.mjs': 'export default { hello: "world" }\n',
    })
    const env = { OMH_HOME: testdir() }
    expect(omh(['trust'], { cwd: repo, env }).status).toBe(0)
    const ran = omh(['plugins'], { cwd: repo, env })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain(`./not-a-plugin.mjs (named in ${path.join(repo, '.omh/settings.toml')}) is not an omh plugin`)
    expect(ran.stderr).toMatch(/Code: PLUGIN_INVALID/)
  })

  it('reports an unknown settings key with its line', () => {
    const home = testdir({ 'settings.toml': 'runtime = "auto"\nplugin = []\n' })
    const ran = omh(['plugins'], { env: { OMH_HOME: home } })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain('! line 2, col 1  plugin: unknown key — did you mean "plugins"?')
  })
})
