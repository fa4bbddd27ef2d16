/**
 * The profile omh stages for Codex, read by the real Codex binary: the golden
 * `config.toml` passes `--strict-config` (no key Codex does not know), its MCP
 * servers are the ones omh rendered, and the agents (a read-only one among
 * them), the skills (a command staged as one among them) and the rules reach
 * the model's input. Needs Codex 0.171.0 (OMH_CODEX_BIN); skipped without.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, symlinkSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../helpers/run.js'
import { testdir } from '@omh/test-utils'

const bin = process.env['OMH_CODEX_BIN']
const GOLDEN = path.join(ROOT, 'test/fixtures/golden')
const STAGED = path.join(GOLDEN, 'codex/staged/files')

/** A HOME and working directory holding exactly what omh stages for Codex, skills linked as staging links them. */
function stagedHome() {
  const dir = testdir()
  const home = path.join(dir, 'home')
  const work = path.join(dir, 'work')
  cpSync(path.join(STAGED, 'home/agent'), home, { recursive: true })
  cpSync(path.join(STAGED, 'work'), work, { recursive: true })
  mkdirSync(path.join(home, '.agents/skills'), { recursive: true })
  for (const skill of ['release-notes', 'tdd']) symlinkSync(path.join(GOLDEN, 'profile/skills', skill), path.join(home, '.agents/skills', skill))
  // A command staged as a skill is a real directory in the skills tree.
  cpSync(path.join(GOLDEN, 'codex/staged/trees/home/agent/.agents/skills/review'), path.join(home, '.agents/skills/review'), { recursive: true })
  return { home, work }
}

function codex(args: string[], at: { home: string; work: string }) {
  const ran = spawnSync(bin!, args, {
    cwd: at.work,
    env: { ...process.env, HOME: at.home, CODEX_HOME: path.join(at.home, '.codex'), OMH_MCP_TRACKER_TOKEN: 'golden-token' },
    encoding: 'utf8',
    timeout: 90_000,
  })
  return { status: ran.status, stdout: ran.stdout, stderr: ran.stderr }
}

describe.skipIf(!bin)(`the profile staged for Codex, read by the real Codex (${bin ?? 'OMH_CODEX_BIN not set: skipped'})`, () => {
  it('passes strict validation: no key Codex does not know', () => {
    const ran = codex(['app-server', '--strict-config', '--print-startup-config'], stagedHome())
    expect(ran.stdout, ran.stderr).toContain('"appServerVersion":"0.171.0"')
    expect(ran.status).toBe(0)
  })

  it('lists the MCP servers omh rendered, the bearer token by variable', () => {
    const ran = codex(['mcp', 'list', '--json'], stagedHome())
    expect(ran.status, ran.stderr).toBe(0)
    const servers = JSON.parse(ran.stdout) as { name: string; transport: Record<string, unknown> }[]
    expect(servers.map((s) => s.name)).toEqual(['docs', 'scratch', 'tracker'])
    expect(servers[1]!.transport).toMatchObject({ command: 'scratch-mcp', cwd: '/work/tmp' })
    expect(servers[2]!.transport).toMatchObject({ type: 'streamable_http', bearer_token_env_var: 'OMH_MCP_TRACKER_TOKEN', http_headers: { 'X-Team': 'core' } })
  })

  it('gives the model the agent, the skills and the composed rules', () => {
    const ran = codex(['debug', 'prompt-input', 'hello'], stagedHome())
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stdout).toContain('planner: {')
    expect(ran.stdout).toContain('- tdd: Red, green, refactor: one failing test at a time.')
    expect(ran.stdout).toContain('- release-notes: Draft release notes from the commits since the last tag.')
    expect(ran.stdout).toContain('Run `npm test` before every commit.')
    // The command, as a skill; the subagent that may only read and search, as a read-only agent.
    expect(ran.stdout).toContain('- review: Review the staged changes.')
    expect(ran.stdout).toContain('reviewer: {')
  })
})
