import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { BIN, testEnv } from '../helpers/run.js'
import { testdir } from '../helpers/testdir.js'

describe('omh run from a directory that was removed', () => {
  it('says so, exit 2, without a stack trace', () => {
    const gone = path.join(testdir(), 'gone')
    const line = `mkdir ${gone} && cd ${gone} && rmdir ${gone} && exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} adapters ls`
    const r = spawnSync('sh', ['-c', line], { env: testEnv({ OMH_HOME: testdir() }) as NodeJS.ProcessEnv, encoding: 'utf8' })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('The current directory no longer exists')
    expect(r.stderr).toContain('Code: USAGE')
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })
})
