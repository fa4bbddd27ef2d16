import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

const json = (value: unknown) => JSON.stringify(value, null, 2)

/** Seven hooks: every moment, every action, a tool narrowing each harness lacks, text that breaks naive quoting. */
const PROFILE = {
  'hooks/orient.json': json({ on: 'session-start', inject: 'Session $OMH_SESSION: read "AGENTS.md" — `make help`, $$5 ✓' }),
  'hooks/fetch.json': json({ on: 'session-start', run: 'git fetch --quiet || true' }),
  'hooks/test-at-end.json': json({ on: 'turn-end', run: 'npm test' }),
  'hooks/remind.json': json({ on: 'turn-end', inject: 'Did you run the tests?' }),
  'hooks/no-force-push.json': json({ on: 'before-tool', tools: ['shell'], when: 'printf %s "$OMH_TOOL_COMMAND" | grep -q -- --force', refuse: 'No force-push.' }),
  'hooks/format.json': json({ on: 'after-tool', tools: ['edit'], run: 'prettier --write "$OMH_TOOL_FILE"' }),
  'hooks/search-hint.json': json({ on: 'after-tool', tools: ['search'], inject: 'Search results are partial.' }),
}

describe('omh render with hooks', () => {
  it('gives each harness exactly the hooks it can express and names the others with reasons', () => {
    const dir = testdir(PROFILE)
    const dropped = (harness: string) => {
      const ran = omh(['render', harness, '--json'], { env: { OMH_HOME: dir } })
      expect(ran.status, ran.stderr).toBe(0)
      const result = ran.json().result
      expect(result.capabilities.find((c: { capability: string }) => c.capability === 'hooks').files.length).toBeGreaterThan(0)
      return result.dropped.map((d: { name: string; reason: string }) => `${d.name} (${d.reason})`)
    }
    expect(dropped('claude')).toEqual(['remind (no way to inject text at `turn-end`)'])
    expect(dropped('codex')).toEqual([
      'format (no `tool-file` field)',
      'remind (no way to inject text at `turn-end`)',
      'search-hint (no `search` tool)',
    ])
    // OpenCode advises at session start through the system prompt, and searches with grep and glob.
    expect(dropped('opencode')).toEqual(['remind (no way to inject text at `turn-end`)'])
  })

  it('prints one line for what was dropped, and names each item with --verbose', () => {
    const dir = testdir(PROFILE)
    const plain = omh(['render', 'codex'], { env: { OMH_HOME: dir } })
    expect(plain.status).toBe(0)
    expect(plain.stderr).toBe('omh: codex — dropped 3 hooks (3 reasons; --verbose names each)\n')
    const verbose = omh(['render', 'codex', '--verbose'], { env: { OMH_HOME: dir } })
    expect(verbose.stderr).toBe(
      [
        'omh: codex — dropped 3 hooks (3 reasons)',
        '  hooks: format (no `tool-file` field)',
        '  hooks: remind (no way to inject text at `turn-end`)',
        '  hooks: search-hint (no `search` tool)',
        '',
      ].join('\n'),
    )
    expect(plain.stdout).toContain('/home/agent/.codex/hooks.json')
    expect(plain.stdout).toContain('/home/agent/.codex/config.toml')
  })

  it('drops every hook, unsupported, for a harness without [capabilities.hooks]', () => {
    const dir = testdir({
      ...PROFILE,
      'adapters/plain.toml': 'name = "plain"\nbin = "plain"\ninstall = "true"\n[capabilities.rules]\npath = "/work/AGENTS.md"\nrender = "concat"\n',
    })
    const ran = omh(['render', 'plain'], { env: { OMH_HOME: dir } })
    expect(ran.status).toBe(0)
    expect(ran.stderr).toBe('omh: plain — dropped 7 hooks (unsupported)\n')
  })

  it('refuses a hooks binding without events as an adapter error', () => {
    const dir = testdir({ 'adapters/h.toml': 'name = "h"\nbin = "h"\ninstall = "true"\n[capabilities.hooks]\npath = "$HOME/h.json"\nrender = "claude-settings"\n' })
    const ran = omh(['render', 'h'], { env: { OMH_HOME: dir } })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain('capabilities.hooks.events: required, but missing')
    expect(ran.stderr).toContain('Code: ADAPTER_INVALID')
  })

  it('lets the repository shadow a catalogue hook and `[use] hooks` choose', () => {
    const dir = testdir(PROFILE)
    const repo = gitRepo({
      '.omh/hooks/remind.json': json({ on: 'after-tool', inject: 'Check the diff.' }),
      '.omh/settings.toml': '[use]\nhooks = ["remind", "fetch"]\n',
    })
    const ran = omh(['render', 'claude', '--json'], { cwd: repo, env: { OMH_HOME: dir } })
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.json().result.dropped).toEqual([])
  })
})

describe('bad hook files', () => {
  const cases: [string, string, RegExp][] = [
    ['two actions', json({ on: 'before-tool', inject: 'careful', refuse: 'no' }), /refuse: a hook does one thing: `run` a command, `inject` advice or `refuse` the call; this one has `inject` and `refuse`/],
    ['a refusal at turn-end', json({ on: 'turn-end', refuse: 'not yet' }), /refuse: `refuse` blocks a call, so it belongs to `before-tool`; this hook is on `turn-end`/],
    ['an unknown tool word', json({ on: 'before-tool', tools: ['bash'], run: 'true' }), /tools\[0\]: expected one of "edit", "read", "shell", "search", found the string "bash"/],
    ['`$(…)` in its text', json({ on: 'after-tool', inject: 'On $(git branch --show-current).' }), /inject: `\$\(…\)` would run a command inside text the agent reads; omh refuses it/],
    ['an empty body', '{}', /on: required, but missing\n.*a hook does nothing without `run`, `inject` or `refuse`/],
  ]

  for (const [what, content, problem] of cases) {
    it(`refuses ${what} with the file and field, exit 2`, () => {
      const dir = testdir({ 'hooks/bad.json': content })
      const file = path.join(dir, 'hooks/bad.json')
      const ran = omh(['render', 'claude'], { env: { OMH_HOME: dir } })
      expect(ran.status).toBe(2)
      expect(ran.stderr).toContain(`Error: ${file} has`)
      expect(ran.stderr).toMatch(problem)
      expect(ran.stderr).toContain('Code: HOOK_INVALID')
      const doc = omh(['render', 'claude', '--json'], { env: { OMH_HOME: dir } }).json()
      expect(doc.status).toBe(2)
      expect(doc.error.code).toBe('HOOK_INVALID')
      expect(doc.error.problems.every((p: { file: string }) => p.file === file)).toBe(true)
    })
  }
})
