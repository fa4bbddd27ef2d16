import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { GUEST_HOME, GUEST_WORK, type Hook, type ParseSuccess, type RenderOutput, type StagedFile } from '@omh/plugin-api'
import { testRenderer } from '@omh/plugin-kit/testing'
import { bundledFormats } from '@omh/test-utils'
import { AWKWARD, bundledHooks, expectedText, hook, hookFileArbitrary, hookTextArbitrary, hooksByName, hooksInput } from '@omh/test-utils'
import renderer from '../src/index.js'

const context = { guestHome: GUEST_HOME, guestWork: GUEST_WORK }
const claude = await bundledHooks('claude')

const render = (hooks: Hook[], profile = {}) => renderer.render(hooksInput(hooks, claude, profile), context) as RenderOutput
const settingsOf = (out: RenderOutput) => JSON.parse((out.files[0] as StagedFile).content as string)

/** Every command of a settings document, by hook name. */
function commands(out: RenderOutput): Map<string, { event: string; matcher?: string; command: string }> {
  const found = new Map<string, { event: string; matcher?: string; command: string }>()
  for (const [event, groups] of Object.entries(settingsOf(out).hooks as Record<string, { matcher?: string; hooks: { command: string }[] }[]>)) {
    for (const g of groups) {
      const command = g.hooks[0]!.command
      found.set(/^# omh: (.*)$/m.exec(command)![1]!, { event, ...(g.matcher ? { matcher: g.matcher } : {}), command })
    }
  }
  return found
}

const SESSION = 'omh-s01'
const FILE = `/work/src/it's a "$HOME" \`x\` ✓.ts`

/** Payloads as Claude Code writes them to a hook's stdin (hooks reference, harness facts §2.2). */
const payloads = {
  SessionStart: { session_id: 'c0ffee', transcript_path: '/home/agent/.claude/projects/t.jsonl', cwd: '/work', hook_event_name: 'SessionStart', source: 'startup' },
  Stop: { session_id: 'c0ffee', transcript_path: '/home/agent/.claude/projects/t.jsonl', cwd: '/work', hook_event_name: 'Stop', stop_hook_active: false },
  PreToolUse: {
    session_id: 'c0ffee',
    transcript_path: '/home/agent/.claude/projects/t.jsonl',
    cwd: '/work',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'git push --force origin "main" && echo $HOME `id`', description: 'push' },
  },
  PostToolUse: {
    session_id: 'c0ffee',
    transcript_path: '/home/agent/.claude/projects/t.jsonl',
    cwd: '/work',
    hook_event_name: 'PostToolUse',
    tool_name: 'Edit',
    tool_input: { file_path: FILE, old_string: 'a', new_string: 'b' },
    tool_response: { filePath: FILE, success: true },
  },
} as const

/** Runs a generated command the way the harness does: `sh -c`, the payload on stdin. */
function fire(command: string, payload: object, env: Record<string, string> = {}) {
  const r = spawnSync('sh', ['-c', command], { input: JSON.stringify(payload), encoding: 'utf8', env: { ...process.env, OMH_SESSION: SESSION, ...env } })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) }
}

const facts = await bundledFormats()
testRenderer(renderer, {
  ...facts,
  golden: new URL('./golden', import.meta.url),
  roundTrips: [
    {
      format: 'claude-settings',
      capability: 'hooks',
      items: fc.array(hookFileArbitrary, { maxLength: 6 }).map((files) => files.map((f, n) => hook(`hook-${n}`, f))),
      binding: claude.binding,
      adapter: facts.adapters['claude-settings']!,
      order: hooksByName,
      numRuns: 150,
    },
  ],
})

