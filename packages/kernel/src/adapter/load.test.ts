import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { testdir } from '@omh/test-utils'
import { checkAdapterFile, toAdapter } from './load.js'

const check = async (text: string, name?: string) => {
  const dir = testdir({ 'a.toml': text })
  return checkAdapterFile(path.join(dir, 'a.toml'), name)
}

describe('adapter schema', () => {
  it('lists a typo, a wrong type and a missing render at once, each with its line', async () => {
    const { problems } = await check(
      ['name = "x"', 'bin = 3', 'install = "i"', '[capabilities.rules]', 'path = "/work/AGENTS.md"', 'rendr = "concat"'].join('\n'),
    )
    expect(problems.map((p) => [p.line, p.path, p.message, p.suggestion])).toEqual([
      [2, 'bin', 'expected a string, found the number 3', undefined],
      [4, 'capabilities.rules.render', 'required, but missing', undefined],
      [6, 'capabilities.rules.rendr', 'unknown key', 'render'],
    ])
  })

  it('refuses a kept key that would never point the harness at the credential proxy, naming its line', async () => {
    const head = ['name = "x"', 'bin = "x"', 'install = "i"', '[capabilities.rules]', 'path = "/work/AGENTS.md"', 'render = "concat"', '[[keys]]', 'variable = "K"', 'header = "authorization"', 'upstream = "https://api.example"']
    const { problems } = await check([...head, 'args = ["-c", "url=nowhere"]'].join('\n'))
    expect(problems.map((p) => [p.line, p.path, p.message])).toEqual([[7, 'keys[0]', expect.stringContaining('needs base_url, or args or env with {url}')]])
    expect((await check([...head, 'args = ["-c", "url={url}"]'].join('\n'))).problems).toEqual([])
    expect((await check([...head, 'base_url = "K_URL"'].join('\n'))).problems).toEqual([])
    expect((await check([...head, `env = { CONF = '{"url":"{url}"}' }`].join('\n'))).problems).toEqual([])
  })

  it('refuses a kept login whose file the adapter does not name as a token, or whose refresh is no https URL', async () => {
    const head = ['name = "x"', 'bin = "x"', 'install = "i"', 'token = ["$HOME/.x/login.json"]', '[capabilities.rules]', 'path = "/work/AGENTS.md"', 'render = "concat"', '[[logins]]', 'access = "tokens.access"', 'hosts = ["api.example"]']
    const { problems } = await check([...head, 'file = "$HOME/.x/other.json"', 'refresh_url = "http://auth.example/token"'].join('\n'))
    expect(problems.map((p) => [p.path, p.message])).toEqual([
      ['logins[0].file', expect.stringContaining('is none of `token`')],
      ['logins[0].refresh_url', expect.stringContaining('an https:// URL')],
    ])
    const unnamed = await check([...head, 'file = "$HOME/.x/other.json"'].join('\n'))
    expect(unnamed.problems.map((p) => [p.line, p.path, p.message])).toEqual([[11, 'logins[0].file', expect.stringContaining('is none of `token`')]])
    expect((await check([...head, 'file = "$HOME/.x/login.json"', 'refresh = "tokens.refresh"', 'refresh_url = "https://auth.example/oauth/token"'].join('\n'))).problems).toEqual([])
  })

  it('takes the release an adapter was checked against when `install` installs that version, and refuses it with its line when not', async () => {
    const head = ['name = "x"', 'bin = "x"', 'install = "npm install -g @x/cli@1.2.3"']
    const tail = ['[capabilities.rules]', 'path = "/work/AGENTS.md"', 'render = "concat"']
    const pinned = await check([...head, 'release = { package = "@x/cli", version = "1.2.3" }', ...tail].join('\n'))
    expect(pinned.problems).toEqual([])
    expect(toAdapter('a.toml', pinned.data!).release).toEqual({ package: '@x/cli', version: '1.2.3' })
    const stale = await check([...head, 'release = { package = "@x/cli", version = "1.2.4" }', ...tail].join('\n'))
    expect(stale.problems.map((p) => [p.line, p.path, p.message])).toEqual([[4, 'release.version', 'is not what `install` installs: it should name @x/cli@1.2.4']])
  })

  it('refuses `token` tables beside a kept login as problems, never as an internal error', async () => {
    const text = ['name = "x"', 'bin = "x"', 'install = "i"', '[capabilities.rules]', 'path = "/work/AGENTS.md"', 'render = "concat"', '[[logins]]', 'file = "$HOME/.x/login.json"', 'access = "a"', 'hosts = ["api.example"]', '[[token]]', 'constructor = [1]', '[token.__proto__]', 'x = 1'].join('\n')
    const { problems } = await check(text)
    expect(problems.map((p) => p.path)).toEqual(expect.arrayContaining(['logins[0].file']))
    expect(problems.find((p) => p.path === 'logins[0].file')?.message).toContain('is none of `token` (none)')
  })

  it('refuses unknown keys at every level', async () => {
    const { problems } = await check(
      [
        'name = "x"',
        'bin = "x"',
        'install = "i"',
        'verison = "1"',
        '[tools]',
        'shel = "Bash"',
        '[capabilities.rule]',
        'path = "/work/AGENTS.md"',
        'render = "concat"',
        '[capabilities.hooks]',
        'path = "$HOME/s.json"',
        'render = "r"',
        '[capabilities.hooks.events]',
        'turn-ends = "Stop"',
        '[capabilities.hooks.inject]',
        'templat = "x"',
      ].join('\n'),
    )
    expect(problems.map((p) => `${p.line} ${p.path} ${p.suggestion ?? ''}`.trim())).toEqual([
      '4 verison',
      '6 tools.shel shell',
      '7 capabilities.rule rules',
      '14 capabilities.hooks.events.turn-ends turn-end',
      '15 capabilities.hooks.inject.template',
      '16 capabilities.hooks.inject.templat template',
    ])
  })

  it('requires events on a hooks binding, and refuses hook maps elsewhere', async () => {
    const { problems } = await check(
      [
        'name = "x"',
        'bin = "x"',
        'install = "i"',
        '[capabilities.hooks]',
        'path = "$HOME/s.json"',
        'render = "r"',
        '[capabilities.mcp]',
        'path = "$HOME/m.json"',
        'render = "m"',
        '[capabilities.mcp.events]',
        'turn-end = "Stop"',
      ].join('\n'),
    )
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'capabilities.hooks.events: required, but missing',
      'capabilities.mcp.events: unknown key',
    ])
  })

  it('refuses an adapter with no capabilities', async () => {
    const { problems } = await check('name = "x"\nbin = "x"\ninstall = "i"\n[capabilities]\n')
    expect(problems.map((p) => p.message)).toEqual(['declares no capabilities, so the harness would see none of your profile'])
  })

  it('reports a TOML syntax error as a located problem', async () => {
    const { problems } = await check('name = "x"\nbin = [\n')
    expect(problems).toHaveLength(1)
    expect(problems[0]!.line).toBeGreaterThanOrEqual(2)
    expect(problems[0]!.message).toMatch(/^not valid TOML: /)
  })

  it('refuses a name that differs from the file it is found by', async () => {
    const { problems } = await check('name = "other"\nbin = "x"\ninstall = "i"\n[capabilities.rules]\npath = "/work/A.md"\nrender = "concat"\n', 'a')
    expect(problems.map((p) => p.path)).toEqual(['name'])
  })

  it('refuses a guest path that escapes the guest home and work dir, names either root, or is not normalised, with line and key', async () => {
    const { problems } = await check(
      [
        'name = "x"',
        'bin = "x"',
        'install = "i"',
        'creds = ["$HOME/.x/", "/work", "/etc/shadow"]',
        'token = ["$HOME/.x/token/"]',
        '[capabilities.rules]',
        'path = "$HOME/../../x"',
        'also = ["/", "$HOME", "/work/", "/home/agentx/a", "/work/a/./b", "$HOME//b", "$HOMEDIR/b", "/work/a,b", "/work/\\u001b[2J"]',
        'render = "concat"',
      ].join('\n'),
    )
    const home = 'the guest home itself; name a file or folder inside it'
    const outside = 'outside the guest home ($HOME, /home/agent) and the work dir (/work), where every staged file and login belongs'
    expect(problems.map((p) => `${p.line} ${p.path}: ${p.message}`)).toEqual([
      `4 creds[1]: "/work" is the work dir itself; name a file or folder inside it`,
      `4 creds[2]: "/etc/shadow" is ${outside}`,
      '5 token[0]: "$HOME/.x/token/" ends in `/`, but names a file',
      '7 capabilities.rules.path: "$HOME/../../x" has a `..` step; write the path it means',
      `8 capabilities.rules.also[0]: "/" is ${outside}`,
      `8 capabilities.rules.also[1]: "$HOME" is ${home}`,
      `8 capabilities.rules.also[2]: "/work/" is the work dir itself; name a file or folder inside it`,
      `8 capabilities.rules.also[3]: "/home/agentx/a" is ${outside}`,
      '8 capabilities.rules.also[4]: "/work/a/./b" is not normalised; write "/work/a/b"',
      '8 capabilities.rules.also[5]: "$HOME//b" is not normalised; write "$HOME/b"',
      '8 capabilities.rules.also[6]: a guest path is absolute or starts with $HOME/',
      '8 capabilities.rules.also[7]: "/work/a,b" holds a comma, which a bind mount cannot name',
      '8 capabilities.rules.also[8]: "/work/\\u001b[2J" holds a control character, which a bind mount cannot name',
    ])
  })

  it('expands $HOME to the guest home in every guest path', async () => {
    const dir = testdir()
    const file = path.join(dir, 'x.toml')
    writeFileSync(
      file,
      'name = "x"\nbin = "x"\ninstall = "i"\ncreds = ["$HOME/.x/"]\n[capabilities.skills]\npath = "$HOME/.x/skills"\nrender = "dir"\n',
    )
    const { data } = await checkAdapterFile(file)
    const adapter = toAdapter(file, data!)
    expect(adapter.creds).toEqual(['/home/agent/.x/'])
    expect(adapter.bindings[0]!.path).toBe('/home/agent/.x/skills')
  })
})

