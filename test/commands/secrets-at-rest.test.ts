import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { gitRepo, testdir, write } from '@omh/test-utils'

/** Every regular file below `dir`, by path. */
function filesBelow(dir: string): string[] {
  const out: string[] = []
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.isFile()) out.push(full)
    }
  }
  try {
    walk(dir)
  } catch {
    // Nothing written there at all.
  }
  return out
}

describe('secrets at rest', () => {
  it("leave no canary in any file omh writes, but the places the user keeps them: the secrets file and a login", () => {
    const canary = (n: number) => `canary-${n}-9b0f6e2ad71c43a5`
    const home = testdir({
      'rules/style.md': 'Be brief.\n',
      'mcp.json': JSON.stringify({ mcpServers: { tracker: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer <secret TRACKER_TOKEN>' } } } }),
      'secrets.toml': `TRACKER_TOKEN = "${canary(1)}"\n`,
    })
    chmodSync(path.join(home, 'secrets.toml'), 0o600)
    const state = testdir()
    write(state, { 'creds/claude/default/.claude/.credentials.json': JSON.stringify({ claudeAiOauth: { accessToken: canary(2) } }) })
    const cache = testdir()
    const root = gitRepo({ 'README.md': 'hi\n', '.env': `TOKEN=${canary(3)}\n` })
    const env = { OMH_HOME: home, OMH_STATE: state, XDG_CACHE_HOME: cache, ANTHROPIC_API_KEY: canary(4), OPENAI_API_KEY: canary(5), GITHUB_TOKEN: canary(6) }
    const commands = [
      ['adapters', 'ls'],
      ['adapters', 'show', 'claude'],
      ['render', 'claude'],
      ['render', 'codex', '--json'],
      ['config', 'mcp', 'ls'],
      ['sessions', 'ls'],
      ['plugins'],
      ['trust', '--show'],
      ['doctor', '--help'],
      ['--dry-run', 'claude'],
      ['--dry-run', 'codex'],
    ]
    // Twice: the second run of a read-only command is answered from what the first kept.
    for (let round = 0; round < 2; round++) for (const args of commands) omh(args, { cwd: root, env })
    const kept = [path.join(home, 'secrets.toml'), path.join(state, 'creds/claude/default/.claude/.credentials.json')]
    const written = [...filesBelow(home), ...filesBelow(state), ...filesBelow(cache)].filter((f) => !kept.includes(f) && statSync(f).size < 16 * 1024 * 1024)
    expect(written.length).toBeGreaterThan(0)
    const hits = written.flatMap((f) => {
      const text = readFileSync(f, 'latin1')
      return [1, 2, 3, 4, 5, 6].filter((n) => text.includes(canary(n))).map((n) => `${path.relative(path.dirname(home), f)}: canary ${n}`)
    })
    expect(hits).toEqual([])
  }, 300_000)
})
