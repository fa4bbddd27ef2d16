/**
 * The hooks omh writes for Codex, checked by the real Codex binary: every one
 * is listed as trusted by `codex app-server` (`hooks/list`), and a trusted
 * hook really runs when Codex starts a session — while the same hooks without
 * omh's trust records do not. Needs Codex 0.171.0: `.ci/run` installs it and
 * sets OMH_CODEX_BIN; without it this file is skipped, saying so.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { GUEST_HOME, GUEST_WORK, type RenderOutput, type StagedFile } from '@omh/plugin-api'
import renderer from '../../packages/renderer-codex-hooks/src/index.js'
import { AWKWARD, bundledHooks, hook, hooksInput } from '@omh/test-utils'
import { testdir } from '@omh/test-utils'

const bin = process.env['OMH_CODEX_BIN']

/** Renders the hooks into a throwaway CODEX_HOME, at the path Codex will read them from. */
async function codexHome(withTrust: boolean) {
  const dir = testdir()
  const home = path.join(dir, 'home')
  const work = path.join(dir, 'work')
  mkdirSync(path.join(home, '.codex'), { recursive: true })
  mkdirSync(work)
  const marker = path.join(dir, 'started')
  const codex = await bundledHooks('codex')
  const binding = { ...codex.binding, path: path.join(home, '.codex', 'hooks.json') }
  const hooks = [
    hook('started', { on: 'session-start', run: `printf '%s' "$OMH_SESSION" > '${marker}'` }),
    hook('orient', { on: 'session-start', inject: `Session $OMH_SESSION. ${AWKWARD}` }),
    hook('test-at-end', { on: 'turn-end', run: 'npm test' }),
    hook('no-force-push', { on: 'before-tool', tools: ['shell'], when: `printf '%s' "$OMH_TOOL_COMMAND" | grep -q -- --force`, refuse: 'No force-push: "$OMH_TOOL_COMMAND" — ✓' }),
    hook('shell-hint', { on: 'before-tool', tools: ['shell'], inject: 'Mind `$$PATH`.' }),
    hook('patch-hint', { on: 'after-tool', tools: ['edit'], inject: 'Patched:\n${OMH_TOOL_COMMAND:-nothing}' }),
    hook('after-any', { on: 'after-tool', run: 'true' }),
  ]
  const out = (await renderer.render(hooksInput(hooks, { ...codex, binding }), { guestHome: GUEST_HOME, guestWork: GUEST_WORK })) as RenderOutput
  for (const file of out.files as StagedFile[]) {
    if (file.guest.endsWith('config.toml') && !withTrust) continue
    writeFileSync(file.guest, file.content)
  }
  return { dir, home, work, marker, out, hooksFile: binding.path }
}

const env = (home: string) => ({ ...process.env, HOME: home, CODEX_HOME: path.join(home, '.codex'), OMH_SESSION: 'omh-e2e' })

/** Asks a Codex app-server for its hooks over stdio JSON-RPC. */
function listHooks(home: string, cwd: string): Promise<{ hooks: any[]; warnings: string[]; errors: unknown[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin!, ['app-server'], { cwd, env: env(home), stdio: ['pipe', 'pipe', 'pipe'] })
    const timer = setTimeout(() => {
      child.kill()
      reject(new Error('codex app-server did not answer within 60 s'))
    }, 60_000)
    let buffer = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      buffer += chunk
      for (let n = buffer.indexOf('\n'); n !== -1; n = buffer.indexOf('\n')) {
        const message = JSON.parse(buffer.slice(0, n))
        buffer = buffer.slice(n + 1)
        if (message.id === 1) {
          child.stdin.write(`${JSON.stringify({ method: 'initialized' })}\n`)
          child.stdin.write(`${JSON.stringify({ id: 2, method: 'hooks/list', params: { cwds: [cwd] } })}\n`)
        } else if (message.id === 2) {
          clearTimeout(timer)
          child.kill()
          if (message.error) reject(new Error(JSON.stringify(message.error)))
          else resolve(message.result.data[0])
        }
      }
    })
    child.on('error', reject)
    child.stdin.write(`${JSON.stringify({ id: 1, method: 'initialize', params: { clientInfo: { name: 'omh-test', version: '0' } } })}\n`)
  })
}

/** Starts a Codex session against a model endpoint that refuses at once: enough for SessionStart hooks to run. */
function startSession(home: string, cwd: string) {
  return spawnSync(
    bin!,
    [
      'exec',
      '--skip-git-repo-check',
      '--disable',
      'unbounded_connection_retries',
      '-c',
      'model_provider=p',
      '-c',
      'model_providers.p={name="p",base_url="http://127.0.0.1:9/v1",wire_api="responses",env_key="OMH_E2E_KEY",request_max_retries=0,stream_max_retries=0}',
      'hello',
    ],
    { cwd, env: { ...env(home), OMH_E2E_KEY: 'x' }, encoding: 'utf8', timeout: 60_000 },
  )
}

describe.skipIf(!bin)(`codex-hooks against the real Codex (${bin ?? 'OMH_CODEX_BIN not set: skipped'})`, () => {
  it('every hook omh writes is listed by Codex as trusted, with the hash omh computed', async () => {
    const { home, work, out, hooksFile } = await codexHome(true)
    const listed = await listHooks(home, work)
    expect(listed.warnings).toEqual([])
    expect(listed.errors).toEqual([])
    const trusted = readFileSync(path.join(home, '.codex', 'config.toml'), 'utf8')
    const ours = listed.hooks.filter((h) => h.sourcePath === hooksFile)
    expect(ours.length).toBe(7 - out.dropped.length)
    for (const h of ours) {
      expect(h.trustStatus, h.key).toBe('trusted')
      expect(trusted).toContain(`[hooks.state.${JSON.stringify(h.key)}]\ntrusted_hash = "${h.currentHash}"`)
    }
  })

  it('runs a trusted session-start hook when Codex starts, and skips it without the trust records', async () => {
    const trusted = await codexHome(true)
    const ran = startSession(trusted.home, trusted.work)
    expect(ran.stdout + ran.stderr).toContain('hook: SessionStart Completed')
    expect(readFileSync(trusted.marker, 'utf8')).toBe('omh-e2e')

    const untrusted = await codexHome(false)
    startSession(untrusted.home, untrusted.work)
    expect(existsSync(untrusted.marker)).toBe(false)
    rmSync(untrusted.dir, { recursive: true, force: true })
  })
})
