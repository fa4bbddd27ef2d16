import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { complete, lines, type Manifest } from '../../src/lib/complete.js'
import { ROOT } from '../helpers/run.js'

const read = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8'))
const manifest: Manifest = { ...read('oclif.manifest.json'), topics: read('package.json').oclif.topics }
const words = (...typed: string[]) => complete(manifest, typed).candidates.map(([w]) => w)

describe('completion, from the manifest', () => {
  it('steps over omh flags and their values before the command or harness', () => {
    expect(complete(manifest, ['--session', 's01', '-a', 'work', 'cl'])).toEqual({ candidates: [], dynamic: 'harness' })
    expect(words('--runtime', 'docker', 'se')).toEqual(['sessions'])
    expect(words('--json', 'sessions', '--runtime', 'podman', '')).toEqual(['allow', 'attach', 'commit', 'diff', 'down', 'egress', 'exec', 'logs', 'ls', 'ports', 'push', 'rm', 'show', 'test', 'watch'])
  })

  it('completes a flag value written with =, and never past --', () => {
    expect(words('render', '--color=a')).toEqual(['--color=auto', '--color=always'])
    expect(complete(manifest, ['sessions', 'rm', '--'])).toMatchObject({ candidates: expect.arrayContaining([['--force', expect.any(String)]]) })
    expect(complete(manifest, ['--', ''])).toEqual({ candidates: [] })
    expect(complete(manifest, ['claude', ''])).toEqual({ candidates: [] })
  })

  it('asks for values by kind: harnesses, sessions, editors, files', () => {
    expect(complete(manifest, ['auth', '']).dynamic).toBe('harness')
    expect(complete(manifest, ['auth', 'claude', '']).dynamic).toBeUndefined()
    expect(complete(manifest, ['sessions', 'commit', '-m', 'msg', '']).dynamic).toBe('session')
    expect(complete(manifest, ['attach', '']).dynamic).toBe('editor')
    expect(complete(manifest, ['attach', '-s', '']).dynamic).toBe('session')
    expect(complete(manifest, ['adapters', 'validate', '']).files).toBe(true)
    expect(complete(manifest, ['completion', '']).candidates.map(([w]) => w)).toEqual(['bash', 'zsh', 'fish'])
  })

  it('prints a word and its description a line, values the candidates do not hold, and :files', () => {
    expect(lines({ candidates: [['doctor', 'Prove\ta harness']] }, ['dolt', 'codex', 'doctor'], 'do')).toEqual(['doctor\tProve a harness', 'dolt'])
    expect(lines({ candidates: [], files: true }, [], '')).toEqual([':files'])
  })
})