describe('claude-settings: every generated hook does what its definition says', () => {
  // Made here, not with testdir(): the commands write to it across tests.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'omh-hooks-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const log = path.join(dir, 'log')
  const hooks = [
    hook('orient', { on: 'session-start', inject: `Session $OMH_SESSION. ${AWKWARD}` }),
    hook('fetch', { on: 'session-start', run: `echo fetched >> '${log}'` }),
    hook('test-at-end', { on: 'turn-end', run: `echo "tests ran" >> '${log}'` }),
    hook('no-force-push', {
      on: 'before-tool',
      tools: ['shell'],
      when: `printf '%s' "$OMH_TOOL_COMMAND" | grep -q -- '--force'`,
      refuse: 'Force-pushing rewrites history: ${OMH_TOOL_COMMAND:-that} — "no" `ever`, $$0.',
    }),
    hook('lint-hint', { on: 'after-tool', tools: ['edit'], inject: 'You edited $OMH_TOOL_FILE.\nRun `npm run lint` — ✓' }),
    hook('format', { on: 'after-tool', tools: ['edit'], run: `printf '%s\\n' "$OMH_TOOL_FILE" >> '${log}'` }),
    hook('remind', { on: 'turn-end', inject: 'Did you run the tests?' }),
  ]
  const out = render(hooks)
  const byName = commands(out)

  it('writes each hook it can express under its harness event and tool names', () => {
    expect([...byName].map(([name, c]) => `${c.event} ${c.matcher ?? '*'} ${name}`)).toEqual([
      'SessionStart * orient',
      'SessionStart * fetch',
      'Stop * test-at-end',
      'PreToolUse Bash no-force-push',
      'PostToolUse Edit|Write|MultiEdit lint-hint',
      'PostToolUse Edit|Write|MultiEdit format',
    ])
  })

  it('with refusals_last, writes each event\'s refusing hooks after the others, and reports drops in selection order', () => {
    const hooks = [
      hook('refuse-first', { on: 'before-tool', tools: ['shell'], refuse: 'No.' }),
      hook('late-advice', { on: 'turn-end', inject: 'Done?' }),
      hook('guard', { on: 'before-tool', run: 'true' }),
      hook('advise', { on: 'before-tool', tools: ['shell'], inject: 'Careful.' }),
    ]
    const input = { ...hooksInput(hooks, claude), options: { refusals_last: true, events_at_root: false } }
    const ordered = renderer.render(input, context) as RenderOutput
    expect([...commands(ordered)].map(([name, c]) => `${c.event} ${c.matcher ?? '*'} ${name}`)).toEqual(['PreToolUse * guard', 'PreToolUse Bash advise', 'PreToolUse Bash refuse-first'])
    expect(ordered.dropped.map((d) => d.name)).toEqual(['late-advice'])
    // Without the option the selection's order stands.
    expect([...commands(render(hooks))].map(([name]) => name)).toEqual(['refuse-first', 'guard', 'advise'])
  })

  it('with events_at_root, writes the events at the top of a file of hooks alone, and reads them back from there', () => {
    const hooks = [hook('guard', { on: 'before-tool', tools: ['shell'], refuse: 'No.' }), hook('after', { on: 'after-tool', run: 'true' })]
    const input = { ...hooksInput(hooks, claude), options: { events_at_root: true, refusals_last: false } }
    const rendered = renderer.render(input, context) as RenderOutput
    const file = rendered.files[0] as { content: string }
    const document = JSON.parse(file.content) as Record<string, unknown>
    expect(Object.keys(document)).toEqual(['PreToolUse', 'PostToolUse'])
    const parsed = renderer.parse!([{ file: 'hooks.json', content: file.content }], { capability: 'hooks', binding: input.binding, adapter: input.adapter, options: { events_at_root: true, refusals_last: false }, env: {} })
    expect(parsed.ok && parsed.items.hooks?.map((h) => h.name)).toEqual(['guard', 'after'])
    expect(parsed.ok && parsed.left).toEqual([])
    // Nothing to carry: nothing mounted.
    expect(renderer.render({ ...hooksInput([], claude), options: { events_at_root: true, refusals_last: false } }, context)).toEqual({ files: [], dropped: [] })
  })

  it('drops advice at turn-end by name: Claude has no channel for it there', () => {
    expect(out.dropped).toEqual([{ capability: 'hooks', name: 'remind', reason: 'no way to inject text at `turn-end`' }])
  })

  it('injects session-start advice as additionalContext, every character as written', () => {
    const r = fire(byName.get('orient')!.command, payloads.SessionStart)
    expect(r.status).toBe(0)
    expect(r.json()).toEqual({
      hookSpecificOutput: {
        hookEventName: 'SessionStart',
        additionalContext: `Session ${SESSION}. it's "quoted" — \`make help\`, costs $5, back\\slash, {{event}}\nsecond line ✓ 日本語 😀`,
      },
    })
  })

  it('refuses a matching call with the reason, the command read from the payload', () => {
    const r = fire(byName.get('no-force-push')!.command, payloads.PreToolUse)
    expect(r.status).toBe(0)
    expect(r.json()).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'Force-pushing rewrites history: git push --force origin "main" && echo $HOME `id` — "no" `ever`, $0.',
      },
    })
  })

  it('stays silent, exit 0, when its `when` says no', () => {
    const r = fire(byName.get('no-force-push')!.command, { ...payloads.PreToolUse, tool_input: { command: 'git push origin main' } })
    expect([r.status, r.stdout, r.stderr]).toEqual([0, '', ''])
  })

  it('acts as if `when` passed under OMH_HOOK_WHEN_MET, which omh doctor --turn alone sets', () => {
    const r = fire(byName.get('no-force-push')!.command, { ...payloads.PreToolUse, tool_input: { command: 'git push origin main' } }, { OMH_HOOK_WHEN_MET: '1' })
    expect(r.json().hookSpecificOutput.permissionDecision).toBe('deny')
  })

  it('injects after an edit, naming the file exactly, however it is spelled', () => {
    const r = fire(byName.get('lint-hint')!.command, payloads.PostToolUse)
    expect(r.status).toBe(0)
    expect(r.json().hookSpecificOutput).toEqual({ hookEventName: 'PostToolUse', additionalContext: `You edited ${FILE}.\nRun \`npm run lint\` — ✓` })
  })

  it('runs commands with the payload fields set, printing nothing the harness would read', () => {
    for (const [name, payload] of [
      ['fetch', payloads.SessionStart],
      ['test-at-end', payloads.Stop],
      ['format', payloads.PostToolUse],
    ] as const) {
      const r = fire(byName.get(name)!.command, payload)
      expect([name, r.status, r.stdout]).toEqual([name, 0, ''])
    }
    expect(readFileSync(log, 'utf8')).toBe(`fetched\ntests ran\n${FILE}\n`)
  })

  it('never lets `run` block or advise: its stdout goes to stderr and exit 2 becomes 1', () => {
    const [loud] = commands(render([hook('loud', { on: 'before-tool', run: `echo '{"decision":"block","reason":"x"}'; exit 2` })])).values()
    const r = fire(loud!.command, payloads.PreToolUse)
    expect([r.status, r.stdout, r.stderr]).toEqual([1, '', '{"decision":"block","reason":"x"}\n'])
  })

  it('reads an absent or null field as empty', () => {
    const [c] = commands(render([hook('h', { on: 'before-tool', inject: '[${OMH_TOOL_FILE:-none}] [$OMH_TOOL_FILE]' })])).values()
    expect(fire(c!.command, payloads.PreToolUse).json().hookSpecificOutput.additionalContext).toBe('[none] []')
    expect(fire(c!.command, { ...payloads.PreToolUse, tool_input: { file_path: null } }).json().hookSpecificOutput.additionalContext).toBe('[none] []')
  })

  it('says any text exactly as omh reads it, for any text', () => {
    fc.assert(
      fc.property(hookTextArbitrary, fc.constantFrom('inject', 'refuse'), (text, kind) => {
        const [c] = commands(render([hook('t', { on: 'before-tool', [kind]: text })])).values()
        const r = fire(c!.command, payloads.PreToolUse, { OMH_SESSION: '' })
        const said = kind === 'inject' ? r.json().hookSpecificOutput.additionalContext : r.json().hookSpecificOutput.permissionDecisionReason
        return r.status === 0 && said === expectedText(text, { OMH_TOOL_COMMAND: payloads.PreToolUse.tool_input.command, OMH_SESSION: '' })
      }),
      { numRuns: 40 },
    )
  }, 60_000)
})

