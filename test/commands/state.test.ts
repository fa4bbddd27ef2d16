import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh, omhAsync } from '../helpers/run.js'
import { testdir, write } from '@omh/test-utils'

/** A profile an older omh left state in. */
const OLD_PROFILE = {
  'settings.toml': 'account = "work"\n',
  'rules/style.md': 'Be brief.\n',
  'creds/claude/work/.claude/.credentials.json': '{"t":1}\n',
  'keys/repo-1/id_ed25519': 'KEY\n',
  'run/repo-1/s01/last-used': 'then\n',
  'trust.json': '{"version":1,"repositories":{}}\n',
}

describe('state apart from the profile', () => {
  it('the first command moves state out of the profile once, says so, and the next says nothing', () => {
    const home = testdir(OLD_PROFILE)
    const state = path.join(testdir(), 'state')
    const first = omh(['adapters', 'ls'], { env: { OMH_HOME: home, OMH_STATE: state } })
    expect(first.status).toBe(0)
    expect(first.stderr).toContain(`omh: moved omh's state (4 parts) from ${home} to ${state}; your profile stays in ${home}.`)
    expect(readdirSync(home).sort()).toEqual(['rules', 'settings.toml'])
    expect(readdirSync(state).sort()).toEqual(['creds', 'keys', 'run', 'trust.json'])
    expect(readFileSync(path.join(state, 'creds/claude/work/.claude/.credentials.json'), 'utf8')).toBe('{"t":1}\n')
    expect(statSync(state).mode & 0o777).toBe(0o700)
    const again = omh(['adapters', 'ls'], { env: { OMH_HOME: home, OMH_STATE: state } })
    expect(again.stderr).toBe('')
  })

  it('two commands started together move it once, whole', async () => {
    const home = testdir(OLD_PROFILE)
    const state = path.join(testdir(), 'state')
    const env = { OMH_HOME: home, OMH_STATE: state }
    const runs = await Promise.all([omhAsync(['adapters', 'ls'], { env }), omhAsync(['adapters', 'ls'], { env }), omhAsync(['plugins'], { env })])
    expect(runs.map((r) => r.status)).toEqual([0, 0, 0])
    expect(runs.filter((r) => r.stderr.includes('moved omh\'s state'))).toHaveLength(1)
    expect(runs.map((r) => r.stderr).join('')).not.toContain('stays where it is')
    expect(readdirSync(home).sort()).toEqual(['rules', 'settings.toml'])
    expect(existsSync(path.join(state, 'keys/repo-1/id_ed25519'))).toBe(true)
    expect(existsSync(path.join(state, '.move-journal.json'))).toBe(false)
  })

  it('a part already in the state directory is left in the profile, named, each time until the user picks one', () => {
    const home = testdir({ 'keys/repo-1/id_ed25519': 'OLD\n' })
    const state = testdir()
    write(state, { 'keys/repo-1/id_ed25519': 'NEW\n' })
    const env = { OMH_HOME: home, OMH_STATE: state }
    const ran = omh(['adapters', 'ls'], { env })
    expect(ran.status).toBe(0)
    expect(ran.stderr).toContain(`omh: ${path.join(home, 'keys/repo-1')} stays where it is: ${path.join(state, 'keys/repo-1')} already exists. Keep one of them and remove the other.`)
  })

  it('a move that cannot finish fails STATE_MOVE_FAILED, exit 1, and leaves each part whole', () => {
    const home = testdir(OLD_PROFILE)
    const state = path.join(testdir({ 'blocker': 'a file where a directory must go\n' }), 'blocker', 'state')
    const ran = omh(['adapters', 'ls'], { env: { OMH_HOME: home, OMH_STATE: state } })
    expect(ran.status).toBe(1)
    expect(ran.stderr).toContain('Code: STATE_MOVE_FAILED')
    expect(readFileSync(path.join(home, 'creds/claude/work/.claude/.credentials.json'), 'utf8')).toBe('{"t":1}\n')
  })
})
