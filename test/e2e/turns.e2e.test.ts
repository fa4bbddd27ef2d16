/**
 * Real turns: Claude Code (`claude -p`), Codex (`codex exec`) and OpenCode
 * (`opencode run`) in omh's own session containers, on Docker and Podman,
 * driven by the scripted model (packages/doctor/src/scripted-model.ts)
 * on 127.0.0.1 inside the container. The profile (test/fixtures/turns) holds
 * rules, a skill, a command, a subagent, a stdio MCP server built on the
 * official SDK (baked into the image by the adapters below) and hooks at every
 * moment, each of which leaves a mark or says a marked text. Everything is
 * asserted from the requests the model received and from the container's
 * files: nothing is taken from a listing.
 *
 * One session container per harness per engine; its image is built once.
 */
import { execFileSync, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RecordedRequest, Script } from '../../packages/doctor/src/scripted-model.js'
import { requestText } from '../../packages/doctor/src/scripted-model.js'
import { ENGINES, TEST_BASE, client, type Engine } from '../helpers/engines.js'
import { BIN, ROOT, finished, stateOf } from '../helpers/run.js'
import { heardRequests, startScriptedModel, turnArgs } from '../helpers/turns.js'

const FIXTURE = path.join(ROOT, 'test/fixtures/turns')
const ALL = ['claude', 'codex', 'opencode'] as const
type Harness = (typeof ALL)[number]
/** Every harness on both engines; OMH_TURN_HARNESSES and OMH_TURN_ENGINES (comma lists) narrow a run by hand. */
const HARNESSES = ALL.filter((h) => (process.env['OMH_TURN_HARNESSES'] ?? h).split(',').includes(h))
const ON = ENGINES.filter((e) => (process.env['OMH_TURN_ENGINES'] ?? e).split(',').includes(e))

/** The SDK server, installed at image build beside the harness (under $OMH_PREFIX, which reaches the session). Pinned, so the image tag stays put. */
const MCP_INSTALL = `
mkdir -p "$OMH_PREFIX/turn-mcp"
cd "$OMH_PREFIX/turn-mcp"
printf '{"type":"module","private":true}\\n' > package.json
npm install --no-audit --no-fund @modelcontextprotocol/sdk@1.32.2 zod@4.6.7
cat > server.mjs <<'JS'
${readFileSync(path.join(FIXTURE, 'mcp-record.mjs'), 'utf8')}JS
`

/** The bundled adapter, its install extended by the MCP server: everything else as shipped. */
function adapterWithMcp(harness: Harness): string {
  const bundled = readFileSync(path.join(ROOT, 'adapters', `${harness}.toml`), 'utf8')
  const line = /^install = "(.*)"$/m.exec(bundled)
  if (!line) throw new Error(`adapters/${harness}.toml: no one-line install`)
  return bundled.replace(line[0], `install = '''\n${line[1]}\n${MCP_INSTALL}'''`)
}

/** What each harness is told to do, in its own tool names, and the arguments its turn needs. */
const SCRIPTS: Record<Harness, Script> = {
  claude: {
    replies: [
      { call: 'Bash', input: { command: 'git push origin HEAD', description: 'push' } },
      // Claude defers MCP tools behind its tool search by default: the model loads one before calling it.
      { call: 'ToolSearch', input: { query: 'select:mcp__turn__record', max_results: 5 } },
      { call: '/^mcp__turn__record$/', input: { note: 'turn-note-claude' } },
      { call: 'Bash', input: { command: 'echo shell-ok', description: 'say ok' } },
      { call: 'Write', input: { file_path: '/work/turn-made.txt', content: 'made by the turn\n' } },
      { call: 'Read', input: { file_path: '/work/turn-made.txt' } },
      // Offered because the adapter's `args` give every session --allowedTools naming Grep and Glob.
      { call: 'Grep', input: { pattern: 'made by the turn', path: '/work' } },
      { text: 'Done.' },
    ],
  },
  codex: {
    replies: [
      { call: 'exec_command', input: { cmd: 'git push origin HEAD' } },
      // Codex starts MCP servers beside its first request, so the call comes once a shell call has run.
      { call: 'exec_command', input: { cmd: 'echo shell-ok' } },
      { call: '/^mcp__turn__record$/', input: { note: 'turn-note-codex' } },
      // A free-form tool: Codex offers it because the scripted model's catalog says so (docs/scripted-model.md).
      { call: 'apply_patch', input: '*** Begin Patch\n*** Add File: turn-made.txt\n+made by the turn\n*** End Patch\n' },
      { text: 'Done.' },
    ],
  },
  opencode: {
    replies: [
      { call: 'bash', input: { command: 'git push origin HEAD', description: 'push' } },
      { call: '/^turn_record$/', input: { note: 'turn-note-opencode' } },
      { call: 'bash', input: { command: 'echo shell-ok', description: 'say ok' } },
      { call: 'write', input: { filePath: '/work/turn-made.txt', content: 'made by the turn\n' } },
      { call: 'read', input: { filePath: '/work/turn-made.txt' } },
      { call: 'grep', input: { pattern: 'made by the turn', path: '/work' } },
      { text: 'Done.' },
    ],
  },
}

