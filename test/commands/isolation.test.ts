import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { omh, stateOf } from '../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

describe("the tests' own environment", () => {
  const saved = { home: process.env['OMH_HOME'], state: process.env['OMH_STATE'] }
  afterEach(() => {
    for (const [key, value] of [['OMH_HOME', saved.home], ['OMH_STATE', saved.state]] as const) {
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }
  })

  it('keeps the OMH_HOME and OMH_STATE a developer exported away from the omh a test runs', () => {
    const theirs = testdir()
    process.env['OMH_HOME'] = path.join(theirs, 'home')
    process.env['OMH_STATE'] = path.join(theirs, 'state')
    const home = testdir({ 'settings.toml': 'runtime = "no-such-engine"\n' })
    const root = gitRepo({ 'README.md': 'hi\n' })
    const r = omh(['--dry-run', 'claude'], { cwd: root, env: { OMH_HOME: home } })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain(stateOf(home))
    expect(existsSync(path.join(theirs, 'state'))).toBe(false)
    expect(existsSync(path.join(theirs, 'home'))).toBe(false)
  })
})
