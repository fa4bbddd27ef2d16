/**
 * An API key kept outside the session, on Docker and Podman: a real turn of
 * Claude Code (`claude -p`) and of OpenCode (`opencode run`, its Anthropic
 * provider) in omh's session containers, the API key on the host only; and of
 * Codex (`codex exec`) and OpenCode's OpenAI provider, each with OPENAI_API_KEY,
 * on Docker alone: what they add to omh (arguments or a configuration variable
 * instead of a base URL variable) is the same code on both engines. The "API host" is the scripted model served over TLS by a container
 * on a separate network, under a name, with a certificate from a throwaway
 * authority that only omh's credential proxy is told to trust
 * (`OMH_CREDENTIAL_CA`). The turn must succeed, every request the upstream
 * received must carry the real key, and the key's bytes must be nowhere in
 * the session container: not in any process's environment (read during the
 * turn, and after it as root), not in any file it can see, not in anything
 * the proxy answers.
 *
 * The personal adapters are the bundled ones with only `upstream` changed, so
 * the sessions run from the bundled images (a tag depends on the install).
 * The key's variable, header and turn are each harness's own, as bundled.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RecordedRequest, Script } from '../../packages/doctor/src/scripted-model.js'
import { requestText } from '../../packages/doctor/src/scripted-model.js'
import { ENGINES, TEST_BASE, type Engine } from '../helpers/engines.js'
import { BIN, ROOT, finished, stateOf } from '../helpers/run.js'

const MODEL = path.join(ROOT, 'packages/doctor/dist/scripted-model.js')
const UPSTREAM = 'api.upstream.test'
/** More names of the same upstream: one a session may reach but no secret is bound to, one another secret is bound to. */
const UNBOUND = 'api.unbound.test'
const OTHER_HOST = 'api.other.test'
/** The hosts the subscription logins talk to, served by a second upstream on 443 under their real names. */
const LOGIN_HOSTS = ['api.anthropic.com', 'platform.claude.com', 'chatgpt.com', 'auth.openai.com']
const UPSTREAM_PORT = 8443
const PROMPT = 'Do the scripted task.'
/** In the project's README alone: what the search for the key must find, to show it finds what is there. */
const README_MARK = 'omh-readme-mark-5e07'
type Harness = 'claude' | 'opencode' | 'codex'
type Turn = Harness | 'opencode-openai'
const ON: Record<Engine, readonly Turn[]> = { docker: ['claude', 'opencode', 'codex', 'opencode-openai'], podman: ['claude', 'opencode'] }
/** The credential proxy's port for an adapter's first key; each further key has the next. */
const CREDS_PORT = 4480

// The shell call copies every process's environment it may read into a file while the turn runs.
const ENVIRONS = '/tmp/omh-environs'
const READ_ENVIRONS = `for f in /proc/[0-9]*/environ; do cat "$f"; echo; done > ${ENVIRONS} 2>/dev/null; echo shell-ok`
const bashScript: Script = { replies: [{ call: ['Bash', 'bash'], input: { command: READ_ENVIRONS, description: 'read environments' } }, { text: 'Done.' }] }

