/**
 * A scripted model: an HTTP server on 127.0.0.1 that speaks the wire
 * protocols the pinned harnesses speak to their models, records every request
 * it receives, and answers from a script instead of thinking. Its compiled
 * file imports nothing but Node's built-ins, so it is copied into any harness
 * container and run there with the container's own `node`:
 *
 *   node scripted-model.mjs --script script.json --log requests.jsonl [--port N] [--ready file]
 *     [--host ADDRESS] [--tls-cert cert.pem --tls-key key.pem]
 *
 * - the Anthropic Messages API (`POST /v1/messages`, streamed or not), with
 *   `POST /v1/messages/count_tokens` and `GET /v1/models`: Claude Code, and
 *   OpenCode through its bundled Anthropic provider;
 * - the OpenAI Responses API (`POST /v1/responses`, streamed), with
 *   `GET /v1/models`: Codex through a custom model provider;
 * - OpenAI Chat Completions (`POST …/chat/completions`, streamed or not): the
 *   harnesses that speak to any OpenAI-compatible endpoint;
 * - Gemini's `generateContent` and `streamGenerateContent` (`POST
 *   …/models/<model>:<method>`, server-sent events with `alt=sse`, else one
 *   JSON array): Gemini CLI and its forks;
 * - a subscription login's token endpoint (`POST …/oauth/token`), and the
 *   ChatGPT backend's account check Codex makes on such a login.
 *
 * Every request offering tools is the conversation and gets the script's next
 * reply; a request offering none (a title, a summary) gets `aside` text and
 * leaves the script where it is. Anything else is answered 404 and recorded.
 *
 * Longer than 400 lines: it is one program, copied alone into a container and
 * run with Node's built-ins only, so its parts cannot live in modules of their own.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
// Types only: importing node:http as a module loads Node's fetch and zlib (tens of ms), and this
// file is part of the CLI's bundle, so the server is loaded when one listens.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { pathToFileURL } from 'node:url'

/** One scripted answer: text that ends the turn, or one tool call (with optional text before it). */
export type ScriptReply =
  | { readonly text: string }
  | {
      /**
       * The tool to call: a name, `/regex/` over the offered names, or a list
       * of either, first offered wins (each harness names its tools its way).
       */
      readonly call: string | readonly string[]
      /** Arguments: an object for a function tool, a string for a free-form (custom) tool. */
      readonly input: Readonly<Record<string, unknown>> | string
      readonly text?: string
    }

export interface Script {
  readonly replies: readonly ScriptReply[]
  /** The one model the model list declares; default `scripted`. */
  readonly model?: string
  /** The answer to a request that offers no tools; default "ok". */
  readonly aside?: string
  /** The answer once the replies are spent; default "done". */
  readonly done?: string
}

export type Protocol = 'anthropic' | 'responses' | 'chat' | 'gemini'

/** One line of the request log. */
export interface RecordedRequest {
  readonly n: number
  readonly method: string
  readonly path: string
  readonly protocol: Protocol | null
  /** Names of the tools the request offered (`<namespace>__<name>` inside a Responses namespace). */
  readonly tools: readonly string[]
  /** Index of the script reply given, `null` for an aside or another endpoint. */
  readonly reply: number | null
  /** What was answered, for reading a log. */
  readonly answered: string
  /** The request's headers, as received (what a proxy in front of the model sent). */
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>
  readonly body: unknown
}

/** A call the script asked for, resolved against what the request offered. */
export interface ResolvedCall {
  readonly name: string
  readonly input: Readonly<Record<string, unknown>> | string
  /** Free-form tool (Responses `custom`): the input goes as text. */
  readonly custom: boolean
  readonly namespace?: string
  readonly text?: string
}

export type Answer = { readonly kind: 'text'; readonly text: string } | { readonly kind: 'call'; readonly call: ResolvedCall; readonly id: string }

/** Every string anywhere in a request body, joined: what the model was told. */
export function requestText(body: unknown): string {
  const out: string[] = []
  const walk = (value: unknown) => {
    if (typeof value === 'string') out.push(value)
    else if (Array.isArray(value)) value.forEach(walk)
    else if (value && typeof value === 'object') Object.values(value).forEach(walk)
  }
  walk(body)
  return out.join('\n')
}

