import { spawnSync } from 'node:child_process'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parse as parseToml } from 'smol-toml'
import { GUEST_HOME, GUEST_WORK, type RenderOutput, type StagedFile } from '@omh/plugin-api'
import { testRenderer } from '@omh/plugin-kit/testing'
import { AWKWARD, bundledFormats, bundledHooks, hook, hookFileArbitrary, hooksByName, hooksInput } from '@omh/test-utils'
import { approvalHash } from '../src/approval.js'
import renderer from '../src/index.js'

const context = { guestHome: GUEST_HOME, guestWork: GUEST_WORK }
const codex = await bundledHooks('codex')

const hooks = [
  hook('orient', { on: 'session-start', inject: `Session $OMH_SESSION. ${AWKWARD}` }),
  hook('test-at-end', { on: 'turn-end', run: 'npm test' }),
  hook('remind', { on: 'turn-end', inject: 'Did you run the tests?' }),
  hook('no-force-push', { on: 'before-tool', tools: ['shell'], when: `printf '%s' "$OMH_TOOL_COMMAND" | grep -q -- --force`, refuse: 'No force-push: $OMH_TOOL_COMMAND' }),
  hook('read-hint', { on: 'before-tool', tools: ['read'], inject: 'Prefer the outline.' }),
  hook('format', { on: 'after-tool', tools: ['edit'], run: 'prettier --write "$OMH_TOOL_FILE"' }),
  hook('patch-hint', { on: 'after-tool', tools: ['edit'], inject: 'Patched: ${OMH_TOOL_COMMAND:-?}' }),
]
const out = renderer.render(hooksInput(hooks, codex), context) as RenderOutput
const [hooksJson, configToml] = out.files as StagedFile[]

describe('codex-hooks', () => {
  it('writes hooks.json and, beside it in CODEX_HOME, the config.toml part that trusts them', () => {
    expect(out.files.map((f) => [f.guest, (f as StagedFile).syntax])).toEqual([
      ['/home/agent/.codex/hooks.json', 'json'],
      ['/home/agent/.codex/config.toml', 'toml'],
    ])
  })

  it('drops by name what Codex cannot express, and never turns advice into a block', () => {
    expect(out.dropped).toEqual([
      { capability: 'hooks', name: 'remind', reason: 'no way to inject text at `turn-end`' },
      { capability: 'hooks', name: 'read-hint', reason: 'no `read` tool' },
      { capability: 'hooks', name: 'format', reason: 'no `tool-file` field' },
    ])
  })

  it('trusts every hook it wrote, keyed by file, event, group and handler', () => {
    const doc = JSON.parse(hooksJson!.content as string) as { hooks: Record<string, { matcher?: string; hooks: { command: string }[] }[]> }
    const state = (parseToml(configToml!.content as string) as { hooks: { state: Record<string, { trusted_hash: string }> } }).hooks.state
    const expected: Record<string, { trusted_hash: string }> = {}
    for (const [event, groups] of Object.entries(doc.hooks)) {
      groups.forEach((g, n) => {
        const label = event.replace(/(?<=[a-z])([A-Z])/g, '_$1').toLowerCase()
        expected[`/home/agent/.codex/hooks.json:${label}:${n}:0`] = { trusted_hash: approvalHash(event, g.matcher, g.hooks[0]!.command) }
      })
    }
    expect(Object.keys(expected)).toEqual([
      '/home/agent/.codex/hooks.json:session_start:0:0',
      '/home/agent/.codex/hooks.json:stop:0:0',
      '/home/agent/.codex/hooks.json:pre_tool_use:0:0',
      '/home/agent/.codex/hooks.json:post_tool_use:0:0',
    ])
    expect(state).toEqual(expected)
  })

  it('hashes a hook as Codex 0.171.0 does (values its `hooks/list` reported)', () => {
    expect(approvalHash('PreToolUse', 'Bash', 'echo hi')).toBe('sha256:3bbce6504b48cc6f0d7fe24bd36273633d1bfa5879bc87f4ed7ccd16f24d1415')
    expect(approvalHash('SessionStart', undefined, 'echo s')).toBe('sha256:899b41364f0b974bfd1b287934c0cc22772fcf351ea75b4f330d9d1112e2454d')
  })

  it('runs under sh with Codex payloads and answers in the protocol Codex reads', () => {
    const doc = JSON.parse(hooksJson!.content as string)
    const command = (event: string, n = 0) => doc.hooks[event][n].hooks[0].command as string
    const fire = (c: string, payload: object) => spawnSync('sh', ['-c', c], { input: JSON.stringify(payload), encoding: 'utf8', env: { ...process.env, OMH_SESSION: 's02' } })
    const base = { session_id: '019a', turn_id: 't1', transcript_path: null, cwd: '/work', model: 'gpt-5', permission_mode: 'default' }

    const start = fire(command('SessionStart'), { ...base, hook_event_name: 'SessionStart', source: 'startup' })
    expect(JSON.parse(start.stdout).hookSpecificOutput.additionalContext).toBe(
      `Session s02. it's "quoted" — \`make help\`, costs $5, back\\slash, {{event}}\nsecond line ✓ 日本語 😀`,
    )

    const push = { ...base, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_use_id: 'c1', tool_input: { command: 'git push --force' } }
    expect(JSON.parse(fire(command('PreToolUse'), push).stdout)).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'No force-push: git push --force' },
    })

    const patch = '*** Begin Patch\n*** Update File: a.ts\n@@\n-a\n+b\n*** End Patch'
    const after = { ...base, hook_event_name: 'PostToolUse', tool_name: 'apply_patch', tool_use_id: 'c2', tool_input: { command: patch }, tool_response: 'ok' }
    const r = fire(command('PostToolUse'), after)
    expect([r.status, JSON.parse(r.stdout).hookSpecificOutput]).toEqual([0, { hookEventName: 'PostToolUse', additionalContext: `Patched: ${patch}` }])
  })

  it('still blocks, with a reason, when a refusal expands to nothing', () => {
    const rendered = renderer.render(hooksInput([hook('r', { on: 'before-tool', refuse: '$OMH_TOOL_COMMAND' })], codex), context) as RenderOutput
    const command: string = JSON.parse((rendered.files[0] as StagedFile).content as string).hooks.PreToolUse[0].hooks[0].command
    const r = spawnSync('sh', ['-c', command], { input: JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: {} }), encoding: 'utf8' })
    expect(JSON.parse(r.stdout).hookSpecificOutput).toEqual({ hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'an omh hook refused this call' })
  })

  it('writes nothing when no hook can be expressed', () => {
    expect(renderer.render(hooksInput([hooks[2]!], codex), context)).toEqual({ files: [], dropped: [out.dropped[0]] })
  })
})

const facts = await bundledFormats()
testRenderer(renderer, {
  ...facts,
  golden: new URL('./golden', import.meta.url),
  roundTrips: [
    {
      format: 'codex-hooks',
      capability: 'hooks',
      items: fc.array(hookFileArbitrary, { maxLength: 6 }).map((files) => files.map((f, n) => hook(`hook-${n}`, f))),
      binding: codex.binding,
      adapter: facts.adapters['codex-hooks']!,
      order: hooksByName,
      numRuns: 100,
    },
  ],
})
