import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { testdir } from '@omh/test-utils'
import { isOmhError, type OmhError } from '@omh/plugin-api'
import { findHooks, parseHookFile, resolveHooks } from './hooks.js'

const parse = (source: string, name = 'h') => parseHookFile(name, `/hooks/${name}.json`, source)
const problems = (source: string, name = 'h') => {
  const parsed = parse(source, name)
  return parsed.ok ? [] : parsed.problems.map((p) => `${p.line ?? '-'}:${p.column ?? '-'} ${p.path ?? '(file)'}: ${p.message}${p.suggestion ? ` (${p.suggestion})` : ''}`)
}

describe('a hook file', () => {
  it('reads a moment, tools, a guard and one action, and derives the fields it reads', () => {
    const parsed = parse(
      JSON.stringify({ on: 'after-tool', tools: ['edit'], when: 'test -f "$OMH_TOOL_FILE"', inject: 'Edited ${OMH_TOOL_FILE:-a file}; `make lint` — ✓' }),
      'lint-hint',
    )
    expect(parsed).toEqual({
      ok: true,
      hook: {
        name: 'lint-hint',
        on: 'after-tool',
        tools: ['edit'],
        when: 'test -f "$OMH_TOOL_FILE"',
        action: { kind: 'inject', text: 'Edited ${OMH_TOOL_FILE:-a file}; `make lint` — ✓' },
        fields: ['tool-file'],
        source: '/hooks/lint-hint.json',
      },
    })
  })

  it('lets `run` and `when` be any shell, `$(…)` included', () => {
    const parsed = parse(JSON.stringify({ on: 'turn-end', when: '[ -n "$(git status --porcelain)" ]', run: 'echo "$HOME" >> /tmp/log' }))
    expect(parsed.ok).toBe(true)
  })

  it('refuses two actions, naming both', () => {
    expect(problems('{\n  "on": "before-tool",\n  "inject": "careful",\n  "refuse": "no"\n}')).toEqual([
      '4:3 refuse: a hook does one thing: `run` a command, `inject` advice or `refuse` the call; this one has `inject` and `refuse`, so split it into 2 files',
    ])
  })

  it('refuses a refusal where there is no call to block', () => {
    expect(problems('{ "on": "turn-end", "refuse": "not yet" }')).toEqual([
      '1:21 refuse: `refuse` blocks a call, so it belongs to `before-tool`; this hook is on `turn-end`, where there is no call to block',
    ])
  })

  it('refuses an unknown tool word with a suggestion', () => {
    expect(problems('{ "on": "before-tool", "tools": ["shell", "bash"], "run": "true" }')).toEqual([
      '1:43 tools[1]: expected one of "edit", "read", "shell", "search", found the string "bash"',
    ])
    expect(problems('{ "on": "before-tool", "tools": ["serch"], "run": "true" }')[0]).toMatch(/found the string "serch" \(search\)$/)
  })

  it('refuses `$(…)` in text the agent reads, saying why', () => {
    expect(problems('{ "on": "after-tool", "inject": "You are on $(git branch --show-current)" }')).toEqual([
      '1:23 inject: `$(…)` would run a command inside text the agent reads; omh refuses it. Compute it in `when`, or make this a `run` hook',
    ])
  })

  it('refuses an empty body in each of its forms', () => {
    expect(problems('')).toEqual(['1:1 (file): not valid JSON: the text ends before the JSON does'])
    expect(problems('{}')).toEqual(['-:- on: required, but missing', '-:- (file): a hook does nothing without `run`, `inject` or `refuse`'])
    expect(problems('{ "on": "turn-end", "run": "  " }')).toEqual(['1:21 run: `run` is empty, so this hook does nothing'])
    expect(problems('{ "on": "turn-end", "when": "", "run": "x" }')).toEqual(['1:21 when: `when` is empty; leave it out to fire every time'])
  })

  it('refuses what only makes sense around a tool at a moment without one', () => {
    expect(problems('{ "on": "session-start", "tools": ["read"], "inject": "Look at $OMH_TOOL_FILE" }')).toEqual([
      '1:26 tools: `tools` narrows a tool call, and `session-start` has none; leave it out',
      '1:45 inject: `$OMH_TOOL_FILE` is set only around a tool call, and `session-start` has none',
    ])
  })

  it('refuses unknown keys, an empty or repeated tool list, bad JSON and a bad name', () => {
    expect(problems('{ "event": "turn-end", "on": "turn-end", "run": "x" }')).toEqual(['1:3 event: unknown key'])
    expect(problems('{ "on": "before-tool", "tools": [], "run": "x" }')).toEqual(['1:24 tools: `tools` is empty; leave it out to mean every tool'])
    expect(problems('{ "on": "before-tool", "tools": ["edit", "edit"], "run": "x" }')).toEqual(['1:42 tools[1]: `edit` is listed twice'])
    expect(problems('{ "on": "turn-end",\n  "run": "x", }')).toEqual(['2:15 (file): not valid JSON: Expected double-quoted property name'])
    expect(problems('{ "on": "turn-end",\n  "run": x }')).toEqual(["2:10 (file): not valid JSON: Unexpected token 'x'"])
    expect(problems('["turn-end"]')).toEqual(['-:- (file): a hook file holds one JSON object: `on`, optional `tools` and `when`, and one of `run`, `inject`, `refuse`'])
    expect(problems('{ "on": "turn-end", "run": "x" }', 'My Hook')[0]).toMatch(/^-:- \(file\): "My Hook" cannot name a hook/)
  })
})

