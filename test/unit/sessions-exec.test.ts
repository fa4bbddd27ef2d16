import { describe, expect, it } from 'vitest'
import { sessionAndRest } from '../../src/lib/sessions-command.js'

const splitAtDashes = (words: string[]) => {
  const { rest, ...session } = sessionAndRest(words, ['--runtime'], 'sessions exec')
  return { ...session, command: rest }
}

describe('omh sessions exec: the session and the command', () => {
  it('takes everything after -- as the command, and at most one session id before it, stepping over flags', () => {
    expect(splitAtDashes([])).toEqual({ command: [] })
    expect(splitAtDashes(['s02'])).toEqual({ session: 's02', command: [] })
    expect(splitAtDashes(['--', 'npm', 'test', '--', '-x'])).toEqual({ command: ['npm', 'test', '--', '-x'] })
    expect(splitAtDashes(['--runtime', 'podman', 's01', '--json', '--', 'ls'])).toEqual({ session: 's01', command: ['ls'] })
    expect(splitAtDashes(['--runtime=podman', '--', 'ls'])).toEqual({ command: ['ls'] })
  })

  it('refuses a command given without --, naming how to write it', () => {
    expect(() => splitAtDashes(['s01', 'npm', 'test'])).toThrow('omh sessions exec s01 -- npm test')
  })
})