interface Case {
  readonly harness: Harness
  readonly variable: string
  /** The proxy's port for the key: the key's place in the adapter's [[keys]]. */
  readonly port: number
  readonly header: string
  readonly prefix: string
  /** The base URL the harness is given in its environment, if it reads one. */
  readonly baseUrl?: RegExp
  readonly turn: readonly string[]
  readonly script: Script
}
const CASES: Record<Turn, Case> = {
  claude: { harness: 'claude', variable: 'ANTHROPIC_API_KEY', port: CREDS_PORT, header: 'x-api-key', prefix: '', baseUrl: /ANTHROPIC_BASE_URL=http:\/\/omh-creds:\d+\0/, turn: ['-p', PROMPT, '--dangerously-skip-permissions'], script: bashScript },
  opencode: { harness: 'opencode', variable: 'ANTHROPIC_API_KEY', port: CREDS_PORT, header: 'x-api-key', prefix: '', baseUrl: /ANTHROPIC_BASE_URL=http:\/\/omh-creds:\d+\/v1/, turn: ['run', PROMPT], script: bashScript },
  // Codex offers its shell to a model it has metadata for: the scripted model's catalog, fetched through the proxy.
  codex: {
    harness: 'codex',
    variable: 'OPENAI_API_KEY',
    port: CREDS_PORT,
    header: 'authorization',
    prefix: 'Bearer ',
    turn: ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-c', `model_providers.omh-openai.model_catalog_url="http://omh-creds:${CREDS_PORT}/v1/models"`, '-m', 'scripted', PROMPT],
    script: { replies: [{ call: 'exec_command', input: { cmd: READ_ENVIRONS } }, { text: 'Done.' }] },
  },
  'opencode-openai': {
    harness: 'opencode',
    variable: 'OPENAI_API_KEY',
    port: CREDS_PORT + 1,
    header: 'authorization',
    prefix: 'Bearer ',
    baseUrl: /OPENCODE_CONFIG_CONTENT=\{"provider":\{"openai":\{"options":\{"baseURL":"http:\/\/omh-creds:\d+\/v1"\}\}\}\}/,
    turn: ['run', '-m', 'openai/gpt-5', PROMPT],
    script: bashScript,
  },
}
/** A JWT as an OAuth issuer signs one; the signature is random, so its bytes are this token's alone. */
const jwt = (claims: Record<string, unknown>) => {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.${randomBytes(32).toString('base64url')}`
}

/** A subscription login as the harness's own login flow leaves it, about to expire, so the launch must refresh it. */
interface LoginCase {
  readonly harness: Harness
  /** The login file, relative to the account's directory. */
  readonly file: string
  readonly tokens: () => { readonly access: string; readonly refresh: string; readonly id?: string }
  /** Every file of the account, the login file among them. */
  readonly files: (tokens: ReturnType<LoginCase['tokens']>) => Record<string, unknown>
  readonly turn: readonly string[]
  /** The access token the scripted token endpoint hands out first. */
  readonly refreshedAccess: RegExp
  /** What the login file must hold after the session: the vault's placeholders, a new expiry. */
  readonly holdsPlaceholders: (held: any, vault: any) => void
}
const CHATGPT_ACCOUNT = 'scripted-account'
const LOGINS: readonly LoginCase[] = [
  {
    harness: 'claude',
    file: '.claude/.credentials.json',
    // Within Claude Code's five minutes of expiry.
    tokens: () => ({ access: `sk-ant-oat01-real-${randomBytes(24).toString('hex')}`, refresh: `sk-ant-ort01-real-${randomBytes(24).toString('hex')}` }),
    files: ({ access, refresh }) => ({
      '.claude/.credentials.json': { claudeAiOauth: { accessToken: access, refreshToken: refresh, expiresAt: Date.now() + 60_000, scopes: ['user:inference', 'user:profile'], subscriptionType: 'max' } },
      '.claude.json': { hasCompletedOnboarding: true },
    }),
    turn: CASES.claude.turn,
    refreshedAccess: /^sk-ant-oat01-scripted-access-1$/,
    holdsPlaceholders: (held, vault) => {
      expect(held.claudeAiOauth.accessToken).toBe(vault.placeholders.access)
      expect(held.claudeAiOauth.expiresAt).toBeGreaterThan(Date.now() + 3_600_000)
    },
  },
  {
    // `codex login` with ChatGPT: an access token already expired, which Codex refreshes before its first request.
    harness: 'codex',
    file: '.codex/auth.json',
    tokens: () => {
      const now = Math.floor(Date.now() / 1000)
      const auth = { 'https://api.openai.com/auth': { chatgpt_account_id: CHATGPT_ACCOUNT, chatgpt_user_id: 'scripted-user', chatgpt_plan_type: 'pro' } }
      return { access: jwt({ iat: now - 864_000, exp: now - 60, ...auth }), refresh: `rt_real_${randomBytes(24).toString('hex')}`, id: jwt({ iat: now - 864_000, exp: now - 60, email: 'u@example.com', ...auth }) }
    },
    files: ({ access, refresh, id }) => ({
      '.codex/auth.json': { OPENAI_API_KEY: null, tokens: { id_token: id, access_token: access, refresh_token: refresh, account_id: CHATGPT_ACCOUNT }, last_refresh: new Date(Date.now() - 864_000_000).toISOString() },
    }),
    // Codex's own provider: the ChatGPT backend, where the scripted model's catalog declares the model.
    turn: ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-m', 'scripted', PROMPT],
    refreshedAccess: /\.scripted-signature-1$/,
    holdsPlaceholders: (held, vault) => {
      expect(held.tokens).toMatchObject({ access_token: vault.placeholders.access, refresh_token: vault.placeholders.refresh, id_token: vault.placeholders.id, account_id: CHATGPT_ACCOUNT })
      expect(Date.parse(held.last_refresh)).toBeGreaterThan(Date.now() - 3_600_000)
    },
  },
  {
    // `opencode auth login` with ChatGPT: past its `expires`, so OpenCode refreshes (a form) before its first request.
    harness: 'opencode',
    file: '.local/share/opencode/auth.json',
    tokens: () => {
      const now = Math.floor(Date.now() / 1000)
      const auth = { 'https://api.openai.com/auth': { chatgpt_account_id: CHATGPT_ACCOUNT, chatgpt_user_id: 'scripted-user', chatgpt_plan_type: 'pro' } }
      return { access: jwt({ iat: now - 864_000, exp: now - 60, ...auth }), refresh: `rt_real_${randomBytes(24).toString('hex')}` }
    },
    files: ({ access, refresh }) => ({
      '.local/share/opencode/auth.json': { openai: { type: 'oauth', refresh, access, expires: Date.now() - 60_000, accountId: CHATGPT_ACCOUNT } },
    }),
    // A model a ChatGPT login offers: OpenCode sends its requests to the ChatGPT backend's Codex endpoint.
    turn: ['run', '-m', 'openai/gpt-5.5', PROMPT],
    refreshedAccess: /\.scripted-signature-1$/,
    holdsPlaceholders: (held, vault) => {
      expect(held.openai).toMatchObject({ type: 'oauth', access: vault.placeholders.access, refresh: vault.placeholders.refresh, accountId: CHATGPT_ACCOUNT })
      expect(held.openai.expires).toBeGreaterThan(Date.now() + 3_600_000)
    },
  },
]
/** Two logins on each engine: the proxy's side is the same code on both, each harness's wire its own. */
const LOGIN_ON: Record<Engine, readonly Harness[]> = { docker: ['claude', 'codex'], podman: ['claude', 'opencode'] }

/** The bundled upstreams, each replaced by the test's in the personal adapters. */
const UPSTREAMS = ['https://api.anthropic.com', 'https://api.openai.com']

const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }
const sh = (engine: Engine, args: readonly string[], input?: string) => spawnSync(engine, args, { encoding: 'utf8', ...(input !== undefined ? { input } : {}) })

/** A throwaway authority and a certificate for the upstream's name, signed by it. */
function certificates(dir: string) {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' })
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=omh test authority', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign')
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${UPSTREAM}`)
  writeFileSync(path.join(dir, 'ext.cnf'), `subjectAltName=${[UPSTREAM, UNBOUND, OTHER_HOST, ...LOGIN_HOSTS].map((h) => `DNS:${h}`).join(',')}\nextendedKeyUsage=serverAuth\n`)
  ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf')
  for (const f of ['server.key', 'server.pem', 'ca.pem']) chmodSync(path.join(dir, f), 0o644)
}

