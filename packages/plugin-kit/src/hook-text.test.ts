import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fieldsMentioned, hookText, parseHookText, unexpressible, type TextPiece } from './hook-text.js'
import type { Hook } from '@omh/plugin-api'

const problem = (text: string) => {
  const parsed = parseHookText(text)
  return parsed.ok ? undefined : parsed.problem
}

describe('hook text', () => {
  it('reads words, variables, fallbacks and a doubled dollar', () => {
    const parsed = parseHookText('costs $$5 in ${OMH_SESSION}: $OMH_TOOL_FILE, ${OMH_TOOL_COMMAND:-no command}.')
    expect(parsed).toEqual({
      ok: true,
      pieces: [
        { kind: 'literal', text: 'costs $5 in ' },
        { kind: 'variable', name: 'OMH_SESSION', braced: true },
        { kind: 'literal', text: ': ' },
        { kind: 'variable', name: 'OMH_TOOL_FILE', braced: false },
        { kind: 'literal', text: ', ' },
        { kind: 'variable', name: 'OMH_TOOL_COMMAND', braced: true, fallback: 'no command' },
        { kind: 'literal', text: '.' },
      ],
    })
  })

  it('refuses a command substitution, saying why and what to do instead', () => {
    expect(problem('branch is $(git branch --show-current)')).toBe(
      '`$(…)` would run a command inside text the agent reads; omh refuses it. Compute it in `when`, or make this a `run` hook',
    )
  })

  it('refuses every other use of `$`, naming it', () => {
    expect(problem('home is $HOME')).toMatch(/^`\$HOME` is not a variable omh sets, so the agent would read it empty or unexpanded; text may name \$OMH_TOOL_FILE, \$OMH_TOOL_COMMAND, \$OMH_SESSION/)
    expect(problem('$OMH_TOOL_FILE_X')).toMatch(/^`\$OMH_TOOL_FILE_X` is not a variable omh sets/)
    expect(problem('costs $5')).toMatch(/^`\$5` names no variable; write `\$\$` for a dollar sign/)
    expect(problem('ends in $')).toMatch(/^a `\$` at the end names no variable/)
    expect(problem('${ OMH_SESSION }')).toMatch(/^`\$\{ OMH_SESSION \}` is not a variable: write `\$\{NAME\}`/)
    expect(problem('${OMH_SESSION')).toMatch(/is not a variable: write/)
    expect(problem('${OMH_SESSION:-a"b}')).toMatch(/^the fallback in `\$\{OMH_SESSION:-a"b\}` is plain words/)
  })

  it('writes text back exactly as it was read', () => {
    const literal = fc.string({ unit: 'grapheme', minLength: 1 }).map((text): TextPiece => ({ kind: 'literal', text }))
    const variable = fc.record({
      kind: fc.constant('variable' as const),
      name: fc.constantFrom('OMH_TOOL_FILE' as const, 'OMH_TOOL_COMMAND' as const, 'OMH_SESSION' as const),
      braced: fc.boolean(),
    })
    fc.assert(
      fc.property(fc.array(fc.oneof(literal, variable)), (pieces) => {
        const text = hookText(pieces)
        const parsed = parseHookText(text)
        // An unbraced variable followed by a letter reads as another name, and is refused.
        fc.pre(parsed.ok)
        return parsed.ok && hookText(parsed.pieces) === text
      }),
    )
  })

  it('derives the payload fields a hook reads from its commands and text', () => {
    expect(fieldsMentioned('test -f "$OMH_TOOL_FILE"', undefined, 'ran ${OMH_TOOL_COMMAND:-x}')).toEqual(['tool-file', 'tool-command'])
    expect(fieldsMentioned('echo $OMH_TOOL_FILE_X $OMH_SESSION')).toEqual([])
  })
})

describe('what a harness cannot express', () => {
  const hook = (over: Partial<Hook>): Hook => ({ name: 'h', on: 'before-tool', action: { kind: 'run', command: 'true' }, fields: [], source: '/h.json', ...over })
  const binding = {
    events: { 'before-tool': 'Pre', 'after-tool': 'Post', 'turn-end': 'Stop' },
    fields: { 'tool-command': '.c' },
    inject: { template: '{{text}}', at: ['after-tool' as const] },
  }
  const tools = { shell: 'Bash' }

  it('names the first thing missing: moment, tool, field, then action', () => {
    expect(unexpressible(hook({ on: 'session-start' }), binding, tools)).toBe('no `session-start` moment')
    expect(unexpressible(hook({ tools: ['shell', 'search'] }), binding, tools)).toBe('no `search` tool')
    expect(unexpressible(hook({ fields: ['tool-file'] }), binding, tools)).toBe('no `tool-file` field')
    expect(unexpressible(hook({ action: { kind: 'refuse', text: 'no' } }), binding, tools)).toBe('no way to refuse a call')
    expect(unexpressible(hook({ action: { kind: 'inject', text: 'hm' } }), binding, tools)).toBe('no way to inject text at `before-tool`')
    expect(unexpressible(hook({ on: 'after-tool', action: { kind: 'inject', text: 'hm' } }), binding, tools)).toBeUndefined()
    expect(unexpressible(hook({ tools: ['shell'], fields: ['tool-command'] }), binding, tools)).toBeUndefined()
  })
})
