import { emptyProfile, type Hook, type ProfileItems } from '@omh/plugin-api'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { checkAdapterFile, parseHookFile, toAdapter } from '@omh/kernel'
import type { Adapter } from '@omh/kernel'
import { judgeTurn, textMark, turnChecks, turnScript, wordsToCall } from './turn.js'
import type { TurnOutput } from './runner.js'

const hook = (name: string, file: Record<string, unknown>): Hook => {
  const parsed = parseHookFile(name, `/h/${name}.json`, JSON.stringify(file))
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return parsed.hook
}

const calls = { shell: { tool: 'Bash', input: { command: 'echo omh-doctor' } }, edit: { tool: 'Write', input: { file_path: '/tmp/x' } } }
const adapter = { name: 'h', turn: { run: 'h -p', port: 4471, calls } } as unknown as Adapter

const hooks = [
  hook('start', { on: 'session-start', run: 'true' }),
  hook('guard', { on: 'before-tool', tools: ['shell'], refuse: 'No pushing from here, $OMH_TOOL_COMMAND.' }),
  hook('advice', { on: 'after-tool', inject: 'Mind the tests.' }),
  hook('reader', { on: 'after-tool', tools: ['read'], run: 'true' }),
  hook('end', { on: 'turn-end', run: 'true' }),
]

describe('the script of a doctor turn', () => {
  it('calls each tool word a hook names that the adapter can call, in omh order, and says which it cannot', () => {
    expect(wordsToCall(hooks, calls)).toEqual({ call: ['shell'], unreached: ['read'] })
    expect(wordsToCall([hook('any', { on: 'after-tool', run: 'true' })], calls)).toEqual({ call: ['shell'], unreached: [] })
    expect(turnScript(adapter, hooks)).toEqual({ replies: [{ call: 'Bash', input: { command: 'echo omh-doctor' } }, { text: 'omh doctor: the turn is over.' }] })
  })

  it("calls the bundled Claude adapter's Grep for a hook narrowed to `search`, so none is left unreached", async () => {
    const file = fileURLToPath(new URL('../../../adapters/claude.toml', import.meta.url))
    const claude = toAdapter(file, (await checkAdapterFile(file)).data!)
    const search = [hook('finder', { on: 'after-tool', tools: ['search'], run: 'true' })]
    expect(wordsToCall(search, claude.turn!.calls)).toEqual({ call: ['search'], unreached: [] })
    expect(turnScript(claude, search).replies[0]).toEqual({ call: 'Grep', input: { pattern: 'omh-doctor', path: '/work' } })
    // The turn runs Claude with the arguments a session gets, which is what offers Grep at all.
    expect(claude.args).toEqual(['--allowedTools=Grep(./**),Glob(./**)'])
    expect(claude.turn!.run).toMatch(/^claude "\$@" /)
  })

  it("marks a hook text by its longest run of own words, not its variables", () => {
    expect(textMark('No pushing from here, $OMH_TOOL_COMMAND.')).toBe('No pushing from here,')
    expect(textMark('$OMH_TOOL_COMMAND')).toBeUndefined()
  })
})