describe('adapter hook protocols', () => {
  const hooksAdapter = (...lines: string[]) =>
    check(
      [
        'name = "x"',
        'bin = "x"',
        'install = "i"',
        '[capabilities.hooks]',
        'path = "$HOME/s.json"',
        'render = "r"',
        '[capabilities.hooks.events]',
        'before-tool = "Pre"',
        ...lines,
      ].join('\n'),
    )

  it('refuses a template that would lose the hook text, or names a placeholder nobody fills', async () => {
    const { problems } = await hooksAdapter('[capabilities.hooks.inject]', 'template = "say {{event}}"', '[capabilities.hooks.refuse]', 'template = "no {{text}} {{reason}}"')
    expect(problems.map((p) => `${p.line} ${p.path}: ${p.message}`)).toEqual([
      '10 capabilities.hooks.inject.template: a template without `{{text}}` would drop the words of every hook it expresses',
      '12 capabilities.hooks.refuse.template: the placeholders a template may hold are `{{text}}` and `{{event}}`',
    ])
  })

  it('refuses an `at` moment the adapter has no event for', async () => {
    const { problems } = await hooksAdapter('[capabilities.hooks.inject]', 'template = "{{text}}"', 'at = ["before-tool", "turn-end"]')
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'capabilities.hooks.inject.at[1]: `turn-end` is not in `events`, so nothing can fire there',
    ])
  })

  it('carries `at` into the binding a renderer receives', async () => {
    const { data, problems } = await hooksAdapter('[capabilities.hooks.inject]', 'template = "{{text}}"', 'at = ["before-tool"]')
    expect(problems).toEqual([])
    expect(toAdapter('/a.toml', data!).bindings[0]!.inject).toEqual({ template: '{{text}}', at: ['before-tool'] })
  })
})

