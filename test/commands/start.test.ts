import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { BIN, testEnv } from '../helpers/run.js'
import { testdir } from '@omh/test-utils'

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

// An older Node than omh needs, where the machine has one (Debian's own, beside the one omh runs on).
const olderNode = ['/usr/bin/node', '/usr/local/bin/node'].find((node) => existsSync(node) && Number(execFileSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' })) < 22)

describe('omh started by a Node older than 22', () => {
  it.skipIf(!olderNode)('says which Node it needs, exit 1, without a stack trace', () => {
    const r = spawnSync(olderNode!, [BIN, 'adapters', 'ls'], { env: testEnv({ OMH_HOME: testdir() }) as NodeJS.ProcessEnv, encoding: 'utf8' })
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/^Error: omh needs Node 22 or later; this is Node \d+\.\d+\.\d+\.\n/)
    expect(r.stderr).toContain('Code: NODE_UNSUPPORTED')
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })
})

describe('omh piped into a reader that stops early', () => {
  it('ends quietly, with no warning of a write left pending', () => {
    for (const args of ['--help', 'doctor --help', 'adapters ls']) {
      const r = spawnSync('bash', ['-c', `set -o pipefail; ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} ${args} | head -c 1 >/dev/null`], { env: testEnv({ OMH_HOME: testdir() }) as NodeJS.ProcessEnv, encoding: 'utf8' })
      expect(r.stderr, args).toBe('')
      expect(r.status, args).toBe(0)
    }
  })
})
