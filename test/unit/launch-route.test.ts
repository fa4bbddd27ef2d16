import { describe, expect, it } from 'vitest'
import { harnessWords } from '../../src/commands/launch.js'
import { routeArgv } from '../../src/lib/route.js'
import { failure } from '@omh/test-utils'

const commands = new Set(['adapters', 'render', 'sessions'])
const sync = async (run: () => unknown) => run()

describe('routing argv to oclif', () => {
  it('makes a bare word a launch, with omh flags first and the harness words after a `--`', () => {
    expect(routeArgv(['claude', '--help', 'a:b'], commands)).toEqual(['launch', '--', 'claude', '--help', 'a:b'])
    expect(routeArgv(['--dry-run', '-s', 's01', 'claude', 'x', 'y'], commands)).toEqual(['launch', '--dry-run', '-s', 's01', '--', 'claude', 'x', 'y'])
    expect(routeArgv(['--color', 'never', '-a', 'work', 'codex'], commands)).toEqual(['launch', '--color', 'never', '-a', 'work', '--', 'codex'])
  })

  it('moves omh flags written before a command after it', () => {
    expect(routeArgv(['--json', 'sessions', 'ls'], commands)).toEqual(['sessions', 'ls', '--json'])
    expect(routeArgv(['sessions', 'ls', '--json'], commands)).toEqual(['sessions', 'ls', '--json'])
  })

  it('leaves help and version alone', () => {
    expect(routeArgv(['--help'], commands)).toEqual(['--help'])
    expect(routeArgv(['--help', 'sessions'], commands)).toEqual(['--help', 'sessions'])
    expect(routeArgv([], commands)).toEqual([])
  })
})

describe('the words of a launch', () => {
  it('are the harness and its arguments exactly as typed, repeated words included', () => {
    expect(harnessWords(['--new', '--', 'claude', '-p', 'hi there', '-s', 'x', '-p', 'hi there'])).toEqual({
      harness: 'claude',
      args: ['-p', 'hi there', '-s', 'x', '-p', 'hi there'],
    })
  })

  it("refuse one of omh's long flags after the harness name, in either spelling", async () => {
    for (const arg of ['--dry-run', '--session=s01', '--json', '--help', '--new']) {
      const error = await failure(() => sync(() => harnessWords(['--', 'claude', '-p', arg])))
      expect(error.code).toBe('LAUNCH_FLAG_MISPLACED')
      expect(error.exit).toBe(2)
      expect(error.hint).toContain(`\`omh ${arg} claude -p\``)
      expect(error.hint).toContain(`\`omh claude -- ${arg}\``)
    }
  })

  it('pass anything after the user’s `--` through, and take that `--` out', () => {
    expect(harnessWords(['--', 'claude', '-p', '--', '--dry-run', '--', 'x']).args).toEqual(['-p', '--dry-run', '--', 'x'])
  })

  it('need a harness name', async () => {
    expect((await failure(() => sync(() => harnessWords(['--dry-run'])))).message).toMatch(/Name a harness/)
    expect((await failure(() => sync(() => harnessWords(['--', '--', 'claude'])))).message).toMatch(/before `--`/)
    expect(routeArgv(['--new', '--session'], commands)).toEqual(['launch', '--new', '--session'])
  })
})