describe('a hook file that is not JSON', () => {
  it('says where, for every kind of syntax error', () => {
    expect(problems('{ "on": "turn-end" "run": "x" }')).toEqual(["1:20 (file): not valid JSON: Expected ',' or '}' after property value"])
    expect(problems('{ "on": "turn-end",\n  "run": "x"\n')).toEqual(["3:1 (file): not valid JSON: Expected ',' or '}' after property value"])
    expect(problems('{ "on": "turn-end",\n  "run": ')).toEqual(['2:10 (file): not valid JSON: the text ends before the JSON does'])
  })

  it('never repeats what the file holds', () => {
    const secret = 'SECRET_TOKEN=0123456789abcdefghijklmnopqrstuvwxyz'
    for (const text of [secret, `{ "on": "turn-end", "run": ${secret} }`, `\u0000${secret}`, `\u001b[31m${secret}`]) {
      const [said] = problems(text)
      expect(said).toMatch(/^1:\d+ \(file\): not valid JSON: /)
      expect(said).not.toContain('0123456789')
      expect(said).not.toMatch(/\p{Cc}/u)
    }
  })
})

describe('the hooks of a profile', () => {
  const hook = (run: string) => JSON.stringify({ on: 'turn-end', run })

  it('lets a project hook shadow a catalogue hook of the same name', async () => {
    const dir = testdir({
      'home/hooks/test.json': hook('npm test'),
      'home/hooks/fmt.json': hook('npm run fmt'),
      'repo/.omh/hooks/test.json': hook('make test'),
      'home/hooks/notes.txt': 'not a hook',
    })
    const hooks = await resolveHooks({ omhHome: path.join(dir, 'home'), projectDir: path.join(dir, 'repo') })
    expect(hooks.map((h) => [h.name, h.action, path.relative(dir, h.source)])).toEqual([
      ['fmt', { kind: 'run', command: 'npm run fmt' }, 'home/hooks/fmt.json'],
      ['test', { kind: 'run', command: 'make test' }, 'repo/.omh/hooks/test.json'],
    ])
  })

  it('skips hidden files in either hooks folder, as every catalogue folder does', async () => {
    const dir = testdir({
      'home/hooks/.draft.json': '{ not yet',
      'home/hooks/fmt.json': hook('npm run fmt'),
      'repo/.omh/hooks/.fmt.json': hook('shadow'),
    })
    const found = await findHooks({ omhHome: path.join(dir, 'home'), projectDir: path.join(dir, 'repo') })
    expect(found.hooks.map((h) => path.relative(dir, h.file))).toEqual(['home/hooks/fmt.json'])
    const hooks = await resolveHooks({ omhHome: path.join(dir, 'home'), projectDir: path.join(dir, 'repo') })
    expect(hooks.map((h) => h.action)).toEqual([{ kind: 'run', command: 'npm run fmt' }])
  })

  it('follows `[use] hooks` in its order, and never reads what it leaves out', async () => {
    const dir = testdir({ 'hooks/a.json': hook('a'), 'hooks/b.json': hook('b'), 'hooks/broken.json': '{' })
    const hooks = await resolveHooks({ omhHome: dir, allow: ['b', 'a', 'missing'] })
    expect(hooks.map((h) => h.name)).toEqual(['b', 'a'])
    expect(await resolveHooks({ omhHome: dir, allow: [] })).toEqual([])
  })

  it('reports every problem of every selected file at once', async () => {
    const dir = testdir({ 'hooks/a.json': '{ "on": "turn-end" }', 'hooks/b.json': '{ "on": "later", "run": "x" }' })
    let error: OmhError | undefined
    try {
      await resolveHooks({ omhHome: dir })
    } catch (e) {
      if (isOmhError(e)) error = e
    }
    expect(error?.code).toBe('HOOK_INVALID')
    expect(error?.exit).toBe(2)
    expect(error?.message).toBe('2 hook files have 2 problems:')
    expect(error?.problems.map((p) => `${path.basename(p.file!)} ${p.path ?? ''}`.trim())).toEqual(['a.json', 'b.json on'])
  })
})
