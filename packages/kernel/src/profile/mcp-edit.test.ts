import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { failure } from '../../../../test/helpers/failure.js'
import { testdir } from '../../../../test/helpers/testdir.js'
import { applyPlan, openMcpDocument, planPut } from './mcp-edit.js'

describe('openMcpDocument', () => {
  it('refuses a document nested deeper than it could write back, before planning, exit 2', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`
    const home = testdir({ 'mcp.json': `{"mcpServers": {}, "notes": ${deep}}` })
    const file = path.join(home, 'mcp.json')
    const error = await failure(async () => {
      const doc = await openMcpDocument(file)
      return applyPlan(doc, planPut(doc, [{ name: 'a', transport: 'stdio', command: 'x', args: [], env: {} }]))
    })
    expect([error.code, error.exit]).toEqual(['PROFILE_INVALID', 2])
    expect(error.problems).toEqual([{ file, message: 'nests 20001 levels deep; omh writes back a document up to 1000 levels deep, so it plans nothing here' }])
  })
})
