import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import * as errors from './errors.js'
import { ERROR_CATALOGUE } from './errors.js'

const docs = readFileSync(path.resolve(import.meta.dirname, '../../../docs/errors.md'), 'utf8')

describe('the error catalogue', () => {
  it('is sorted by code and has no duplicates', () => {
    const codes = ERROR_CATALOGUE.map((e) => e.code)
    expect(codes).toEqual([...new Set(codes)].sort())
  })

  it('holds every error the module exports, each under the name of its code', () => {
    const exported = Object.entries(errors).filter(([, value]) => typeof value === 'object' && value !== null && 'code' in value && 'exit' in value && 'message' in value)
    expect(exported.map(([name]) => name).sort()).toEqual(ERROR_CATALOGUE.map((e) => e.code))
    for (const [name, value] of exported) expect((value as { code: string }).code).toBe(name)
  })

  it('uses exit 1 or 2 only, and codes in SCREAMING_SNAKE', () => {
    for (const e of ERROR_CATALOGUE) {
      expect([1, 2]).toContain(e.exit)
      expect(e.code).toMatch(/^[A-Z][A-Z0-9_]*$/)
    }
  })

  it('is documented entry by entry in docs/errors.md, with its exit code', () => {
    const documented = [...docs.matchAll(/^## ([A-Z_]+) \(exit (\d)\)$/gm)].map((m) => `${m[1]} ${m[2]}`)
    expect(documented).toEqual(ERROR_CATALOGUE.map((e) => `${e.code} ${e.exit}`))
  })
})