const TURN_ARGS = turnArgs('Do the scripted task.')

/**
 * The policy advisor: a harness's shell call is refused a host, and the refusal the model reads says
 * what allows it; the user runs that on the host while the turn goes on, and the same turn gets
 * through, the session never restarted. Claude everywhere, one other harness per engine.
 */
const ADVISED: Record<Engine, readonly Harness[]> = { docker: ['claude', 'codex'], podman: ['claude', 'opencode'] }
const ADVICE_HOST = 'advice.test'
const ASK_ADVICE = `node /work/.omh-turn/client.cjs body http://${ADVICE_HOST}/`
const RETRY_ADVICE = `for i in $(seq 300); do r=$(${ASK_ADVICE}); case "$r" in "result=200 "*) break;; esac; sleep 0.3; done; echo "$r"`
const shellCall = (harness: Harness, command: string): Script['replies'][number] =>
  harness === 'codex' ? { call: 'exec_command', input: { cmd: command } } : { call: harness === 'claude' ? 'Bash' : 'bash', input: { command, description: 'fetch the page' } }
const adviceScript = (harness: Harness): Script => ({ replies: [shellCall(harness, ASK_ADVICE), shellCall(harness, RETRY_ADVICE), { text: 'Done.' }] })

/** Each hook's evidence: a line of the marks file, or a text the model must have been told. */
const HOOKS: Record<string, { mark: string } | { text: string }> = {
  'start-run': { mark: 'start-run' },
  'start-inject': { text: 'TURN-START-INJECT-b3e1' },
  'no-push': { text: 'TURN-REFUSE-0a9c' },
  'before-run': { mark: 'before-run' },
  'before-inject': { text: 'TURN-BEFORE-INJECT-77d2' },
  'after-run': { mark: 'after-run' },
  'after-inject': { text: 'TURN-AFTER-INJECT-e5c4' },
  'edit-run': { mark: 'edit-run' },
  'read-run': { mark: 'read-run' },
  'search-run': { mark: 'search-run' },
  'end-run': { mark: 'end-run' },
  'end-inject': { text: 'TURN-END-INJECT-31aa' },
}

const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }

/** One assertion's outcome, for the checklist printed at the end. */
interface Outcome {
  readonly what: string
  readonly ok: boolean
  readonly detail: string
}