interface OfferedTool {
  readonly name: string
  readonly custom: boolean
  /** The Responses namespace the tool sits in; a call names it beside the tool's own name. */
  readonly namespace?: string
}

/**
 * The tools a request offers: Anthropic `tools[].name`, Responses function/custom tools and
 * namespaced MCP tools, Chat Completions `tools[].function.name`, Gemini
 * `tools[].functionDeclarations[].name`.
 */
export function offeredTools(body: unknown): OfferedTool[] {
  const tools = (body as { tools?: unknown })?.tools
  if (!Array.isArray(tools)) return []
  const out: OfferedTool[] = []
  for (const t of tools as Array<Record<string, unknown>>) {
    if (!t || typeof t !== 'object') continue
    const fn = t['function'] as Record<string, unknown> | undefined
    if (typeof fn?.['name'] === 'string') {
      out.push({ name: fn['name'], custom: false })
      continue
    }
    if (Array.isArray(t['functionDeclarations'])) {
      for (const d of t['functionDeclarations'] as Array<Record<string, unknown>>) if (typeof d?.['name'] === 'string') out.push({ name: d['name'], custom: false })
      continue
    }
    if (Array.isArray(t['tools'])) {
      // A Responses namespace groups tools (Codex's MCP servers); its members are called by their own names.
      const namespace = typeof t['name'] === 'string' ? t['name'] : undefined
      for (const inner of t['tools'] as Array<Record<string, unknown>>) {
        if (typeof inner?.['name'] === 'string') out.push({ name: inner['name'], custom: inner['type'] === 'custom', ...(namespace ? { namespace } : {}) })
      }
      continue
    }
    if (typeof t['name'] === 'string') out.push({ name: t['name'], custom: t['type'] === 'custom' })
  }
  return out
}

const matches = (wanted: string, name: string) => {
  const re = /^\/(.*)\/$/.exec(wanted)
  return re ? new RegExp(re[1]!).test(name) : wanted === name
}

