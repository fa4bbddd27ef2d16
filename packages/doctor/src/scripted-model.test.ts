import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ScriptedModel, anthropicStream, modelList, offeredTools, requestText, resolveCall, responsesStream, type Answer } from './scripted-model.js'

/** Server-sent events as [event, data] pairs; every event line must match its data's `type`. */
function events(stream: string): Array<[string, any]> {
  return stream
    .trim()
    .split('\n\n')
    .map((block) => {
      const [event, data] = block.split('\n')
      expect(event).toMatch(/^event: /)
      expect(data).toMatch(/^data: /)
      const parsed = JSON.parse(data!.slice(6))
      expect(parsed.type).toBe(event!.slice(7))
      return [event!.slice(7), parsed] as [string, any]
    })
}

const call: Answer = { kind: 'call', id: 'call_1', call: { name: 'Bash', input: { command: 'git push' }, custom: false, text: 'Pushing.' } }

describe('the Anthropic Messages stream', () => {
  it('gives text in the documented event order and ends the turn', () => {
    const got = events(anthropicStream({ kind: 'text', text: 'hello' }, 'm', 'id1'))
    expect(got.map(([e]) => e)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'])
    expect(got[0]![1].message).toMatchObject({ id: 'id1', role: 'assistant', model: 'm', content: [] })
    expect(got[2]![1].delta).toEqual({ type: 'text_delta', text: 'hello' })
    expect(got[4]![1].delta.stop_reason).toBe('end_turn')
  })

  it('gives a tool call as a tool_use block whose input arrives as JSON deltas, stopping for the tool', () => {
    const got = events(anthropicStream(call, 'm', 'id2'))
    const starts = got.filter(([e]) => e === 'content_block_start').map(([, d]) => d)
    expect(starts.map((s) => [s.index, s.content_block.type])).toEqual([
      [0, 'text'],
      [1, 'tool_use'],
    ])
    expect(starts[1].content_block).toEqual({ type: 'tool_use', id: 'call_1', name: 'Bash', input: {} })
    const json = got.filter(([, d]) => d.delta?.type === 'input_json_delta').map(([, d]) => d.delta.partial_json).join('')
    expect(JSON.parse(json)).toEqual({ command: 'git push' })
    expect(got.find(([e]) => e === 'message_delta')![1].delta.stop_reason).toBe('tool_use')
  })
})

describe('the OpenAI Responses stream', () => {
  it('announces, fills and completes a message item', () => {
    const got = events(responsesStream({ kind: 'text', text: 'hi' }, 'm', 'r1'))
    expect(got.map(([e]) => e)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(got.map(([, d]) => d.sequence_number)).toEqual(got.map((_, i) => i))
    const done = got.at(-1)![1].response
    expect(done).toMatchObject({ id: 'r1', status: 'completed', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] }] })
    expect(done.usage.total_tokens).toBe(2)
  })

  it('gives a function call with its arguments as a JSON string, and a custom tool call with its input as text', () => {
    const fn = events(responsesStream({ kind: 'call', id: 'c1', call: { name: 'exec_command', input: { cmd: 'ls' }, custom: false } }, 'm', 'r2'))
    const item = fn.find(([e]) => e === 'response.output_item.done')![1].item
    expect(item).toMatchObject({ type: 'function_call', call_id: 'c1', name: 'exec_command', status: 'completed' })
    expect(JSON.parse(item.arguments)).toEqual({ cmd: 'ls' })
    const custom = events(responsesStream({ kind: 'call', id: 'c2', call: { name: 'apply_patch', input: '*** Begin Patch', custom: true } }, 'm', 'r3'))
    expect(custom.find(([e]) => e === 'response.output_item.done')![1].item).toMatchObject({ type: 'custom_tool_call', call_id: 'c2', input: '*** Begin Patch' })
  })
})