describe.each(ON)('real turns on %s', (engine: Engine) => {
  let scratch: string
  let home: string
  let repo: string
  const checklist: Record<string, Outcome[]> = {}
  const omh = (args: readonly string[]) =>
    finished(spawn(process.execPath, [BIN, ...args], { cwd: repo, env: { ...process.env, NO_COLOR: '1', OMH_HOME: home, OMH_STATE: stateOf(home), ...identity }, stdio: ['ignore', 'pipe', 'pipe'] }), 600_000)

  beforeAll(() => {
    scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-turns-e2e-')))
    home = path.join(scratch, 'omh')
    cpSync(path.join(FIXTURE, 'profile'), home, { recursive: true })
    writeFileSync(path.join(home, 'settings.toml'), `runtime = "${engine}"\n\n[image]\nbase = "${TEST_BASE}"\nnetwork = "host"\n`)
    mkdirSync(path.join(home, 'adapters'))
    for (const h of ALL) writeFileSync(path.join(home, 'adapters', `${h}.toml`), adapterWithMcp(h))
    repo = path.join(scratch, 'repo')
    cpSync(path.join(FIXTURE, 'project'), repo, { recursive: true })
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe', env: { ...process.env, ...identity } })
    git('init', '-q', '-b', 'main')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
  })

  afterAll(async () => {
    if (!home) return
    const worktrees = path.join(stateOf(home), 'worktrees')
    for (const key of existsSync(worktrees) ? readdirSync(worktrees) : []) for (const sid of readdirSync(path.join(worktrees, key))) await omh(['sessions', 'rm', sid, '--force'])
    const tags = client(engine, ['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', 'label=omh.kind=harness']).stdout.split('\n')
    for (const tag of tags.filter(Boolean)) {
      const adapter = client(engine, ['image', 'inspect', '--format', '{{index .Config.Labels "omh.adapter"}}', tag]).stdout.trim()
      if (adapter.startsWith(home)) {
        const tools = client(engine, ['image', 'inspect', '--format', '{{index .Config.Labels "omh.tools"}}', tag]).stdout.trim()
        client(engine, ['rmi', tag])
        if (tools) client(engine, ['rmi', tools])
      }
    }
    rmSync(scratch, { recursive: true, force: true })
    const lines = Object.entries(checklist).flatMap(([harness, outcomes]) => [
      `${harness} on ${engine}:`,
      ...outcomes.map((o) => `  ${o.ok ? '✓' : '✗'} ${o.what}${o.detail ? ` — ${o.detail}` : ''}`),
    ])
    if (lines.length) process.stderr.write(`\nreal turns on ${engine}:\n${lines.join('\n')}\n`)
  })

  it.each(HARNESSES)('%s: a scripted turn reaches the model with the profile, the MCP server, and every hook omh did not announce as dropped', async (harness) => {
    const outcomes: Outcome[] = []
    checklist[harness] = outcomes
    const check = (what: string, ok: boolean, detail = '') => {
      outcomes.push({ what, ok, detail })
      expect.soft(ok, `${what}${detail ? `: ${detail}` : ''}`).toBe(true)
    }

    // The session and its container: a first launch that only asks the version.
    const first = await omh(['--new', harness, '--', '--version'])
    expect(first.status, first.stderr).toBe(0)
    const sid = /omh: \S+ on omh\/(s\d+)/.exec(first.stderr)?.[1]
    expect(sid, first.stderr).toBeDefined()
    const key = readdirSync(path.join(stateOf(home), 'worktrees'))[0]!
    const worktree = path.join(stateOf(home), 'worktrees', key, sid!)
    const container = client(engine, ['ps', '-q', '--filter', `label=omh.worktree=${worktree}`]).stdout.trim()
    expect(container, `no running container for ${worktree}`).not.toBe('')

    // The scripted model, started inside that container beside the harness.
    const turn = await startScriptedModel(engine, container, worktree, SCRIPTS[harness])

    const render = await omh(['render', harness, '--json'])
    const dropped = new Set<string>(JSON.parse(render.stdout).result.dropped.filter((d: { capability: string }) => d.capability === 'hooks').map((d: { name: string }) => d.name))

    const ran = await omh(['--session', sid!, harness, '--', ...TURN_ARGS[harness]])
    const said = `${ran.stdout}\n${ran.stderr}`.split('\n').slice(-30).join('\n')
    check('the turn ends with exit 0', ran.status === 0, ran.status === 0 ? '' : said)

    const requests = heardRequests(turn)
    const conversation = requests.filter((r) => r.reply !== null)
    const replies = SCRIPTS[harness].replies.length
    check(`the model was asked ${replies} times in the conversation, one per scripted reply`, conversation.length === replies, requests.map((r) => `${r.path} ${r.answered}`).join('; '))
    const texts = conversation.map((r) => requestText(r.body))
    const firstText = texts[0] ?? ''
    const firstTools = conversation[0]?.tools ?? []
    const marks = existsSync(path.join(turn, 'marks')) ? readFileSync(path.join(turn, 'marks'), 'utf8') : ''
    const mcpCalls = existsSync(path.join(turn, 'mcp.jsonl')) ? readFileSync(path.join(turn, 'mcp.jsonl'), 'utf8') : ''

    check('the first request carries the rules text', firstText.includes('TURN-RULE-5c1e'))
    check('the first request lists the skill', firstText.includes('turn-skill') && firstText.includes('TURN-SKILL-9d2b'))
    check('the first request lists the subagent', firstText.includes('turn-agent') && firstText.includes('TURN-AGENT-61f0'))
    const mcpTool = (r: RecordedRequest | undefined) => (r?.tools ?? []).some((t) => /record$/.test(t))
    if (harness === 'claude') {
      // A fact of Claude Code 2.1.332, not omh's choice: MCP tools are deferred (docs/scripted-model.md).
      check("the MCP server's tool is deferred: not in the first request, offered once the tool search loads it", !mcpTool(conversation[0]) && mcpTool(conversation[2]), conversation.map((r) => String(mcpTool(r))).join(' '))
      // The native build offers them only when --allowedTools names one: the adapter's `args` do, before the user's.
      check("the first request lists Grep and Glob, which the adapter's session arguments bring", firstTools.includes('Grep') && firstTools.includes('Glob'), firstTools.join(', '))
    } else if (harness === 'codex') {
      // Codex starts MCP servers beside its first request: a fast server is in it, a slow one in the next.
      const at = conversation.findIndex(mcpTool)
      check("the MCP server's tool is offered from the first or second request", at === 0 || at === 1, `first offered in request ${at + 1}`)
    } else check("the first request lists the MCP server's tool", mcpTool(conversation[0]), firstTools.join(', '))
    check('the scripted MCP call reaches the server', mcpCalls.includes(`turn-note-${harness}`), mcpCalls.trim())
    const made = path.join(worktree, 'turn-made.txt')
    check('the scripted edit made its file', existsSync(made) && readFileSync(made, 'utf8') === 'made by the turn\n')
    if (harness === 'codex') {
      // Codex offers apply_patch only to a model whose metadata asks for it: the scripted model's catalog.
      const patch = (conversation[0]?.body as { tools?: Array<{ name?: string; type?: string }> } | undefined)?.tools?.find((t) => t.name === 'apply_patch')
      check('apply_patch is offered as a free-form tool, from the catalog the model was asked for', requests.some((r) => r.path.endsWith('/models')) && patch?.type === 'custom', JSON.stringify(patch ?? null))
    }
    const afterPush = texts[1] ?? ''
    check('the scripted `git push` is refused, the refusal in the next request', afterPush.includes('TURN-REFUSE-0a9c'))
    check('the refusal names the command it refused', afterPush.includes('git push origin HEAD'))

    // Every hook omh did not announce as dropped left its evidence; every one it did, none.
    const fired = Object.entries(HOOKS)
      .filter(([, e]) => ('mark' in e ? marks.split('\n').some((l) => l.startsWith(e.mark)) : texts.some((t) => t.includes(e.text))))
      .map(([name]) => name)
    for (const [name, evidence] of Object.entries(HOOKS)) {
      const expected = !dropped.has(name)
      const seen = fired.includes(name)
      const label = dropped.has(name) ? 'was announced dropped and did not fire' : 'fired'
      check(`hook ${name} ${label}`, seen === expected, 'mark' in evidence ? `marks: ${marks.trim().split('\n').join(' | ')}` : `text ${evidence.text}`)
    }
    for (const [name, evidence] of Object.entries(HOOKS)) {
      if (!('text' in evidence) || dropped.has(name) || name === 'no-push') continue
      // An inject's text reaches the request after its moment, never the one before.
      // Start: the first request; before-tool: the one after the refused push; after-tool: the one after the first call that ran.
      const at = texts.findIndex((t) => t.includes(evidence.text))
      const moment = name.startsWith('start') ? 0 : name.startsWith('before') ? 1 : harness === 'opencode' ? 3 : 2
      // OpenCode 1.18.33 builds an MCP tool's result from the server's content, not from the output its
      // plugins amend: after-tool advice on the MCP call is lost, and first arrives after the shell call.
      const why = harness === 'opencode' && name === 'after-inject' ? ' (advice on the MCP call is lost)' : ''
      check(`hook ${name}'s text is first in request ${moment + 1}${why}`, at === moment, `first in request ${at + 1}`)
    }
    // omh's own state hooks ran beside the user's: the turn's end left the harness waiting for the user.
    const state = client(engine, ['exec', container, 'cat', `/omh/sock/${harness}.state`]).stdout
    check("omh's state hooks left `waiting` once the turn ended", /^\{"state":"waiting","at":\d+\}\n$/.test(state), JSON.stringify(state))
    if (harness === 'claude') {
      // The adapter's arguments come before the user's, and a root option before a subcommand is taken as such.
      const listed = await omh(['--session', sid!, harness, '--', 'mcp', 'list'])
      check("a subcommand still runs with the adapter's arguments before it", listed.status === 0 && /^turn: /m.test(listed.stdout), `${listed.status}: ${listed.stdout.trim()} ${listed.stderr.trim()}`.slice(-400))
    }
    check('the dropped hooks are announced at launch', dropped.size === 0 || new RegExp(`dropped .*\\b${dropped.size} hooks? `).test(first.stderr), `${[...dropped].join(', ')} / ${first.stderr.split('\n').find((l) => l.includes('dropped')) ?? 'no announcement'}`)
  })

  it.each(HARNESSES.filter((h) => ADVISED[engine].includes(h)))('%s: a refused host tells the model what allows it, and the same turn gets through once the user allows it', async (harness) => {
    // The proxies' way out when no setting names one, with a page on it that nothing allows yet.
    client(engine, ['network', 'create', '--label', 'omh.outside=true', 'omh-outside'])
    const web = `omh-e2e-advice-${engine}-${process.pid}`
    const server = 'require("http").createServer((q, s) => s.end("hello from " + q.headers.host + "\\n")).listen(80)'
    const started = client(engine, ['run', '-d', '--pull=never', '--name', web, '--label', 'omh.test=e2e', '--network', 'omh-outside', '--network-alias', ADVICE_HOST, TEST_BASE, 'node', '-e', server])
    expect(started.status, started.stderr).toBe(0)
    try {
      const first = await omh(['--new', harness, '--', '--version'])
      expect(first.status, first.stderr).toBe(0)
      const sid = /omh: \S+ on omh\/(s\d+)/.exec(first.stderr)![1]!
      const key = readdirSync(path.join(stateOf(home), 'worktrees'))[0]!
      const worktree = path.join(stateOf(home), 'worktrees', key, sid)
      const container = client(engine, ['ps', '-q', '--filter', `label=omh.worktree=${worktree}`]).stdout.trim()
      const turn = await startScriptedModel(engine, container, worktree, adviceScript(harness))
      cpSync(path.join(ROOT, 'test/fixtures/egress-client.cjs'), path.join(turn, 'client.cjs'))

      const running = omh(['--session', sid, harness, '--', ...TURN_ARGS[harness]])
      const hint = `omh sessions allow ${sid} ${ADVICE_HOST}:80`
      const told = () => existsSync(path.join(turn, 'requests.jsonl')) && heardRequests(turn).some((r) => requestText(r.body).includes(hint))
      for (let i = 0; i < 1200 && !told(); i++) await new Promise((r) => setTimeout(r, 100))
      expect(told(), 'the model was told what would allow the host').toBe(true)
      const allowed = await omh(hint.split(' ').slice(1))
      expect(allowed.status, allowed.stderr).toBe(0)
      expect(allowed.stdout).toContain(`${sid} may now reach ${ADVICE_HOST}:80`)

      const ran = await running
      expect(ran.status, `${ran.stdout}\n${ran.stderr}`.slice(-3000)).toBe(0)
      expect(ran.stderr).not.toContain('restarting')
      const texts = heardRequests(turn).filter((r) => r.reply !== null).map((r) => requestText(r.body))
      expect(texts.at(-1)).toContain(`result=200 hello from ${ADVICE_HOST}`)
      expect(client(engine, ['ps', '-q', '--filter', `label=omh.worktree=${worktree}`]).stdout.trim(), 'the same container').toBe(container)
      expect((await omh(['sessions', 'rm', sid, '--force'])).status).toBe(0)
    } finally {
      client(engine, ['rm', '-f', web])
    }
  })

  // Fifteen minutes: three harnesses started one after another, beside the other engine's suite.
  it('many agents at once: three detached from one shell, each state told once, read without attaching, watched in tmux', async () => {
    // Claude interactive asks whether it may run a shell command: that is waiting. Codex and OpenCode answer one prompt and exit.
    const script: Record<Harness, Script> = {
      claude: { replies: [{ call: 'Bash', input: { command: 'touch /work/made-by-the-tool', description: 'make a file' } }, { text: 'Done.' }] },
      codex: { replies: [{ text: 'MANY-AGENTS-CODEX-DONE' }] },
      opencode: { replies: [{ text: 'MANY-AGENTS-OPENCODE-DONE' }] },
    }
    const argsOf: Record<Harness, string[]> = { claude: ['--permission-mode', 'default', 'Make the file.'], codex: turnArgs('Say done.').codex, opencode: turnArgs('Say done.').opencode }
    // Claude interactive asks its first-run questions unless its state says they were answered and the key approved.
    const creds = path.join(stateOf(home), 'creds', 'claude', 'default')
    mkdirSync(creds, { recursive: true, mode: 0o700 })
    writeFileSync(path.join(creds, '.claude.json'), JSON.stringify({ hasCompletedOnboarding: true, customApiKeyResponses: { approved: ['omh-scripted'], rejected: [] }, projects: { '/work': { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } } }), { mode: 0o600 })
    // The notify command counts what it is told: one JSON document per run, on stdin.
    const events = path.join(scratch, 'events.jsonl')
    const counter = path.join(scratch, 'count.cjs')
    writeFileSync(counter, `let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => require('fs').appendFileSync(process.argv[2], JSON.stringify(JSON.parse(s)) + '\\n'))\n`)
    const settings = readFileSync(path.join(home, 'settings.toml'), 'utf8')
    // No network: the scripted model is inside each container, so no proxy starts beside them. OpenCode still
    // tries to install its plugin package at start and waits about a minute for the registry it cannot reach,
    // less than it waits on an engine whose proxy has no route out (docker here).
    writeFileSync(path.join(home, 'settings.toml'), `${settings}\n[network]\negress = "none"\n\n[notify]\ncommand = [${JSON.stringify(process.execPath)}, ${JSON.stringify(counter)}, ${JSON.stringify(events)}]\ndesktop = false\nterminal = "off"\n`)
    const notifierPid = () => Number(existsSync(path.join(stateOf(home), 'run', '.notifier', 'pid')) ? readFileSync(path.join(stateOf(home), 'run', '.notifier', 'pid'), 'utf8') : 0)
    const tmux = (...args: string[]) => execFileSync('tmux', ['-L', `omh-e2e-${engine}-${process.pid}`, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    // A repository of its own, beside the one whose sessions the turns above left: the view shows both.
    const many = path.join(scratch, 'many')
    cpSync(path.join(FIXTURE, 'project'), many, { recursive: true })
    for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['commit', '-q', '-m', 'init']]) execFileSync('git', args, { cwd: many, stdio: 'pipe', env: { ...process.env, ...identity } })
    const env = { ...process.env, NO_COLOR: '1', OMH_HOME: home, OMH_STATE: stateOf(home), ...identity }
    const omhIn = (args: readonly string[]) => finished(spawn(process.execPath, [BIN, ...args], { cwd: many, env, stdio: ['ignore', 'pipe', 'pipe'] }), 600_000)
    const sessions: Partial<Record<Harness, string>> = {}
    let other: string | undefined
    try {
      // A session in the first repository, whatever ran before.
      const elsewhere = await omh(['--new', 'codex', '--', '--version'])
      expect(elsewhere.status, elsewhere.stderr).toBe(0)
      other = /omh: \S+ on omh\/(s\d+)/.exec(elsewhere.stderr)![1]!
      for (const harness of ALL) {
        const first = await omhIn(['--new', harness, '--', '--version'])
        expect(first.status, first.stderr).toBe(0)
        const sid = /omh: \S+ on omh\/(s\d+)/.exec(first.stderr)![1]!
        const key = readdirSync(path.join(stateOf(home), 'worktrees')).find((name) => name.startsWith('many-'))!
        const worktree = path.join(stateOf(home), 'worktrees', key, sid)
        const container = client(engine, ['ps', '-q', '--filter', `label=omh.worktree=${worktree}`]).stdout.trim()
        await startScriptedModel(engine, container, worktree, script[harness])
        sessions[harness] = sid
      }
      // One shell starts all three and returns: each launch prints its session id and gives the terminal back.
      const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`
      const line = ALL.map((h) => [process.execPath, BIN, '--detach', '--session', sessions[h]!, h, '--', ...argsOf[h]].map(quote).join(' ')).join(' && ')
      const shell = await finished(spawn('sh', ['-c', line], { cwd: many, env, stdio: ['ignore', 'pipe', 'pipe'] }), 600_000)
      expect(shell.status, shell.stderr).toBe(0)
      expect(shell.stdout.trim().split('\n')).toEqual(ALL.map((h) => sessions[h]))

      // Each gets where its script leads, as this repository's list says; then the watch sees it too, beside the other repository's sessions.
      type Row = { id: string; state: { harness: string; state: string; exit?: number } | null }
      const want: Record<Harness, { state: string; exit?: number }> = { claude: { state: 'waiting' }, codex: { state: 'finished', exit: 0 }, opencode: { state: 'finished', exit: 0 } }
      let rows: Row[] = []
      const arrived = () => ALL.every((h) => rows.find((x) => x.id === sessions[h])?.state?.state === want[h].state)
      for (let n = 0; n < 300 && !arrived(); n++) {
        const ls = await omhIn(['--json', 'sessions', 'ls'])
        expect(ls.status, ls.stderr).toBe(0)
        rows = JSON.parse(ls.stdout).result.sessions as Row[]
        if (!arrived()) await new Promise((r) => setTimeout(r, 1000))
      }
      for (const h of ALL) expect(rows.find((x) => x.id === sessions[h])?.state, h).toMatchObject({ harness: h, ...want[h] })
      const watched = await omhIn(['sessions', 'watch', '--once', '--json'])
      expect(watched.status, watched.stderr).toBe(0)
      const board = JSON.parse(watched.stdout).result as { repositories: { repository: string; sessions: Row[] }[] }
      expect(board.repositories.map((r) => r.repository).sort()).toEqual([repo, many].sort())
      const mine = board.repositories.find((r) => r.repository === many)!.sessions
      for (const h of ALL) expect(mine.find((x) => x.id === sessions[h])?.state, h).toMatchObject({ harness: h, ...want[h] })

      // The notifier told each change once: Claude waiting, the others finished (a look may also have caught their turn's end, waiting, before the exit).
      type Told = { repository: string; session: string; branch: string; harness: string; state: string; exit?: number }
      const toldOf = (h: Harness): Told[] =>
        existsSync(events) ? readFileSync(events, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Told).filter((e) => e.repository === many && e.session === sessions[h]) : []
      for (let n = 0; n < 30 && !ALL.every((h) => toldOf(h).some((e) => e.state === want[h].state)); n++) await new Promise((r) => setTimeout(r, 1000))
      await new Promise((r) => setTimeout(r, 6000))
      for (const h of ALL) {
        const told = toldOf(h)
        expect(told.filter((e) => e.state === want[h].state), `${h}: ${JSON.stringify(told)}`).toHaveLength(1)
        expect(told.at(-1), h).toEqual({ repository: many, session: sessions[h], branch: `omh/${sessions[h]}`, harness: h, ...want[h], at: expect.any(Number) })
        for (let i = 1; i < told.length; i++) expect(told[i]!.state, `${h} told the same state twice`).not.toBe(told[i - 1]!.state)
        expect(told.length, h).toBeLessThanOrEqual(2)
      }

      // Read without attaching: what Codex printed.
      const logs = await omhIn(['sessions', 'logs', sessions.codex!])
      expect(logs.status, logs.stderr).toBe(0)
      expect(logs.stdout).toContain('MANY-AGENTS-CODEX-DONE')

      // The live view in a real terminal of 80 columns, captured from tmux.
      const vars = `NO_COLOR=1 OMH_HOME=${quote(home)} OMH_STATE=${quote(stateOf(home))}`
      tmux('new-session', '-d', '-s', 'watch', '-x', '80', '-y', '24', '-c', many, `env ${vars} ${quote(process.execPath)} ${quote(BIN)} sessions watch`)
      let screen = ''
      for (let n = 0; n < 60 && !ALL.every((h) => new RegExp(`^many +omh/${sessions[h]} `, 'm').test(screen)); n++) {
        await new Promise((r) => setTimeout(r, 1000))
        screen = tmux('capture-pane', '-p', '-t', 'watch')
      }
      const shown = screen.split('\n')
      for (const l of shown) expect(l.length, l).toBeLessThanOrEqual(80)
      expect(shown[0]).toMatch(/^omh sessions watch {2}\d+ sessions, \d+ working, [1-9]\d* waiting/)
      expect(screen).toMatch(new RegExp(`^many +omh/${sessions.claude} +claude +waiting `, 'm'))
      expect(screen).toMatch(new RegExp(`^many +omh/${sessions.codex} +codex +finished \\(exit 0\\) `, 'm'))
      expect(screen).toMatch(new RegExp(`^many +omh/${sessions.opencode} +opencode +finished \\(exit 0\\) `, 'm'))
      expect(screen, "the other repository's sessions are there too").toMatch(/^repo +omh\/s\d+ /m)

      // A hostile agent writes its state by hand: escapes and a command. The view shows unknown and nothing of it; the host runs nothing.
      const spoiled = '{"state":"\\u001b]0;owned\\u0007$(touch /tmp/omh-pwned)","at":1800000000}\n\u001b]0;owned-title\u0007'
      expect((await omhIn(['sessions', 'exec', sessions.claude!, '--', 'sh', '-c', 'printf %s "$1" > /omh/sock/claude.state', 'sh', spoiled])).status).toBe(0)
      for (let n = 0; n < 20 && !new RegExp(`^many +omh/${sessions.claude} +claude +unknown`, 'm').test(screen); n++) {
        await new Promise((r) => setTimeout(r, 1000))
        screen = tmux('capture-pane', '-p', '-e', '-t', 'watch')
      }
      expect(screen).toMatch(new RegExp(`^many +omh/${sessions.claude} +claude +unknown`, 'm'))
      expect(screen).not.toContain('owned')
      expect(screen).not.toContain('\u001b]')
      expect(existsSync('/tmp/omh-pwned')).toBe(false)
      // q leaves the view and gives the terminal back.
      tmux('send-keys', '-t', 'watch', 'q')
      const watching = () => {
        try {
          tmux('has-session', '-t', 'watch')
          return true
        } catch {
          return false
        }
      }
      for (let n = 0; n < 20 && watching(); n++) await new Promise((r) => setTimeout(r, 500))
      expect(watching(), 'q ended the watch').toBe(false)
      expect(readFileSync(events, 'utf8')).not.toContain('owned')
    } finally {
      try {
        tmux('kill-server')
      } catch {
        // Already gone with its last session.
      }
      const pid = notifierPid()
      if (pid) process.kill(pid, 'SIGTERM')
      writeFileSync(path.join(home, 'settings.toml'), settings)
      for (const h of ALL) if (sessions[h]) await omhIn(['sessions', 'rm', sessions[h]!, '--force'])
      if (other) await omh(['sessions', 'rm', other, '--force'])
    }
  }, 900_000)
})