/** The call a reply asks for among the offered tools, or why there is none. */
export function resolveCall(reply: Extract<ScriptReply, { call: unknown }>, offered: readonly OfferedTool[]): ResolvedCall | { readonly missing: string } {
  const wanted = typeof reply.call === 'string' ? [reply.call] : reply.call
  for (const w of wanted) {
    const tool = offered.find((t) => matches(w, t.name) || (t.namespace !== undefined && matches(w, `${t.namespace}__${t.name}`)))
    if (tool) return { name: tool.name, input: reply.input, custom: tool.custom, ...(tool.namespace ? { namespace: tool.namespace } : {}), ...(reply.text ? { text: reply.text } : {}) }
  }
  return { missing: `scripted model: none of ${wanted.join(', ')} is among the offered tools (${offered.map((t) => t.name).join(', ')})` }
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`

const argumentsOf = (call: ResolvedCall) => (typeof call.input === 'string' ? call.input : JSON.stringify(call.input))

/** An Anthropic Messages stream for one answer, in the documented event order. */
export function anthropicStream(answer: Answer, model: string, id: string): string {
  const events: string[] = []
  const usage = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
  events.push(sse('message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } }))
  let index = 0
  const text = answer.kind === 'text' ? answer.text : answer.call.text
  if (text) {
    events.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }))
    events.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } }))
    events.push(sse('content_block_stop', { type: 'content_block_stop', index }))
    index++
  }
  if (answer.kind === 'call') {
    events.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: answer.id, name: answer.call.name, input: {} } }))
    events.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: argumentsOf(answer.call) } }))
    events.push(sse('content_block_stop', { type: 'content_block_stop', index }))
  }
  const stop = answer.kind === 'call' ? 'tool_use' : 'end_turn'
  events.push(sse('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 1 } }))
  events.push(sse('message_stop', { type: 'message_stop' }))
  return events.join('')
}

/** The same answer as one non-streamed Anthropic message. */
export function anthropicMessage(answer: Answer, model: string, id: string): unknown {
  const content: unknown[] = []
  const text = answer.kind === 'text' ? answer.text : answer.call.text
  if (text) content.push({ type: 'text', text })
  if (answer.kind === 'call') content.push({ type: 'tool_use', id: answer.id, name: answer.call.name, input: typeof answer.call.input === 'string' ? {} : answer.call.input })
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: answer.kind === 'call' ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  }
}

/** An OpenAI Responses stream for one answer: created, each output item added and done, completed. */
export function responsesStream(answer: Answer, model: string, id: string): string {
  const events: string[] = []
  let seq = 0
  const emit = (type: string, data: Record<string, unknown>) => events.push(sse(type, { type, sequence_number: seq++, ...data }))
  const base = { id, object: 'response', created_at: 0, model, status: 'in_progress', output: [] as unknown[] }
  emit('response.created', { response: base })
  emit('response.in_progress', { response: base })
  const output: unknown[] = []
  const text = answer.kind === 'text' ? answer.text : answer.call.text
  if (text) {
    const index = output.length
    const itemId = `msg_${id}_${index}`
    const part = { type: 'output_text', text, annotations: [] }
    emit('response.output_item.added', { output_index: index, item: { type: 'message', id: itemId, role: 'assistant', status: 'in_progress', content: [] } })
    emit('response.content_part.added', { item_id: itemId, output_index: index, content_index: 0, part: { ...part, text: '' } })
    emit('response.output_text.delta', { item_id: itemId, output_index: index, content_index: 0, delta: text })
    emit('response.output_text.done', { item_id: itemId, output_index: index, content_index: 0, text })
    emit('response.content_part.done', { item_id: itemId, output_index: index, content_index: 0, part })
    const item = { type: 'message', id: itemId, role: 'assistant', status: 'completed', content: [part] }
    emit('response.output_item.done', { output_index: index, item })
    output.push(item)
  }
  if (answer.kind === 'call') {
    const index = output.length
    const itemId = `fc_${id}_${index}`
    const call = answer.call
    const done = call.custom
      ? { type: 'custom_tool_call', id: itemId, call_id: answer.id, name: call.name, input: argumentsOf(call), status: 'completed' }
      : { type: 'function_call', id: itemId, call_id: answer.id, name: call.name, ...(call.namespace ? { namespace: call.namespace } : {}), arguments: argumentsOf(call), status: 'completed' }
    emit('response.output_item.added', { output_index: index, item: { ...done, status: 'in_progress', ...(call.custom ? { input: '' } : { arguments: '' }) } })
    if (call.custom) {
      emit('response.custom_tool_call_input.delta', { item_id: itemId, output_index: index, delta: argumentsOf(call) })
      emit('response.custom_tool_call_input.done', { item_id: itemId, output_index: index, input: argumentsOf(call) })
    } else {
      emit('response.function_call_arguments.delta', { item_id: itemId, output_index: index, delta: argumentsOf(call) })
      emit('response.function_call_arguments.done', { item_id: itemId, output_index: index, arguments: argumentsOf(call) })
    }
    emit('response.output_item.done', { output_index: index, item: done })
    output.push(done)
  }
  emit('response.completed', {
    response: { ...base, status: 'completed', output, usage: { input_tokens: 1, input_tokens_details: { cached_tokens: 0 }, output_tokens: 1, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 2 } },
  })
  return events.join('')
}

/** An OpenAI Chat Completions answer: one completion, or its chunks as server-sent events ending in `[DONE]`. */
export function chatCompletion(answer: Answer, model: string, id: string, stream: boolean): string {
  const text = answer.kind === 'text' ? answer.text : (answer.call.text ?? null)
  const calls = answer.kind === 'call' ? [{ id: answer.id, type: 'function', function: { name: answer.call.name, arguments: argumentsOf(answer.call) } }] : undefined
  const finish = answer.kind === 'call' ? 'tool_calls' : 'stop'
  const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
  const head = { id, created: 0, model }
  if (!stream) {
    const message = { role: 'assistant', content: text, ...(calls ? { tool_calls: calls } : {}) }
    return JSON.stringify({ ...head, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage })
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`
  const out = [chunk({ role: 'assistant', content: '' }, null)]
  if (text) out.push(chunk({ content: text }, null))
  if (calls) out.push(chunk({ tool_calls: calls.map((c, index) => ({ index, ...c })) }, null))
  out.push(chunk({}, finish, { usage }), 'data: [DONE]\n\n')
  return out.join('')
}