describe('the tools a request offers', () => {
  it('reads Anthropic tools, Responses function and custom tools, and tools inside a namespace', () => {
    expect(offeredTools({ tools: [{ name: 'Bash', input_schema: {} }] })).toEqual([{ name: 'Bash', custom: false }])
    expect(
      offeredTools({ tools: [{ type: 'function', name: 'exec_command' }, { type: 'custom', name: 'apply_patch' }, { type: 'namespace', name: 'mcp__x', tools: [{ type: 'function', name: 'echo' }] }] }),
    ).toEqual([
      { name: 'exec_command', custom: false },
      { name: 'apply_patch', custom: true },
      { name: 'echo', custom: false, namespace: 'mcp__x' },
    ])
  })

  it('calls a namespaced tool by its own name with its namespace, matched by either', () => {
    const offered = offeredTools({ tools: [{ type: 'namespace', name: 'mcp__turn', tools: [{ type: 'function', name: 'record' }] }] })
    expect(resolveCall({ call: '/^mcp__turn__record$/', input: {} }, offered)).toEqual({ name: 'record', namespace: 'mcp__turn', input: {}, custom: false })
    const got = events(responsesStream({ kind: 'call', id: 'c9', call: { name: 'record', namespace: 'mcp__turn', input: { note: 'n' }, custom: false } }, 'm', 'r9'))
    expect(got.find(([e]) => e === 'response.output_item.done')![1].item).toMatchObject({ type: 'function_call', name: 'record', namespace: 'mcp__turn' })
  })

  it('collects every string of a body as the text the model was told', () => {
    expect(requestText({ system: [{ text: 'rules' }], messages: [{ content: 'hi' }], n: 3 })).toBe('rules\nhi')
  })
})

