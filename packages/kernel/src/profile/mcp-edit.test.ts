import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { failure } from '@omh/test-utils'
import { testdir } from '@omh/test-utils'
import { applyPlan, openMcpDocument, planPut } from './mcp-edit.js'
import { readMcpFile } from './mcp-file.js'

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

describe('`required` on a server', () => {
  it('is read, and left as the user wrote it when an import brings the same server or a changed one', async () => {
    const file = path.join(testdir(), 'mcp.json')
    writeFileSync(file, JSON.stringify({ mcpServers: { docs: { command: 'srv', args: ['a'], required: true } } }))
    expect((await readMcpFile(file)).servers).toEqual([{ name: 'docs', transport: 'stdio', command: 'srv', args: ['a'], env: {}, required: true, source: file }])
    const doc = await openMcpDocument(file)
    // What a harness file gives back never says `required`.
    const same = { name: 'docs', transport: 'stdio' as const, command: 'srv', args: ['a'], env: {} }
    expect(planPut(doc, [same]).map((s) => s.change)).toEqual(['same'])
    const plan = planPut(doc, [{ ...same, args: ['b'] }])
    expect(plan.map((s) => [s.change, s.fields])).toEqual([['changed', ['args']]])
    writeFileSync(file, applyPlan(doc, plan))
    expect(JSON.parse(readFileSync(file, 'utf8')).mcpServers.docs).toEqual({ command: 'srv', args: ['b'], required: true })
  })
})