/** A Gemini `generateContent` response for one answer: the model's parts, text and a function call. */
export function geminiResponse(answer: Answer, model: string): unknown {
  const text = answer.kind === 'text' ? answer.text : answer.call.text
  const parts: unknown[] = []
  if (text) parts.push({ text })
  if (answer.kind === 'call') parts.push({ functionCall: { name: answer.call.name, args: typeof answer.call.input === 'string' ? {} : answer.call.input } })
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
    modelVersion: model,
  }
}

/**
 * New tokens for the `n`th refresh, shaped as the issuer that was asked makes them: OpenAI's
 * (a refresh naming a `client_id`, as Codex's does) are JWTs with an identity token beside them,
 * whose claims carry the ChatGPT account; Anthropic's are opaque, with the scopes granted, without
 * which Claude Code keeps its old token.
 */
export function refreshed(n: number, request: unknown): Record<string, unknown> {
  const clientId = (request as { client_id?: unknown } | null)?.client_id
  if (typeof clientId === 'string' && clientId.startsWith('app_')) {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
    const now = Math.floor(Date.now() / 1000)
    const claims = { iat: now, exp: now + 28_800, 'https://api.openai.com/auth': { chatgpt_account_id: 'scripted-account', chatgpt_user_id: 'scripted-user', chatgpt_plan_type: 'pro' } }
    const jwt = (extra: Record<string, unknown>) => `${part({ alg: 'RS256', typ: 'JWT' })}.${part({ ...claims, ...extra })}.scripted-signature-${n}`
    return { access_token: jwt({ jti: `scripted-access-${n}` }), id_token: jwt({ email: 'scripted@example.com' }), refresh_token: `rt_scripted-refresh-${n}`, expires_in: 28_800, token_type: 'Bearer' }
  }
  return { access_token: `sk-ant-oat01-scripted-access-${n}`, refresh_token: `sk-ant-ort01-scripted-refresh-${n}`, expires_in: 28_800, token_type: 'Bearer', scope: 'user:inference user:profile user:sessions:claude_code' }
}

/** A request body as sent: Codex compresses what it sends the ChatGPT backend with zstd. */
async function decoded(body: Buffer, encoding: string | undefined): Promise<Buffer> {
  if (!encoding || encoding === 'identity' || body.length === 0) return body
  const zlib = await import('node:zlib')
  if (encoding === 'zstd') return zlib.zstdDecompressSync(body)
  if (encoding === 'gzip') return zlib.gunzipSync(body)
  if (encoding === 'br') return zlib.brotliDecompressSync(body)
  if (encoding === 'deflate') return zlib.inflateSync(body)
  return body
}

/** The model a model list declares unless the script names another. */
export const SCRIPTED = 'scripted'

/**
 * The answer to `GET /v1/models`: one model, in each shape a harness reads.
 * `data` is the OpenAI and Anthropic list. `models` is Codex's catalog, where
 * a model's metadata decides which tools Codex offers it: `apply_patch_tool_type`
 * `freeform` makes Codex offer `apply_patch` (a free-form tool taking the
 * patch as text), which it never offers a model it has no metadata for.
 */
export function modelList(model: string): unknown {
  const data = [{ id: model, type: 'model', object: 'model', display_name: 'Scripted', created_at: '2025-01-01T00:00:00Z', created: 0, owned_by: 'omh' }]
  const codex = {
    slug: model,
    display_name: 'Scripted',
    description: 'omh scripted model',
    supported_reasoning_levels: [],
    shell_type: 'shell_command',
    visibility: 'list',
    supported_in_api: true,
    priority: 0,
    upgrade: null,
    base_instructions: 'You are a scripted model.',
    supports_reasoning_summaries: false,
    support_verbosity: false,
    default_verbosity: null,
    apply_patch_tool_type: 'freeform',
    truncation_policy: { mode: 'bytes', limit: 10000 },
    supports_parallel_tool_calls: false,
    context_window: 200000,
    experimental_supported_tools: [],
  }
  return { data, object: 'list', has_more: false, first_id: model, last_id: model, models: [codex] }
}

