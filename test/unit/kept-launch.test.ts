import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { testdir } from '@omh/test-utils'
import { ROOT } from '../helpers/run.js'

import { entryName, fingerprint, grammarOf, keptLaunchArgs, launchKey, presence, replay, replayLaunch as replayAt, save as saveEntry, type Manifest } from '@omh/fast-path'

const grammar = grammarOf(JSON.parse(readFileSync(path.join(ROOT, 'oclif.manifest.json'), 'utf8')) as Manifest)
/** Entries as a file may hold them, malformed ones too. */
const save = saveEntry as (dir: string, key: string, entry: object) => void
const keptCandidate = (argv: readonly string[]) => keptLaunchArgs(argv, grammar) !== undefined
const replayLaunch = (key: string, dir: string) => replayAt(key, dir, pathToFileURL(`${ROOT}/`))

/**
 * A kept launch as the fast path's recorder leaves one, over a stand-in for the engine's
 * client: it answers `inspect` with the file `answer` (exit status in
 * `inspect-status`), and notes each `exec` in `execs`, exiting 7.
 */
function setup() {
  const dir = testdir({
    'home/adapters/h.toml': 'name = "h"\nbin = "h-bin"\n',
    'home/settings.toml': 'runtime = "fake"\n',
    'home/rules/style.md': 'Be brief.\n',
    'home/node_modules/omh-renderer-r/package.json': '{"name": "omh-renderer-r", "version": "1.0.0"}\n',
    'engine/answer': 'abc123 true\ndef456 true\n',
    'state/run/repo-1/s01/up.json': '{}\n',
  })
  const client = path.join(dir, 'engine/client')
  writeFileSync(
    client,
    `#!/bin/sh\nd=${path.join(dir, 'engine')}\nif [ "$1" = inspect ]; then cat "$d/answer"; exit $(cat "$d/inspect-status" 2>/dev/null || echo 0); fi\n[ "$1" = exec ] && echo "$* $OMH_HARNESS" >> "$d/execs"\nexit 7\n`,
    { mode: 0o755 },
  )
  const inputs = {
    adapter: path.join(dir, 'home/adapters/h.toml'),
    settings: path.join(dir, 'home/settings.toml'),
    catalogue: path.join(dir, 'home/rules/style.md'),
    plugin: path.join(dir, 'home/node_modules/omh-renderer-r/package.json'),
  }
  const run = path.join(dir, 'state/run/repo-1/s01')
  const kept = path.join(dir, 'state/run/.kept-launch')
  const argv = ['--session', 's01', 'h', '--flag']
  const key = launchKey(argv)
  const entry = {
    inputs: Object.values(inputs).map((file) => [file, fingerprint(file)]),
    out: [[2, 'omh: h on omh/s01\n', false]],
    exec: { file: client, args: ['exec', '-i', 'omh-repo-1-s01', 'h-bin', '--flag'], env: { OMH_HARNESS: 'h' }, unset: [], stdio: ['ignore', 'ignore', 'inherit'] },
    check: { args: ['inspect', 'omh-repo-1-s01', 'omh-repo-1-s01-egress'], answer: 'abc123 true\ndef456 true\n' },
    offer: { containers: ['omh-repo-1-s01', 'omh-repo-1-s01-egress'], run, harness: 'h' },
  }
  const keep = (over: object = {}) => save(kept, key, { ...entry, ...over })
  keep()
  const execs = () => (existsSync(path.join(dir, 'engine/execs')) ? readFileSync(path.join(dir, 'engine/execs'), 'utf8') : '')
  return { dir, inputs, run, kept, key, keep, execs, argv }
}

let stderr: string[]
beforeEach(() => {
  stderr = []
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (stderr.push(String(chunk)), true))
})
afterEach(() => {
  vi.restoreAllMocks()
  process.exitCode = undefined
})

