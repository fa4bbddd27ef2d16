import { describe, expect, it } from 'vitest'
import { parseLaunch } from '../../src/lib/launch-argv.js'
import { routeArgv } from '../../src/lib/route.js'
import { failure } from '../helpers/failure.js'

const commands = new Set(['adapters', 'render', 'sessions'])
const sync = async (run: () => unknown) => run()

describe('reading a launch', () => {
  it('takes omh flags before the harness name and everything after it for the harness', () => {
    const parsed = parseLaunch(['--new', '--runtime=podman', 'claude', '-p', 'hi there', '-s', 'x'])
    expect(parsed).toEqual({
      flags: { new: true, runtime: 'podman', dryRun: false, json: false, verbose: false, color: 'auto' },
      harness: 'claude',
      args: ['-p', 'hi there', '-s', 'x'],
    })
    expect(parseLaunch(['-s', 's02', '--dry-run', '--color', 'never', 'codex']).flags).toMatchObject({ session: 's02', dryRun: true, color: 'never' })
  })

  it("refuses one of omh's long flags after the harness name, in either spelling", async () => {
    for (const arg of ['--dry-run', '--session=s01', '--json', '--help', '--new']) {
      const error = await failure(() => sync(() => parseLaunch(['claude', '-p', arg])))
      expect(error.code).toBe('LAUNCH_FLAG_MISPLACED')
      expect(error.exit).toBe(2)
      expect(error.hint).toContain(`\`omh ${arg} claude -p\``)
      expect(error.hint).toContain(`\`omh claude -- ${arg}\``)
    }
  })

  it('passes anything after `--` through, and takes the `--` out', () => {
    expect(parseLaunch(['claude', '-p', '--', '--dry-run', '--', 'x']).args).toEqual(['-p', '--dry-run', '--', 'x'])
  })

  it('refuses what it cannot read, as usage errors', async () => {
    const cases: [string[], RegExp][] = [
      [['--nope', 'claude'], /--nope is not a flag/],
      [['--session'], /--session needs a value/],
      [['--new', '--session', 's01', 'claude'], /give one of them/],
      [['--json', 'claude'], /goes with --dry-run/],
      [['--color', 'pink', 'claude'], /auto, always or never/],
      [['--dry-run'], /Name a harness/],
    ]
    for (const [argv, message] of cases) {
      const error = await failure(() => sync(() => parseLaunch(argv)))
      expect(error.code).toBe('USAGE')
      expect(error.message).toMatch(message)
    }
  })
})

describe('routing argv to oclif', () => {
  it('cuts a launch after the harness name, so oclif never acts on the harness arguments', () => {
    expect(routeArgv(['claude', '--help', 'a:b'], commands)).toEqual(['claude'])
    expect(routeArgv(['--dry-run', '-s', 's01', 'claude', 'x', 'y'], commands)).toEqual(['--dry-run', '-s', 's01', 'claude'])
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