/** The scripted model's state: the script, where it is, and the log. */
export class ScriptedModel {
  private next = 0
  private count = 0
  readonly requests: RecordedRequest[] = []

  constructor(
    private readonly script: Script,
    private readonly log?: string,
  ) {}

  /** The answer to a conversation request (tools offered), advancing the script, or an aside. */
  answer(body: unknown): { answer: Answer; reply: number | null } {
    this.count++
    const offered = offeredTools(body)
    if (!offered.length) return { answer: { kind: 'text', text: this.script.aside ?? 'ok' }, reply: null }
    const at = this.next++
    const reply = this.script.replies[at]
    if (!reply) return { answer: { kind: 'text', text: this.script.done ?? 'done' }, reply: at }
    if ('text' in reply && !('call' in reply)) return { answer: { kind: 'text', text: reply.text }, reply: at }
    const call = resolveCall(reply as Extract<ScriptReply, { call: unknown }>, offered)
    if ('missing' in call) return { answer: { kind: 'text', text: call.missing }, reply: at }
    return { answer: { kind: 'call', call, id: `call_${this.count}` }, reply: at }
  }

  /** How many OAuth refreshes were answered. */
  private refreshes = 0

  record(entry: Omit<RecordedRequest, 'n'>): void {
    const line = { n: this.requests.length + 1, ...entry }
    this.requests.push(line)
    if (this.log) appendFileSync(this.log, `${JSON.stringify(line)}\n`)
  }