describe('the verdicts on a doctor turn', () => {
  const profile: ProfileItems = {
    ...emptyProfile(),
    hooks,
    rules: [{ name: 'style', origin: 'catalogue', source: '/r', text: 'Answer in one short paragraph.\n' }],
    skills: [{ name: 'lint-fix', description: 'd', source: '/s' }],
    mcp: [{ name: 'docs', source: '/m', server: {} } as unknown as ProfileItems['mcp'][number]],
  }
  const out = (trace: string[], texts: string[], tools: string[] = []): TurnOutput => ({
    output: { exit: 0, stdout: '', stderr: '' },
    requests: texts.map((t, n) => ({ n, method: 'POST', path: '/v1/messages', protocol: 'anthropic', tools, reply: n, answered: '', body: { system: t } })),
    trace,
  })

  it('reports each hook invoked or not, and whether its text reached a request', () => {
    const report = judgeTurn(hooks, profile, [], out(['start', 'guard', 'end'], ['Answer in one short paragraph. lint-fix', 'No pushing from here, echo'], ['Bash', 'mcp__docs__search']), ['read'])
    expect(report.hooks).toEqual([
      { name: 'start', moment: 'session-start', invoked: true, delivered: null },
      { name: 'guard', moment: 'before-tool', invoked: true, delivered: true },
      { name: 'advice', moment: 'after-tool', invoked: false, delivered: false },
      { name: 'reader', moment: 'after-tool', invoked: false, delivered: null },
      { name: 'end', moment: 'turn-end', invoked: true, delivered: null },
    ])
    expect(report.items).toEqual([
      { capability: 'rules', name: 'style', carried: true, firstIn: 1 },
      { capability: 'skills', name: 'lint-fix', carried: true, firstIn: 1 },
      { capability: 'mcp', name: 'docs', carried: true, firstIn: 1 },
    ])
    const failed = turnChecks(report, out([], []), hooks).filter((c) => !c.ok)
    expect(failed.map((c) => [c.name, c.detail])).toEqual([['advice (after-tool)', 'not invoked by the harness']])
    expect(turnChecks(report, out([], []), hooks).find((c) => c.name === 'reader (after-tool)')).toMatchObject({ ok: true, detail: "not reached: the adapter's [turn] has no call for read" })
  })

  it('with mcp_named, takes a server as carried by a request whose text names one of its tools on a line of its own', () => {
    const deferred = out([], ['Answer in one short paragraph. lint-fix\nDeferred tools:\nWebSearch\ndocs___search\n'], ['Bash', 'ToolSearch'])
    expect(judgeTurn([], profile, [], deferred, [], '{{name}}___*').items.find((i) => i.capability === 'mcp')).toEqual({ capability: 'mcp', name: 'docs', carried: true, firstIn: 1 })
    // Without it, only the offered tools count; and a name inside a line is not a line naming a tool.
    expect(judgeTurn([], profile, [], deferred, []).items.find((i) => i.capability === 'mcp')?.firstIn).toBeNull()
    const inline = out([], ['see docs___search here'], ['Bash'])
    expect(judgeTurn([], profile, [], inline, [], '{{name}}___*').items.find((i) => i.capability === 'mcp')?.firstIn).toBeNull()
  })

  it('says a hook at waiting is not reached, since the scripted turn never waits for the user, and does not fail it', () => {
    const waiting = [hook('ping', { on: 'waiting', run: 'true' })]
    const report = judgeTurn(waiting, profile, [], out([], ['Answer in one short paragraph. lint-fix'], ['Bash']), [])
    expect(turnChecks(report, out([], []), waiting).find((c) => c.name === 'ping (waiting)')).toMatchObject({ ok: true, detail: 'not reached: the scripted turn never waits for the user' })
  })

  it("warns, never fails, of a server the probes found loaded but not connected whose tools reach no request, and fails one they did not", () => {
    const report = judgeTurn([], profile, [], out([], ['Answer in one short paragraph. lint-fix'], ['Bash']), [])
    expect(report.items.find((i) => i.capability === 'mcp')).toEqual({ capability: 'mcp', name: 'docs', carried: false, firstIn: null })
    const unconnected = new Map([['docs', 'does not connect: doctor runs without network']])
    expect(turnChecks(report, out([], []), [], unconnected).find((c) => c.name === 'mcp: docs')).toEqual({
      kind: 'turn',
      name: 'mcp: docs',
      ok: true,
      warning: true,
      capability: 'mcp',
      items: ['docs'],
      detail: 'in no request: loaded, not connected (does not connect: doctor runs without network)',
    })
    expect(turnChecks(report, out([], []), []).find((c) => c.name === 'mcp: docs')).toMatchObject({ ok: false, detail: 'in no request of the turn' })
  })

  it('fails the turn itself when the harness did not exit 0 or the model was never asked', () => {
    const report = judgeTurn([], { ...emptyProfile() }, [], { ...out([], []), output: { exit: 1, stdout: '', stderr: 'no key' } }, [])
    expect(turnChecks(report, { ...out([], []), output: { exit: 1, stdout: '', stderr: 'no key' } }, [])[0]).toMatchObject({ name: 'turn', ok: false, detail: 'exited 1: no key' })
  })
})