describe('claude-settings: what else the file carries', () => {
  const server = (name: string) => ({ name, transport: 'stdio' as const, command: 'node', args: [], env: {} })

  it('approves exactly the MCP servers omh writes to the project .mcp.json', async () => {
    const withMcp = {
      ...claude,
      adapter: { ...claude.adapter, bindings: [...claude.adapter.bindings, { ...claude.binding, capability: 'mcp' as const, path: '/work/.mcp.json', render: 'mcp-json' }] },
    }
    const out = renderer.render(hooksInput([], withMcp, { mcp: [server('github'), server('omh-echo')] }), context) as RenderOutput
    expect(settingsOf(out)).toEqual({ enabledMcpjsonServers: ['github', 'omh-echo'] })
  })

  it('approves nothing when MCP servers live anywhere else, and writes no file with nothing to carry', () => {
    const elsewhere = {
      ...claude,
      adapter: { ...claude.adapter, bindings: claude.adapter.bindings.map((b) => (b.capability === 'mcp' ? { ...b, path: '/home/agent/.mcp.json' } : b)) },
    }
    const out = renderer.render(hooksInput([], elsewhere, { mcp: [server('github')] }), context) as RenderOutput
    expect(out).toEqual({ files: [], dropped: [] })
  })
})

describe('claude-settings: reading back what it wrote', () => {
  const parse = (content: string) =>
    renderer.parse!([{ file: '/home/agent/.claude/settings.json', content }], {
      capability: 'hooks',
      binding: claude.binding,
      adapter: { name: 'claude', tools: claude.tools, paths: {} },
      options: undefined,
      env: {},
    })

  it('leaves what it did not write, and what was edited since, saying why', () => {
    const out = render([
      hook('fmt', { on: 'after-tool', tools: ['edit'], run: 'npm run fmt -- "$OMH_TOOL_FILE"' }),
      hook('lint', { on: 'after-tool', tools: ['edit'], run: 'npm run lint -- "$OMH_TOOL_FILE"' }),
    ])
    const settings = settingsOf(out)
    const lint = settings.hooks.PostToolUse[1].hooks[0]
    lint.command = lint.command.replace('.tool_input.file_path', '.tool_input.path')
    settings.hooks.PostToolUse.push({ matcher: 'Edit|Write|MultiEdit', hooks: [{ type: 'command', command: './my-hook.sh' }] })
    settings.hooks.PostToolUse.push(settings.hooks.PostToolUse[0])
    settings.hooks.UserPromptSubmit = [{ hooks: [{ type: 'command', command: 'notify-send hi' }] }]
    settings.permissions = { allow: ['Bash(ls)'] }
    const read = parse(JSON.stringify(settings)) as ParseSuccess
    expect(read.items.hooks!.map((h) => h.name)).toEqual(['fmt'])
    expect(read.left).toEqual([
      { name: 'hooks.PostToolUse[1]', reason: 'it was changed after omh wrote it' },
      { name: 'hooks.PostToolUse[2]', reason: "its command was not written by omh, so what its output means is the harness's own protocol; omh does not guess" },
      { name: 'hooks.PostToolUse[3]', reason: 'a hook named `fmt` was read already' },
      { name: 'hooks.UserPromptSubmit[0]', reason: 'no omh moment is UserPromptSubmit' },
      { name: 'permissions', reason: 'not a hook; omh leaves the rest of this file to the harness' },
    ])
  })

  it('reports a document that is not JSON as a located failure', () => {
    expect(parse('{\n  "hooks": {,\n}')).toEqual({
      ok: false,
      problems: [{ file: '/home/agent/.claude/settings.json', line: 2, column: 13, message: "not valid JSON: Expected property name or '}'" }],
    })
  })

  it('says where a document is not JSON without repeating what it holds', () => {
    expect(parse('{"hooks": SECRET_TOKEN=0123456789}')).toEqual({
      ok: false,
      problems: [{ file: '/home/agent/.claude/settings.json', line: 1, column: 11, message: "not valid JSON: Unexpected token 'S'" }],
    })
  })
})