describe('the scripted model over HTTP', () => {
  let dir: string
  let port: number
  let model: ScriptedModel
  let close: () => void
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'omh-model-'))
    model = new ScriptedModel({ replies: [{ call: ['Nope', '/^mcp__.*__echo$/'], input: { text: 'x' } }, { call: 'Bash', input: { command: 'ls' } }, { text: 'end' }] }, path.join(dir, 'log.jsonl'))
    const listening = await model.listen(0)
    port = listening.port
    close = () => listening.server.close()
  })
  afterAll(() => {
    close()
    rmSync(dir, { recursive: true, force: true })
  })

  const post = (route: string, body: unknown) => fetch(`http://127.0.0.1:${port}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const tools = [{ name: 'Bash' }, { name: 'mcp__srv__echo' }]

  it('answers the conversation from the script in order, asides without moving it, and records every request', async () => {
    const first = await (await post('/v1/messages', { model: 'm', stream: true, tools, messages: [] })).text()
    expect(first).toContain('"name":"mcp__srv__echo"')
    const aside = await (await post('/v1/messages', { model: 'm', messages: [{ role: 'user', content: 'title?' }] })).json()
    expect(aside).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn' })
    const second = await (await post('/v1/responses', { model: 'm', stream: true, tools: [{ type: 'function', name: 'Bash' }, { type: 'namespace', name: 'mcp__srv', tools: [{ type: 'function', name: 'echo' }] }], input: [] })).text()
    expect(second).toContain('"type":"function_call"')
    const third = await (await post('/v1/messages', { model: 'm', stream: true, tools, messages: [] })).text()
    expect(third).toContain('"text":"end"')
    const fourth = await (await post('/v1/messages', { model: 'm', stream: true, tools, messages: [] })).text()
    expect(fourth).toContain('"text":"done"')
    expect((await post('/v1/messages/count_tokens', { messages: [] })).status).toBe(200)
    expect((await fetch(`http://127.0.0.1:${port}/v1/models`)).status).toBe(200)
    expect((await post('/v1/embeddings', {})).status).toBe(404)
    const log = readFileSync(path.join(dir, 'log.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(log.map((r) => [r.path, r.protocol, r.reply])).toEqual([
      ['/v1/messages', 'anthropic', 0],
      ['/v1/messages', 'anthropic', null],
      ['/v1/responses', 'responses', 1],
      ['/v1/messages', 'anthropic', 2],
      ['/v1/messages', 'anthropic', 3],
      ['/v1/messages/count_tokens', 'anthropic', null],
      ['/v1/models', null, null],
      ['/v1/embeddings', null, null],
    ])
    expect(log[0].tools).toEqual(['Bash', 'mcp__srv__echo'])
    expect(log[2].tools).toEqual(['Bash', 'mcp__srv__echo'])
  })

  it("declares one model in the model list, in the OpenAI and Anthropic shape and as Codex's catalog entry with a free-form apply_patch", async () => {
    const list = (await (await fetch(`http://127.0.0.1:${port}/v1/models?client_version=0.171.0`)).json()) as any
    expect(list.data).toEqual([expect.objectContaining({ id: 'scripted', object: 'model', type: 'model' })])
    expect(list.models).toEqual([expect.objectContaining({ slug: 'scripted', apply_patch_tool_type: 'freeform', shell_type: 'shell_command', visibility: 'list' })])
    expect((modelList('other') as any).models[0].slug).toBe('other')
  })

  it("answers a token refresh in the issuer's shape: OpenAI's JWTs for a form naming its client, Anthropic's opaque tokens for JSON", async () => {
    const form = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'rt_x', client_id: 'app_x' }).toString(),
    })
    const openai = (await form.json()) as Record<string, string>
    expect(openai.access_token!.split('.')).toHaveLength(3)
    expect(JSON.parse(Buffer.from(openai.id_token!.split('.')[1]!, 'base64url').toString())['https://api.openai.com/auth'].chatgpt_account_id).toBe('scripted-account')
    const anthropic = (await (await post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: 'sk-ant-ort01-x' })).json()) as Record<string, string>
    expect(anthropic.access_token).toMatch(/^sk-ant-oat01-scripted-access-\d+$/)
    const log = readFileSync(path.join(dir, 'log.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(log.filter((r) => r.path.endsWith('/oauth/token')).map((r) => r.body.refresh_token)).toEqual(['rt_x', 'sk-ant-ort01-x'])
  })

  it('speaks Chat Completions, streamed as chunks ending in [DONE] or as one completion, reading function tools', async () => {
    const chat = new ScriptedModel({ replies: [{ call: 'run_shell_command', input: { command: 'ls' } }, { text: 'end' }] })
    const { server, port: at } = await chat.listen(0)
    try {
      const tools = [{ type: 'function', function: { name: 'read_file', parameters: {} } }, { type: 'function', function: { name: 'run_shell_command', parameters: {} } }]
      const url = `http://127.0.0.1:${at}/v1/chat/completions`
      const streamed = await (await fetch(url, { method: 'POST', body: JSON.stringify({ model: 'm', stream: true, tools, messages: [] }) })).text()
      const chunks = streamed.trim().split('\n\n').map((b) => b.slice('data: '.length))
      expect(chunks.at(-1)).toBe('[DONE]')
      const parsed = chunks.slice(0, -1).map((c) => JSON.parse(c))
      expect(parsed.every((c) => c.object === 'chat.completion.chunk')).toBe(true)
      expect(parsed.flatMap((c) => c.choices[0].delta.tool_calls ?? [])).toEqual([{ index: 0, id: 'call_1', type: 'function', function: { name: 'run_shell_command', arguments: '{"command":"ls"}' } }])
      expect(parsed.at(-1).choices[0].finish_reason).toBe('tool_calls')
      const whole = (await (await fetch(url, { method: 'POST', body: JSON.stringify({ model: 'm', tools, messages: [] }) })).json()) as any
      expect(whole.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: 'end' }, finish_reason: 'stop' })
      expect(chat.requests.map((r) => [r.protocol, r.tools])).toEqual([
        ['chat', ['read_file', 'run_shell_command']],
        ['chat', ['read_file', 'run_shell_command']],
      ])
    } finally {
      server.close()
    }
  })

  it("speaks Gemini's generateContent: events with alt=sse, a JSON array without, one response for the unary call", async () => {
    const gemini = new ScriptedModel({ replies: [{ call: 'write_file', input: { file_path: '/tmp/x' } }, { text: 'one' }, { text: 'two' }] })
    const { server, port: at } = await gemini.listen(0)
    try {
      const body = JSON.stringify({ contents: [], tools: [{ functionDeclarations: [{ name: 'write_file' }, { name: 'read_file' }] }] })
      const base = `http://127.0.0.1:${at}/v1beta/models/gemini-2.5-flash`
      const sse = await (await fetch(`${base}:streamGenerateContent?alt=sse`, { method: 'POST', body })).text()
      expect(sse.startsWith('data: ')).toBe(true)
      expect(JSON.parse(sse.slice(6)).candidates[0].content.parts).toEqual([{ functionCall: { name: 'write_file', args: { file_path: '/tmp/x' } } }])
      const array = (await (await fetch(`${base}:streamGenerateContent`, { method: 'POST', body })).json()) as any
      expect(array[0].candidates[0].content.parts).toEqual([{ text: 'one' }])
      const unary = (await (await fetch(`${base}:generateContent`, { method: 'POST', body })).json()) as any
      expect(unary).toMatchObject({ candidates: [{ content: { role: 'model', parts: [{ text: 'two' }] }, finishReason: 'STOP' }], modelVersion: 'gemini-2.5-flash' })
      expect(gemini.requests.map((r) => [r.protocol, r.reply, r.tools])).toEqual([
        ['gemini', 0, ['write_file', 'read_file']],
        ['gemini', 1, ['write_file', 'read_file']],
        ['gemini', 2, ['write_file', 'read_file']],
      ])
    } finally {
      server.close()
    }
  })

  it('says so in text when no offered tool matches the script', async () => {
    const lone = new ScriptedModel({ replies: [{ call: 'Edit', input: {} }] })
    const { answer } = lone.answer({ tools: [{ name: 'Bash' }] })
    expect(answer).toEqual({ kind: 'text', text: expect.stringContaining('none of Edit is among the offered tools (Bash)') })
  })
})