  /** Handles one HTTP request. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const raw = (await decoded(Buffer.concat(chunks), req.headers['content-encoding'])).toString('utf8')
    let body: unknown = raw
    try {
      // A form (an OAuth refresh, as OpenCode sends one) is read as the object it encodes.
      body = !raw ? null : /x-www-form-urlencoded/i.test(String(req.headers['content-type'] ?? '')) ? Object.fromEntries(new URLSearchParams(raw)) : JSON.parse(raw)
    } catch {
      // Recorded as the text it was.
    }
    const route = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '')
    const method = req.method ?? 'GET'
    // A namespaced tool is logged as `<namespace>__<name>`, so the server it belongs to shows.
    const tools = offeredTools(body).map((t) => (t.namespace ? `${t.namespace}__${t.name}` : t.name))
    const model = String((body as { model?: unknown })?.model ?? 'scripted')
    const json = (status: number, value: unknown, answered: string, protocol: Protocol | null = null) => {
      this.record({ method, path: route, protocol, tools, reply: null, answered, headers: req.headers, body })
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(value))
    }

    // An OAuth refresh (RFC 6749 §6), as a subscription login's token endpoint answers one: new tokens
    // each time, and the scopes granted, without which a harness keeps its old token.
    if (method === 'POST' && route.endsWith('/oauth/token')) {
      const n = ++this.refreshes
      return json(200, refreshed(n, body), `refreshed ${n}`)
    }
    // The ChatGPT backend's workspace discovery, which Codex asks before its first model request on
    // a ChatGPT login: the account the request names, served from the address it already uses.
    if (method === 'GET' && route.endsWith('/wham/accounts/check')) {
      const id = String(req.headers['chatgpt-account-id'] ?? '')
      return json(200, { accounts: [{ id, workspace_backend_origin: 'NO_CONSTRAINT', account_routing_override: 'NO_CONSTRAINT' }], account_ordering: [id] }, 'accounts')
    }
    if (method === 'POST' && route.endsWith('/messages/count_tokens')) return json(200, { input_tokens: Math.ceil(raw.length / 4) }, 'count_tokens', 'anthropic')
    if (method === 'GET' && route.endsWith('/models')) return json(200, modelList(this.script.model ?? SCRIPTED), 'models')
    const protocol = method === 'POST' ? protocolOf(route) : null
    if (!protocol) return json(404, { error: { type: 'not_found_error', message: `the scripted model does not answer ${method} ${route}` } }, 'not found')

    const { answer, reply } = this.answer(body)
    const answered = answer.kind === 'text' ? `text: ${answer.text}` : `call ${answer.call.name}`
    this.record({ method, path: route, protocol, tools, reply, answered, headers: req.headers, body })
    const id = `scripted_${this.requests.length}`
    if (protocol === 'chat') {
      const stream = (body as { stream?: unknown })?.stream === true
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json', ...(stream ? { 'cache-control': 'no-cache', connection: 'close' } : {}) })
      res.end(chatCompletion(answer, model, id, stream))
      return
    }
    if (protocol === 'gemini') {
      // The model is named in the path (`models/<model>:<method>`), not the body.
      const named = /models\/([^/:]+):/.exec(route)?.[1] ?? model
      const reply = geminiResponse(answer, named)
      const events = /[?&]alt=sse(&|$)/.test(req.url ?? '')
      const streamed = route.endsWith(':streamGenerateContent')
      res.writeHead(200, { 'content-type': events ? 'text/event-stream' : 'application/json' })
      res.end(events ? `data: ${JSON.stringify(reply)}\n\n` : JSON.stringify(streamed ? [reply] : reply))
      return
    }
    const stream = (body as { stream?: unknown })?.stream === true || protocol === 'responses'
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(anthropicMessage(answer, model, id)))
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'close' })
    res.end(protocol === 'anthropic' ? anthropicStream(answer, model, id) : responsesStream(answer, model, id))
  }

  /**
   * Listens on 127.0.0.1 (port 0: any free one), or on `host`, over TLS when given a certificate
   * and key (PEM), as a real API host would; resolves with the port.
   */
  async listen(port = 0, options: { host?: string; tls?: { cert: string; key: string } } = {}): Promise<{ server: Server; port: number }> {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: String(error) } }))
      })
    }
    const server: Server = options.tls ? (await import('node:https')).createServer(options.tls, handler) : (await import('node:http')).createServer(handler)
    return new Promise((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, options.host ?? '127.0.0.1', () => {
        const address = server.address()
        resolve({ server, port: typeof address === 'object' && address ? address.port : port })
      })
    })
  }
}

/** The protocol a POST's path asks for, or none the scripted model speaks. */
function protocolOf(route: string): Protocol | null {
  if (route.endsWith('/messages')) return 'anthropic'
  if (route.endsWith('/responses')) return 'responses'
  if (route.endsWith('/chat/completions')) return 'chat'
  if (/\/models\/[^/]+:(stream)?[gG]enerateContent$/.test(route)) return 'gemini'
  return null
}

function option(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name)
  return at === -1 ? undefined : args[at + 1]
}

/** `node scripted-model.js [--script f] [--log f] [--port n] [--host h] [--tls-cert f --tls-key f] [--ready f]`. */
async function serve(args: readonly string[]): Promise<void> {
  const scriptFile = option(args, '--script')
  const script: Script = scriptFile ? (JSON.parse(readFileSync(scriptFile, 'utf8')) as Script) : { replies: [] }
  const log = option(args, '--log')
  if (log) writeFileSync(log, '')
  const cert = option(args, '--tls-cert')
  const key = option(args, '--tls-key')
  const host = option(args, '--host')
  const tls = cert && key ? { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') } : undefined
  const { port } = await new ScriptedModel(script, log).listen(Number(option(args, '--port') ?? 0), { ...(host ? { host } : {}), ...(tls ? { tls } : {}) })
  const ready = option(args, '--ready')
  if (ready) writeFileSync(ready, String(port))
  process.stdout.write(`scripted model on ${tls ? 'https' : 'http'}://${host ?? '127.0.0.1'}:${port}\n`)
}

// Not a top-level await: omh's bundle, which holds this module, is a script.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void serve(process.argv.slice(2))