describe('adapter session arguments', () => {
  const withArgs = (...lines: string[]) =>
    check(['name = "x"', 'bin = "x"', 'install = "i"', ...lines, '[capabilities.rules]', 'path = "/work/AGENTS.md"', 'render = "concat"'].join('\n'))

  it('carries `args` into the adapter, in order, and none when absent', async () => {
    const { data, problems } = await withArgs('args = ["--allowedTools=Grep(./**),Glob(./**)", "--verbose"]')
    expect(problems).toEqual([])
    expect(toAdapter('/a.toml', data!).args).toEqual(['--allowedTools=Grep(./**),Glob(./**)', '--verbose'])
    const bare = await withArgs()
    expect(toAdapter('/a.toml', bare.data!).args).toEqual([])
  })

  it('refuses an empty argument and a non-list, with line and key', async () => {
    expect((await withArgs('args = ["--a", ""]')).problems.map((p) => `${p.line} ${p.path}`)).toEqual(['4 args[1]'])
    expect((await withArgs('args = "--a"')).problems.map((p) => `${p.line} ${p.path}`)).toEqual(['4 args'])
  })

  it("refuses a turn that would run the harness without them, and takes one that puts `\"$@\"` where they go", async () => {
    const turn = (run: string) => withArgs('args = ["--a"]', '[turn]', `run = '${run}'`, 'port = 4471')
    const { problems } = await turn('x -p hi')
    expect(problems.map((p) => `${p.line} ${p.path}: ${p.message}`)).toEqual([
      '6 turn.run: runs the harness without the adapter\'s `args`, which every session passes: put `"$@"` where they go (`<bin> "$@" …`)',
    ])
    expect((await turn('x "$@" -p hi')).problems).toEqual([])
    // Without `args` there is nothing to leave out.
    expect((await withArgs('[turn]', "run = 'x -p hi'", 'port = 4471')).problems).toEqual([])
  })
})