describe('a kept launch', () => {
  it('is the same kept launch however its options are spelled or ordered', () => {
    const one = (argv: string[]) => launchKey(keptLaunchArgs(argv, grammar)!)
    const spellings = [
      ['--session', 's01', '--runtime', 'docker', 'claude', '-p', 'hi'],
      ['-s', 's01', '--runtime=docker', 'claude', '-p', 'hi'],
      ['--runtime', 'docker', '--session=s01', 'claude', '-p', 'hi'],
    ]
    expect(new Set(spellings.map(one)).size).toBe(1)
    expect(one(['-s', 's01', 'claude'])).toBe(one(['--session=s01', 'claude']))
    expect(one(['-s', 's01', 'claude'])).not.toBe(one(['-s', 's02', 'claude']))
    expect(one(['claude', '-p', 'hi'])).not.toBe(one(['claude', 'hi', '-p']))
    expect(keptLaunchArgs(['--runtime', 'docker', '-s', 's01', 'claude', '--x'], grammar)).toEqual(['--session', 's01', '--runtime', 'docker', 'claude', '--x'])
  })

  it('is tried for a named session with the harness first after it, and for a harness alone, into the current session', () => {
    expect(keptCandidate(['--session', 's01', 'claude', '--version'])).toBe(true)
    expect(keptCandidate(['-s', 's12', 'claude'])).toBe(true)
    expect(keptCandidate(['claude'])).toBe(true)
    expect(keptCandidate(['claude', '--resume'])).toBe(true)
    for (const command of ['sessions', 'adapters', 'doctor', 'help', 'launch', 'trust']) expect(keptCandidate([command, 'ls']), command).toBe(false)
    expect(keptCandidate(['--new', 'claude'])).toBe(false)
    expect(keptCandidate(['Claude'])).toBe(false)
    expect(keptCandidate(['--session', 's01', '--new', 'claude'])).toBe(false)
    expect(keptCandidate(['--session', 'feature-x', 'claude'])).toBe(true)
    expect(keptCandidate(['--session', 'Main', 'claude'])).toBe(false)
    expect(keptCandidate(['--session', 's1', 'claude'])).toBe(false)
    expect(keptCandidate(['--session', '../s01', 'claude'])).toBe(false)
  })

  it('is tried with --session and --runtime in either order and either spelling, each once, and nothing else before the harness', () => {
    expect(keptCandidate(['--runtime', 'docker', 'claude'])).toBe(true)
    expect(keptCandidate(['--runtime', 'podman', '--session', 's01', 'claude'])).toBe(true)
    expect(keptCandidate(['-s', 's01', '--runtime', 'docker', 'claude', '-p', 'hi'])).toBe(true)
    expect(keptCandidate(['--session=s01', '--runtime=docker', 'claude'])).toBe(true)
    expect(keptCandidate(['--runtime', 'docker', 'sessions', 'ls']), 'a command, not a harness').toBe(false)
    expect(keptCandidate(['--runtime', 'docker', '--runtime', 'podman', 'claude'])).toBe(false)
    expect(keptCandidate(['--runtime', 'Docker', 'claude'])).toBe(false)
    expect(keptCandidate(['--runtime', 'docker', '--new', 'claude'])).toBe(false)
    expect(keptCandidate(['--runtime'])).toBe(false)
    expect(keptCandidate(['--session', 's01', '--account', 'work', 'claude'])).toBe(false)
  })

  it('goes straight to the exec while its files and the engine answer as they did', async () => {
    const t = setup()
    const old = new Date(Date.now() - 3_600_000)
    utimesSync(path.join(t.run, 'up.json'), old, old)
    expect(await replayLaunch(t.key, t.kept)).toBe(true)
    expect(t.execs()).toBe('exec -i omh-repo-1-s01 h-bin --flag h\n')
    expect(process.exitCode).toBe(7)
    expect(stderr.join('')).toBe('omh: h on omh/s01\n')
    // The session was claimed and stamped as a launch does, released after, and its idle clock restarted.
    expect(existsSync(path.join(t.run, 'claim'))).toBe(false)
    expect(existsSync(path.join(t.run, 'last-used'))).toBe(true)
    expect(statSync(path.join(t.run, 'up.json')).mtimeMs).toBeGreaterThan(old.getTime() + 1000)
  })

  it.each(['adapter', 'settings', 'catalogue', 'plugin'] as const)('runs as always once its %s file was edited', async (kind) => {
    const t = setup()
    writeFileSync(t.inputs[kind], `${readFileSync(t.inputs[kind], 'utf8')}\n`)
    expect(await replayLaunch(t.key, t.kept)).toBe(false)
    expect(t.execs()).toBe('')
    expect(stderr).toEqual([])
  })

  it('holds while entries come and go in a directory it only asked about, and not once that directory is replaced', async () => {
    const t = setup()
    const dir = path.join(t.dir, 'repo/.git')
    mkdirSync(dir, { recursive: true })
    const inputs = [...Object.values(t.inputs).map((file) => [file, fingerprint(file)]), [dir, presence(dir), 'presence']]
    t.keep({ inputs })
    writeFileSync(path.join(dir, 'index.lock'), '')
    expect(await replayLaunch(t.key, t.kept)).toBe(true)
    // Replaced while the old one still exists, so the new directory cannot reuse its inode.
    mkdirSync(`${dir}.new`)
    rmSync(dir, { recursive: true })
    renameSync(`${dir}.new`, dir)
    expect(await replayLaunch(t.key, t.kept)).toBe(false)
  })

  it('runs as always when the engine no longer runs the container, or runs another by its name', async () => {
    const t = setup()
    writeFileSync(path.join(t.dir, 'engine/inspect-status'), '1')
    writeFileSync(path.join(t.dir, 'engine/answer'), '')
    expect(await replayLaunch(t.key, t.kept)).toBe(false)
    writeFileSync(path.join(t.dir, 'engine/inspect-status'), '0')
    writeFileSync(path.join(t.dir, 'engine/answer'), 'abc123 false\ndef456 true\n')
    expect(await replayLaunch(t.key, t.kept)).toBe(false)
    writeFileSync(path.join(t.dir, 'engine/answer'), 'fff999 true\ndef456 true\n')
    expect(await replayLaunch(t.key, t.kept)).toBe(false)
    expect(t.execs()).toBe('')
    expect(existsSync(path.join(t.run, 'claim'))).toBe(false)
  })

  it('runs as always once a look for idle containers is due', async () => {
    const t = setup()
    t.keep({ dueAt: Date.now() - 1 })
    expect(await replayLaunch(t.key, t.kept)).toBe(false)
  })

  it('ignores an entry that is corrupt, incomplete, for another key, readable by others, or behind a link', async () => {
    const t = setup()
    const file = path.join(t.kept, entryName(t.key))
    writeFileSync(file, '{"key": 1, "inputs": [[')
    expect(await replayLaunch(t.key, t.kept)).toBe(false)
    t.keep({ exec: { file: 'client', args: 'exec' } })
    expect(await replayLaunch(t.key, t.kept)).toBe(false)
    t.keep()
    expect(await replayLaunch(launchKey([...t.argv, 'more']), t.kept)).toBe(false)
    chmodSync(file, 0o644)
    expect(await replayLaunch(t.key, t.kept)).toBe(false)
    chmodSync(file, 0o600)
    const elsewhere = path.join(t.dir, 'elsewhere')
    mkdirSync(elsewhere, { mode: 0o700 })
    writeFileSync(path.join(elsewhere, entryName(t.key)), readFileSync(file), { mode: 0o600 })
    rmSync(t.kept, { recursive: true })
    symlinkSync(elsewhere, t.kept)
    expect(await replayLaunch(t.key, t.kept)).toBe(false)
    expect(t.execs()).toBe('')
  })

  it('ignores an entry whose output is not what a run printed, in a kept answer as in a kept launch', async () => {
    const t = setup()
    for (const out of [[[1]], [[1, 2, false]], [[3, 'x', false]], [['1', 'x']], [[1, 'x', 'yes']], [1]]) {
      t.keep({ out })
      expect(await replayLaunch(t.key, t.kept), JSON.stringify(out)).toBe(false)
      save(t.kept, 'answer-key', { inputs: [], out, code: 0 })
      expect(replay('answer-key', t.kept), JSON.stringify(out)).toBe(false)
    }
    expect(t.execs()).toBe('')
    expect(stderr.join('')).toBe('')
  })

  it('does not wait on a FIFO in place of an entry', async () => {
    const t = setup()
    const file = path.join(t.kept, entryName(t.key))
    rmSync(file)
    execFileSync('mkfifo', [file])
    expect(await replayLaunch(t.key, t.kept)).toBe(false)
    expect(replay(t.key, t.kept)).toBe(false)
  })
})
