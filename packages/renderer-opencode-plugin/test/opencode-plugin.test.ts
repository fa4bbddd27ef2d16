import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import fc from 'fast-check'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { GUEST_HOME, GUEST_WORK, type Hook, type RenderOutput, type StagedFile } from '@omh/plugin-api'
import { testRenderer } from '@omh/plugin-kit/testing'
import { bundledFormats } from '@omh/test-utils'
import { AWKWARD, bundledHooks, expectedText, hook, hookTextArbitrary, hooksInput } from '@omh/test-utils'
import renderer from '../src/index.js'

const opencode = await bundledHooks('opencode')
const dir = mkdtempSync(path.join(os.tmpdir(), 'omh-plugin-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let loaded = 0
/** Renders hooks and loads the plugin the way OpenCode does: import the module, call its export. */
async function plugin(hooks: Hook[]) {
  const out = renderer.render(hooksInput(hooks, opencode), { guestHome: GUEST_HOME, guestWork: GUEST_WORK }) as RenderOutput
  const file = out.files[0] as StagedFile | undefined
  if (!file) return { out, handlers: undefined }
  const module = path.join(dir, `omh-${loaded++}.mjs`)
  writeFileSync(module, file.content)
  const { default: omh } = (await import(pathToFileURL(module).href)) as { default: () => Promise<Record<string, (...a: any[]) => Promise<void>>> }
  return { out, source: file.content as string, handlers: await omh() }
}

const FILE = `/work/src/it's a "$HOME" \`x\` ✓.ts`
const log = path.join(dir, 'log')
const session = { sessionID: 'ses_01', callID: 'call_01' }

testRenderer(renderer, { ...(await bundledFormats()), golden: new URL('./golden', import.meta.url) })

describe('opencode-plugin: every generated hook does what its definition says', async () => {
  process.env['OMH_SESSION'] = 'omh-s01'
  const hooks = [
    hook('fetch', { on: 'session-start', run: `echo fetched >> '${log}'` }),
    hook('orient', { on: 'session-start', inject: 'Read AGENTS.md.' }),
    hook('test-at-end', { on: 'turn-end', run: `echo "tests for $OMH_SESSION" >> '${log}'` }),
    hook('no-force-push', {
      on: 'before-tool',
      tools: ['shell'],
      when: `printf '%s' "$OMH_TOOL_COMMAND" | grep -q -- --force`,
      refuse: `No force-push: \${OMH_TOOL_COMMAND:-that}. ${AWKWARD}`,
    }),
    hook('read-hint', { on: 'before-tool', tools: ['read'], inject: 'Prefer the outline.' }),
    hook('lint-hint', { on: 'after-tool', tools: ['edit'], inject: 'You edited $OMH_TOOL_FILE in $OMH_SESSION.\nRun `npm run lint` — ✓' }),
    hook('format', { on: 'after-tool', tools: ['edit'], run: `printf '%s\\n' "$OMH_TOOL_FILE" >> '${log}'` }),
    hook('search-hint', { on: 'after-tool', tools: ['search'], inject: 'Partial.' }),
    hook('broken', { on: 'after-tool', tools: ['shell'], run: 'exit 3' }),
  ]
  const { out, source, handlers } = await plugin(hooks)

  it('passes node --check as the file OpenCode loads', () => {
    const file = path.join(dir, 'omh.js')
    writeFileSync(file, source!)
    expect(() => execFileSync(process.execPath, ['--check', file], { stdio: 'pipe' })).not.toThrow()
  })

  it('drops by name what OpenCode cannot express, never turning advice into a throw', () => {
    expect(out.dropped).toEqual([{ capability: 'hooks', name: 'read-hint', reason: 'no way to inject text at `before-tool`' }])
    expect(Object.keys(handlers!)).toEqual(['tool.execute.before', 'tool.execute.after', 'event', 'experimental.chat.system.transform'])
  })

  it('narrows `search` to both of grep and glob', async () => {
    for (const tool of ['grep', 'glob']) {
      const output = { title: '', output: 'found', metadata: {} }
      await handlers!['tool.execute.after']!({ tool, ...session, args: {} }, output)
      expect(output.output).toBe('found\n\nPartial.')
    }
  })

  it('adds session-start advice to the system prompt of every request of the session, worked out once when it is created', async () => {
    await handlers!['event']!({ event: { type: 'session.created', properties: { sessionID: 'ses_09', info: { id: 'ses_09' } } } })
    for (let n = 0; n < 2; n++) {
      const output = { system: ['You are OpenCode.'] }
      await handlers!['experimental.chat.system.transform']!({ sessionID: 'ses_09', model: {} }, output)
      expect(output.system).toEqual(['You are OpenCode.', 'Read AGENTS.md.'])
    }
    // A request before the event (or of a session created elsewhere) works it out then.
    const output = { system: ['s'] }
    await handlers!['experimental.chat.system.transform']!({ sessionID: 'ses_10', model: {} }, output)
    expect(output.system).toEqual(['s', 'Read AGENTS.md.'])
    rmSync(log, { force: true })
  })

  it('blocks a matching call by throwing the reason, every character as written', async () => {
    const output = { args: { command: 'git push --force origin "main" $HOME', description: 'push' } }
    await expect(handlers!['tool.execute.before']!({ tool: 'bash', ...session }, output)).rejects.toThrow(
      new Error(`No force-push: git push --force origin "main" $HOME. it's "quoted" — \`make help\`, costs $5, back\\slash, {{event}}\nsecond line ✓ 日本語 😀`),
    )
  })

  it('lets a call through untouched when `when` says no, or the tool is another', async () => {
    const output = { args: { command: 'git push origin main' } }
    await handlers!['tool.execute.before']!({ tool: 'bash', ...session }, output)
    await handlers!['tool.execute.before']!({ tool: 'read', ...session }, { args: { filePath: FILE } })
    expect(output).toEqual({ args: { command: 'git push origin main' } })
  })

  it('appends advice to the tool result after an edit, and runs commands with the file set', async () => {
    for (const tool of ['edit', 'write']) {
      const output = { title: 'a.ts', output: 'Edit applied successfully.', metadata: {} }
      await handlers!['tool.execute.after']!({ tool, ...session, args: { filePath: FILE, oldString: 'a', newString: 'b' } }, output)
      expect(output.output).toBe(`Edit applied successfully.\n\nYou edited ${FILE} in omh-s01.\nRun \`npm run lint\` — ✓`)
    }
    expect(readFileSync(log, 'utf8')).toBe(`${FILE}\n${FILE}\n`)
  })

  it('runs turn-end and session-start commands from bus events, and ignores others', async () => {
    rmSync(log, { force: true })
    await handlers!['event']!({ event: { type: 'session.created', properties: { info: { id: 'ses_01' } } } })
    await handlers!['event']!({ event: { type: 'session.idle', properties: { sessionID: 'ses_01' } } })
    await handlers!['event']!({ event: { type: 'message.updated', properties: {} } })
    expect(readFileSync(log, 'utf8')).toBe('fetched\ntests for omh-s01\n')
  })

  it('reports a failing command without failing the call', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const output = { title: 'ls', output: 'a\nb', metadata: {} }
    await handlers!['tool.execute.after']!({ tool: 'bash', ...session, args: { command: 'ls' } }, output)
    expect(errors).toHaveBeenCalledWith('omh: hook broken: run exited 3')
    expect(output.output).toBe('a\nb')
    errors.mockRestore()
  })
})

describe('opencode-plugin: text', () => {
  it('says any text exactly as omh reads it, after a tool and in a refusal', async () => {
    const texts = fc.sample(hookTextArbitrary, 40)
    const hooks = texts.flatMap((text, n) => [
      hook(`advise-${n}`, { on: 'after-tool', inject: text }),
      hook(`block-${n}`, { on: 'before-tool', tools: ['read'], refuse: text }),
    ])
    const { handlers } = await plugin(hooks)
    const env = { OMH_TOOL_FILE: FILE, OMH_TOOL_COMMAND: '', OMH_SESSION: 'omh-s01' }
    const output = { title: '', output: '', metadata: {} }
    await handlers!['tool.execute.after']!({ tool: 'read', ...session, args: { filePath: FILE } }, output)
    expect(output.output).toBe(texts.map((t) => `\n\n${expectedText(t, env)}`).join(''))
    // The first refusal stops the call, as OpenCode stops it.
    await expect(handlers!['tool.execute.before']!({ tool: 'read', ...session }, { args: { filePath: FILE } })).rejects.toThrow(
      new Error(expectedText(texts[0]!, env)),
    )
  })

  it('says line and paragraph separators as they are, with a variable after them', async () => {
    const texts = ['a\u2028 b', '\u2029$OMH_SESSION end', 'x\u2028${OMH_TOOL_FILE}\u2028y']
    const hooks = texts.map((text, n) => hook(`advise-${n}`, { on: 'after-tool', inject: text }))
    const { handlers } = await plugin(hooks)
    const env = { OMH_TOOL_FILE: FILE, OMH_TOOL_COMMAND: '', OMH_SESSION: 'omh-s01' }
    const output = { title: '', output: '', metadata: {} }
    await handlers!['tool.execute.after']!({ tool: 'read', ...session, args: { filePath: FILE } }, output)
    expect(output.output).toBe(texts.map((t) => `\n\n${expectedText(t, env)}`).join(''))
  })

  it('runs every hook of a call before its refusal stops it, as the other harnesses run them all', async () => {
    const ran = path.join(dir, 'ran-before-refusal')
    const { handlers: h } = await plugin([
      hook('refuse-all', { on: 'before-tool', tools: ['shell'], refuse: 'Not now.' }),
      hook('also-refuse', { on: 'before-tool', tools: ['shell'], refuse: 'Nor later.' }),
      hook('note', { on: 'before-tool', tools: ['shell'], run: `echo noted >> '${ran}'` }),
    ])
    await expect(h!['tool.execute.before']!({ tool: 'bash', ...session }, { args: { command: 'ls' } })).rejects.toThrow(new Error('Not now.'))
    expect(readFileSync(ran, 'utf8')).toBe('noted\n')
  })

  it('acts as if `when` passed under OMH_HOOK_WHEN_MET, which omh doctor --turn alone sets', async () => {
    const { handlers: h } = await plugin([hook('guard', { on: 'before-tool', tools: ['shell'], when: 'false', refuse: 'Refused for the doctor.' })])
    await h!['tool.execute.before']!({ tool: 'bash', ...session }, { args: { command: 'ls' } })
    process.env['OMH_HOOK_WHEN_MET'] = '1'
    try {
      await expect(h!['tool.execute.before']!({ tool: 'bash', ...session }, { args: { command: 'ls' } })).rejects.toThrow(new Error('Refused for the doctor.'))
    } finally {
      delete process.env['OMH_HOOK_WHEN_MET']
    }
  })

  it('writes no plugin when nothing can be expressed', async () => {
    const { out } = await plugin([hook('x', { on: 'turn-end', inject: 'hi' })])
    expect(out.files).toEqual([])
  })
})