describe.each(ENGINES)('credentials kept outside on %s', (engine: Engine) => {
  let scratch: string
  let home: string
  let repo: string
  let upstreamDir: string
  const outside = `omh-e2e-creds-${engine}-${process.pid}`
  const upstream = `${outside}-api`
  // The key: random, so its bytes can only be where it was carried.
  const KEY = `sk-test-${randomBytes(24).toString('hex')}`
  /** Every secret a test here gave omh: none may be left in omh's own files once the sessions are gone. */
  const planted: string[] = [KEY]
  const omh = (args: readonly string[], env: Record<string, string> = {}) =>
    finished(
      spawn(process.execPath, [BIN, ...args], {
        cwd: repo,
        env: { ...process.env, NO_COLOR: '1', OMH_HOME: home, OMH_STATE: stateOf(home), ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: KEY, OMH_CREDENTIAL_CA: path.join(upstreamDir, 'ca.pem'), ...identity, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
      600_000,
    )

  beforeAll(() => {
    scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-creds-e2e-')))
    upstreamDir = path.join(scratch, 'upstream')
    mkdirSync(upstreamDir)
    chmodSync(upstreamDir, 0o777)
    certificates(upstreamDir)
    copyFileSync(MODEL, path.join(upstreamDir, 'model.mjs'))
    writeFileSync(path.join(upstreamDir, 'script.json'), JSON.stringify(bashScript))
    expect(sh(engine, ['network', 'create', '--label', 'omh.test=e2e', outside]).status).toBe(0)
    const started = sh(engine, [
      'run', '-d', '--pull=never', '--name', upstream, '--label', 'omh.test=e2e', '--network', outside, '--network-alias', UPSTREAM, '--network-alias', UNBOUND, '--network-alias', OTHER_HOST,
      '-v', `${upstreamDir}:/up`, TEST_BASE,
      'node', '/up/model.mjs', '--script', '/up/script.json', '--log', '/up/requests.jsonl', '--host', '0.0.0.0', '--port', String(UPSTREAM_PORT), '--tls-cert', '/up/server.pem', '--tls-key', '/up/server.key', '--ready', '/up/ready',
    ])
    expect(started.status, started.stderr).toBe(0)

    home = path.join(scratch, 'omh')
    mkdirSync(path.join(home, 'adapters'), { recursive: true })
    writeFileSync(path.join(home, 'settings.toml'), `runtime = "${engine}"\n\n[image]\nbase = "${TEST_BASE}"\nnetwork = "host"\n\n[session]\nnetwork = "${outside}"\n\n[network]\nregistries = []\n`)
    for (const harness of new Set(ON[engine].map((t) => CASES[t].harness))) {
      const bundled = readFileSync(path.join(ROOT, `adapters/${harness}.toml`), 'utf8')
      expect(UPSTREAMS.some((u) => bundled.includes(`upstream = "${u}"`))).toBe(true)
      writeFileSync(path.join(home, `adapters/${harness}.toml`), UPSTREAMS.reduce((text, u) => text.replaceAll(`upstream = "${u}"`, `upstream = "https://${UPSTREAM}:${UPSTREAM_PORT}"`), bundled))
    }
    repo = path.join(scratch, 'repo')
    mkdirSync(path.join(repo, '.claude'), { recursive: true })
    writeFileSync(path.join(repo, '.claude/settings.json'), JSON.stringify({ env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' } }))
    writeFileSync(path.join(repo, 'opencode.json'), JSON.stringify({ model: 'anthropic/claude-sonnet-4-5' }))
    writeFileSync(path.join(repo, 'README.md'), `a project ${README_MARK}\n`)
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe', env: { ...process.env, ...identity } })
    git('init', '-q', '-b', 'main')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
  })

  afterAll(async () => {
    if (home) {
      const worktrees = path.join(stateOf(home), 'worktrees')
      for (const key of readdirSafe(worktrees)) for (const sid of readdirSafe(path.join(worktrees, key))) await omh(['sessions', 'rm', sid, '--force'])
    }
    // One at a time: Podman removes none of the names when one of them is missing.
    for (const name of [upstream, `${upstream}-login`]) sh(engine, ['rm', '-f', name])
    sh(engine, ['network', 'rm', outside])
    if (scratch) rmSync(scratch, { recursive: true, force: true })
  })

  /** Restarts the upstream with an empty log. */
  async function freshUpstream() {
    rmSync(path.join(upstreamDir, 'ready'), { force: true })
    const restarted = sh(engine, ['restart', upstream])
    expect(restarted.status, restarted.stderr).toBe(0)
    for (let i = 0; i < 200 && !existsSync(path.join(upstreamDir, 'ready')); i++) await new Promise((r) => setTimeout(r, 100))
    expect(existsSync(path.join(upstreamDir, 'ready')), 'the upstream did not start again').toBe(true)
  }
  const upstreamLog = (): RecordedRequest[] => readFileSync(path.join(upstreamDir, 'requests.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))

  it.each(LOGINS.filter((login) => LOGIN_ON[engine].includes(login.harness)))(
    'a subscription login to $harness kept outside: the session holds placeholders, a forced expiry refreshes through the proxy, the turn runs on the refreshed token, and no byte of a real token is inside',
    async (login: LoginCase) => {
      // The login's hosts, under their real names, on the outside network: neither harness lets a setting move them all.
      const loginLog = path.join(upstreamDir, 'login-requests.jsonl')
      writeFileSync(path.join(upstreamDir, 'script.json'), JSON.stringify(CASES[login.harness].script))
      rmSync(path.join(upstreamDir, 'login-ready'), { force: true })
      const started = sh(engine, [
        'run', '-d', '--pull=never', '--name', `${upstream}-login`, '--label', 'omh.test=e2e', '--network', outside, ...LOGIN_HOSTS.flatMap((h) => ['--network-alias', h]),
        '-v', `${upstreamDir}:/up`, TEST_BASE,
        'node', '/up/model.mjs', '--script', '/up/script.json', '--log', '/up/login-requests.jsonl', '--host', '0.0.0.0', '--port', '443', '--tls-cert', '/up/server.pem', '--tls-key', '/up/server.key', '--ready', '/up/login-ready',
      ])
      expect(started.status, started.stderr).toBe(0)
      for (let i = 0; i < 200 && !existsSync(path.join(upstreamDir, 'login-ready')); i++) await new Promise((r) => setTimeout(r, 100))
      const real = login.tokens()
      const account = path.join(stateOf(home), 'creds', login.harness, 'default')
      for (const [file, content] of Object.entries(login.files(real))) {
        mkdirSync(path.dirname(path.join(account, file)), { recursive: true })
        writeFileSync(path.join(account, file), JSON.stringify(content), { mode: 0o600 })
      }
      try {
        const ran = await omh(['--new', login.harness, '--', ...login.turn], { ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '' })
        expect(ran.status, `${ran.stdout}\n${ran.stderr}`).toBe(0)
        expect(ran.stdout).toContain('Done.')
        const sid = /omh: \S+ on omh\/(s\d+)/.exec(ran.stderr)?.[1]

        const seen: RecordedRequest[] = readFileSync(loginLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
        const refreshes = seen.filter((r) => r.path.endsWith('/oauth/token'))
        expect(refreshes.length, seen.map((r) => `${r.method} ${r.path}`).join('; ')).toBeGreaterThanOrEqual(1)
        // The refresh reached the token endpoint with the real refresh token, put there by the proxy.
        expect((refreshes[0]!.body as { refresh_token?: string }).refresh_token).toBe(real.refresh)
        const conversation = seen.filter((r) => r.reply !== null)
        expect(conversation.length).toBe(2)
        // The turn ran on the refreshed token, which only the proxy and the vault hold.
        const vault = JSON.parse(readFileSync(path.join(stateOf(home), 'logins', login.harness, 'default', 'vault.json'), 'utf8'))
        expect(vault.access).toMatch(login.refreshedAccess)
        expect(vault.refresh).toMatch(/scripted-refresh-1$/)
        expect(conversation.every((r) => r.headers?.['authorization'] === `Bearer ${vault.access}`), JSON.stringify(conversation.map((r) => r.headers?.['authorization']))).toBe(true)
        const held = JSON.parse(readFileSync(path.join(account, login.file), 'utf8'))
        login.holdsPlaceholders(held, vault)

        const worktree = path.join(stateOf(home), 'worktrees', readdirSync(path.join(stateOf(home), 'worktrees'))[0]!, sid!)
        const container = sh(engine, ['ps', '-q', '--filter', `label=omh.worktree=${worktree}`]).stdout.trim()
        const inside = (command: string, input?: string) => sh(engine, ['exec', '-i', '-u', '0', container, 'sh', '-c', command], input)
        const tokens = [...Object.values(real), vault.access, vault.refresh, ...(vault.id ? [vault.id] : [])].filter((t): t is string => typeof t === 'string' && t !== '')
        planted.push(...tokens)
        const environs = `${inside(`cat ${ENVIRONS} 2>/dev/null`).stdout}${inside('for f in /proc/[0-9]*/environ; do cat "$f"; echo; done 2>/dev/null').stdout}`
        for (const t of tokens) expect(environs).not.toContain(t)
        const found = inside('grep -rHoF -D skip -f /dev/stdin / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev 2>/dev/null; true', `${README_MARK}\n${tokens.join('\n')}\n`).stdout.split('\n').filter(Boolean)
        expect(found.filter((l) => l.endsWith(`:${README_MARK}`))).toContain(`/work/README.md:${README_MARK}`)
        expect(found.filter((l) => tokens.some((t) => l.includes(t)))).toEqual([])
        // Nor did any answer carry one back: the harness's own login file, rewritten after the refresh, holds none.
        for (const t of tokens) expect(JSON.stringify(held)).not.toContain(t)
        // On the host, only the vault holds them.
        const atRest = spawnSync('grep', ['-rlF', ...tokens.flatMap((t) => ['-e', t]), home], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)
        expect(atRest).toEqual([path.join(stateOf(home), 'logins', login.harness, 'default', 'vault.json')])
        expect((await omh(['sessions', 'rm', sid!, '--force'])).status).toBe(0)
      } finally {
        sh(engine, ['rm', '-f', `${upstream}-login`])
        rmSync(account, { recursive: true, force: true })
        rmSync(path.join(stateOf(home), 'logins'), { recursive: true, force: true })
      }
    },
  )

  it('a secret bound to a host: that host gets the value, an allowed unbound one only the placeholder, one it is not bound to is refused and logged; the container holds no byte of it', async () => {
    const SECRET = `ghp_${randomBytes(20).toString('hex')}`
    const OTHER = `other_${randomBytes(20).toString('hex')}`
    const local = path.join(repo, '.omh/settings.local.toml')
    mkdirSync(path.dirname(local), { recursive: true })
    writeFileSync(
      local,
      `[secrets.E2E_TOKEN]\nhosts = ["${UPSTREAM}"]\n\n[secrets.OTHER_TOKEN]\nhosts = ["${OTHER_HOST}"]\n\n[network]\nallow = ["${UPSTREAM}:${UPSTREAM_PORT}", "${UNBOUND}:${UPSTREAM_PORT}", "${OTHER_HOST}:${UPSTREAM_PORT}"]\n`,
    )
    const secrets = { E2E_TOKEN: SECRET, OTHER_TOKEN: OTHER }
    planted.push(SECRET, OTHER)
    try {
      // A repository's layer that sends your secret somewhere waits for your trust.
      const untrusted = await omh(['--new', 'claude', '--', '--version'], secrets)
      expect(untrusted.status, untrusted.stderr).toBe(2)
      expect(untrusted.stderr).toContain('secrets.E2E_TOKEN')
      expect((await omh(['trust'])).status).toBe(0)
      await freshUpstream()
      const ran = await omh(['--new', 'claude', '--', '--version'], secrets)
      expect(ran.status, `${ran.stdout}\n${ran.stderr}`).toBe(0)
      const sid = /omh: \S+ on omh\/(s\d+)/.exec(ran.stderr)?.[1]
      expect(sid, ran.stderr).toBeDefined()
      const worktree = path.join(stateOf(home), 'worktrees', readdirSync(path.join(stateOf(home), 'worktrees'))[0]!, sid!)
      const container = sh(engine, ['ps', '-q', '--filter', `label=omh.worktree=${worktree}`]).stdout.trim()
      expect(container, `no running container for ${worktree}`).not.toBe('')
      // As the agent, with the container's environment: git (GnuTLS, the bundle) and Node (its own store and the session's authority).
      const agent = (command: string) => sh(engine, ['exec', container, 'sh', '-c', command])
      const url = (host: string, p: string) => `https://${host}:${UPSTREAM_PORT}/${p}`
      agent(`git -c http.extraHeader="Authorization: Bearer $E2E_TOKEN" ls-remote ${url(UPSTREAM, 'bound.git')} 2>&1; true`)
      const fetchIt = (host: string, p: string) =>
        agent(`NODE_USE_ENV_PROXY=1 node -e "fetch('${url(host, p)}',{headers:{'x-token':process.env.E2E_TOKEN}}).then(async r=>console.log('status',r.status,await r.text()),e=>console.log('error',e.cause?.code??e.message))"`)
      const bound = fetchIt(UPSTREAM, 'node-bound')
      expect(bound.stdout, bound.stderr).toMatch(/^status \d+/)
      // An allowed host no secret is bound to is passed through unread, its certificate its own.
      agent(`git -c http.sslVerify=false -c http.extraHeader="Authorization: Bearer $E2E_TOKEN" ls-remote ${url(UNBOUND, 'unbound.git')} 2>&1; true`)
      const misdirected = fetchIt(OTHER_HOST, 'misdirected')
      expect(misdirected.stdout).toContain(`status 403`)
      expect(misdirected.stdout).toContain(`the secret E2E_TOKEN may go only to ${UPSTREAM}, not to ${OTHER_HOST}`)

      const PLACEHOLDER = agent('printf %s "$E2E_TOKEN"').stdout
      expect(PLACEHOLDER).toMatch(/^omh-secret-[0-9a-f]{32}$/)
      const seen = upstreamLog()
      const at = (p: string) => seen.filter((r) => r.path.startsWith(`/${p}`))
      expect(at('bound.git').length, JSON.stringify(seen.map((r) => r.path))).toBeGreaterThan(0)
      expect(at('bound.git').every((r) => r.headers?.['authorization'] === `Bearer ${SECRET}`)).toBe(true)
      expect(at('node-bound').map((r) => r.headers?.['x-token'])).toEqual([SECRET])
      expect(at('unbound.git').length).toBeGreaterThan(0)
      expect(at('unbound.git').every((r) => r.headers?.['authorization'] === `Bearer ${PLACEHOLDER}`)).toBe(true)
      expect(at('misdirected')).toEqual([])

      const egress = await omh(['sessions', 'egress', sid!, '--json'])
      expect(egress.status, egress.stderr).toBe(0)
      const decisions = JSON.parse(egress.stdout).result.decisions as { host: string; secret?: string; allowed: boolean }[]
      expect(decisions).toContainEqual(expect.objectContaining({ host: OTHER_HOST, secret: 'E2E_TOKEN', allowed: false }))

      // Neither value anywhere the session can look, read as root.
      const inside = (command: string, input?: string) => sh(engine, ['exec', '-i', '-u', '0', container, 'sh', '-c', command], input)
      const environs = inside('for f in /proc/[0-9]*/environ; do cat "$f"; echo; done 2>/dev/null').stdout
      expect(environs).toContain(`E2E_TOKEN=${PLACEHOLDER}`)
      expect(environs).not.toContain(SECRET)
      expect(environs).not.toContain(OTHER)
      const found = inside('grep -rHoF -D skip -f /dev/stdin / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev 2>/dev/null; true', `${README_MARK}\n${SECRET}\n${OTHER}\n`).stdout.split('\n').filter(Boolean)
      expect(found.filter((l) => l.endsWith(`:${README_MARK}`))).toContain(`/work/README.md:${README_MARK}`)
      expect(found.filter((l) => l.includes(SECRET) || l.includes(OTHER))).toEqual([])
      // Nor in any file omh wrote on the host: its state (the session's run directory among it), its home, its cache.
      const cache = path.join(process.env['XDG_CACHE_HOME'] ?? path.join(os.homedir(), '.cache'), 'omh')
      const atRest = spawnSync('grep', ['-rlF', '-e', SECRET, '-e', OTHER, '-e', KEY, home, ...(existsSync(cache) ? [cache] : [])], { encoding: 'utf8' })
      expect(atRest.stdout, 'files under OMH_HOME and OMH_STATE holding a secret').toBe('')
      expect((await omh(['sessions', 'rm', sid!, '--force'])).status).toBe(0)
    } finally {
      rmSync(path.dirname(local), { recursive: true, force: true })
    }
  })

  it.each(ON[engine])('%s: a real turn goes through the credential proxy, the upstream gets the real key over TLS, and no byte of it is in the container', async (harness) => {
    const { harness: name, variable, port, header, prefix, baseUrl, turn, script } = CASES[harness]
    // A fresh upstream per turn: the harness's script starts over and the log is emptied.
    writeFileSync(path.join(upstreamDir, 'script.json'), JSON.stringify(script))
    rmSync(path.join(upstreamDir, 'ready'), { force: true })
    const restarted = sh(engine, ['restart', upstream])
    expect(restarted.status, restarted.stderr).toBe(0)
    for (let i = 0; i < 200 && !existsSync(path.join(upstreamDir, 'ready')); i++) await new Promise((r) => setTimeout(r, 100))
    expect(existsSync(path.join(upstreamDir, 'ready')), 'the upstream did not start again').toBe(true)
    const ran = await omh(['--new', name, '--', ...turn])
    expect(ran.status, `${ran.stdout}\n${ran.stderr}`).toBe(0)
    expect(ran.stdout).toContain('Done.')
    const sid = /omh: \S+ on omh\/(s\d+)/.exec(ran.stderr)?.[1]
    expect(sid, ran.stderr).toBeDefined()

    // The upstream: the conversation, each request with the real key, and the tool's output in the second.
    const requests: RecordedRequest[] = readFileSync(path.join(upstreamDir, 'requests.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const conversation = requests.filter((r) => r.reply !== null)
    expect(conversation.length, requests.map((r) => `${r.method} ${r.path}`).join('; ')).toBe(2)
    expect(requests.every((r) => r.headers?.[header] === `${prefix}${KEY}`), JSON.stringify(requests.map((r) => r.headers?.[header]))).toBe(true)
    expect(requestText(conversation[1]!.body)).toContain('shell-ok')
    // Plain HTTP all the way: no WebSocket was asked for, which the proxy would pass on as a plain GET, its upgrade dropped.
    expect(requests.filter((r) => r.method === 'GET' && r.path.endsWith('/responses')).length).toBe(0)

    const key = readdirSync(path.join(stateOf(home), 'worktrees'))[0]!
    const worktree = path.join(stateOf(home), 'worktrees', key, sid!)
    const container = sh(engine, ['ps', '-q', '--filter', `label=omh.worktree=${worktree}`]).stdout.trim()
    expect(container, `no running container for ${worktree}`).not.toBe('')
    const inside = (command: string, input?: string) => sh(engine, ['exec', '-i', '-u', '0', container, 'sh', '-c', command], input)

    // The harness saw the session's own placeholder and the proxy's address, never the key.
    const repoId = path.basename(path.dirname(worktree))
    const PLACEHOLDER = readFileSync(path.join(stateOf(home), 'run', repoId, sid!, 'credential-token'), 'utf8').trim()
    expect(PLACEHOLDER).toMatch(/^omh-credential-proxy-[0-9a-f]{32}$/)
    const seen = inside(`cat ${ENVIRONS}`).stdout
    expect(seen).toContain(`${variable}=${PLACEHOLDER}`)
    if (baseUrl) expect(seen).toMatch(baseUrl)
    expect(seen).not.toContain(KEY)
    // Every process now, read as root; every file the container sees (the key is given on stdin, never in a command line).
    const environs = inside('for f in /proc/[0-9]*/environ; do cat "$f"; echo; done 2>/dev/null')
    expect(environs.stdout.length).toBeGreaterThan(0)
    expect(environs.stdout).not.toContain(KEY)
    // One pass over every file (grep reads both texts from stdin): the README's mark through the worktree mount, and the key nowhere.
    const found = inside('grep -rHoF -D skip -f /dev/stdin / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev 2>/dev/null; true', `${README_MARK}\n${KEY}\n`).stdout.split('\n').filter(Boolean)
    expect(found.filter((l) => l.endsWith(`:${README_MARK}`))).toContain(`/work/README.md:${README_MARK}`)
    expect(found.filter((l) => l.includes(KEY))).toEqual([])

    // What the proxy answers the agent: a good request, a refused one, and an unknown route, from inside the session.
    const ask = `const h=require('http');const go=(port,path,extra)=>new Promise(r=>{const q=h.request({host:'omh-creds',port,path,method:'GET',headers:{'${header}':'${prefix}${PLACEHOLDER}',...extra}},s=>{let b='';s.on('data',d=>b+=d);s.on('end',()=>r(s.statusCode+' '+JSON.stringify(s.headers)+' '+b))});q.on('error',e=>r('error '+e.code));q.end()});(async()=>{const port=${port};for(const [p,pth] of [[port,'/v1/models'],[port,'/nowhere'],[port,'/v1/models?x=1']])console.log(await go(p,pth,{}))})()`
    const answers = sh(engine, ['exec', container, 'node', '-e', ask])
    expect(answers.status, answers.stderr).toBe(0)
    expect(answers.stdout).toMatch(/^200 /m)
    expect(answers.stdout).toMatch(/^404 /m)
    expect(answers.stdout).not.toContain(KEY)
    const after: RecordedRequest[] = readFileSync(path.join(upstreamDir, 'requests.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    expect(after.slice(requests.length).map((r) => r.headers?.[header])).toEqual([0, 1, 2].map(() => `${prefix}${KEY}`))

    // Nobody but the session: a container on the outside network the proxy joined reaches no listener
    // there, with the placeholder or without; the host, reaching it where it listens, is refused without it.
    const creds = sh(engine, ['ps', '-q', '--filter', `name=omh-.*-${sid}-creds`]).stdout.trim()
    const addressOn = (network: string) => sh(engine, ['inspect', '-f', `{{(index .NetworkSettings.Networks "${network}").IPAddress}}`, creds]).stdout.trim()
    const outsideAddress = addressOn(outside)
    expect(outsideAddress).toMatch(/^\d+\.\d+\.\d+\.\d+$/)
    const probe = (host: string, token: string) =>
      `const h=require('http');const q=h.request({host:'${host}',port:${port},path:'/v1/models',headers:{'${header}':'${prefix}${token}'},timeout:3000},s=>{s.resume();s.on('end',()=>console.log('status '+s.statusCode))});q.on('timeout',()=>{console.log('error timeout');q.destroy()});q.on('error',e=>console.log('error '+e.code));q.end()`
    for (const token of [PLACEHOLDER, 'omh-credential-proxy-holds-the-key']) {
      const fromOutside = sh(engine, ['exec', upstream, 'node', '-e', probe(outsideAddress, token)])
      expect(fromOutside.stdout.trim(), 'a container outside the session').toMatch(/^error /)
    }
    const internal = sh(engine, ['inspect', '-f', '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{$v.IPAddress}}\n{{end}}', creds]).stdout.split('\n').find((l) => l.includes('-net-'))?.split(' ')[1]
    expect(internal, 'the proxy is on the session network').toMatch(/^\d+\.\d+\.\d+\.\d+$/)
    // Where the host has no route to the session's network, the request goes elsewhere: whatever answers, it is not the proxy's 200.
    const fromHost = spawnSync(process.execPath, ['-e', probe(internal!, 'omh-credential-proxy-holds-the-key')], { encoding: 'utf8' })
    expect(fromHost.stdout.trim(), 'the host without the placeholder').not.toMatch(/^status 200$/)
    const upstreamSaw: RecordedRequest[] = readFileSync(path.join(upstreamDir, 'requests.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    expect(upstreamSaw.length, 'nothing from outside reached the upstream').toBe(after.length)

    // The proxy is omh's, and goes with the session.
    expect(sh(engine, ['ps', '-q', '--filter', `name=omh-.*-${sid}-creds`]).stdout.trim()).not.toBe('')
    expect((await omh(['sessions', 'rm', sid!, '--force'])).status).toBe(0)
    expect(sh(engine, ['ps', '-aq', '--filter', `label=omh.egress=${repoId}-${sid}`]).stdout.trim()).toBe('')
  })

  it("leaves no secret at rest in omh's files after every launch here: keys, bound secrets, logins and their refreshed tokens", () => {
    // The login vaults, the one place a login's tokens are kept on purpose, went with their tests.
    const cache = path.join(process.env['XDG_CACHE_HOME'] ?? path.join(os.homedir(), '.cache'), 'omh')
    const written = spawnSync('find', [home, ...(existsSync(cache) ? [cache] : []), '-type', 'f'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)
    expect(written.length, 'omh wrote nothing to search').toBeGreaterThan(0)
    const atRest = spawnSync('grep', ['-rlF', ...planted.flatMap((t) => ['-e', t]), home, ...(existsSync(cache) ? [cache] : [])], { encoding: 'utf8' })
    expect(atRest.stdout, 'files under OMH_HOME, OMH_STATE and the cache holding a secret').toBe('')
  })
})

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}
