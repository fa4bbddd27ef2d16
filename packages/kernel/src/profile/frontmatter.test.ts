import fc from 'fast-check'
import { load } from 'js-yaml'
import { describe, expect, it } from 'vitest'
import { readMarkdown } from './frontmatter.js'

const key = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,8}$/)
const value = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', maxLength: 20 }),
  fc.constantFrom('yes', 'No', 'null', '~', '12', '1.5', '.inf', '0x1f', 'a: b', 'a #c', '"q"', '[x]', '- y', 'TRUE', 'x:', '2024-01-01', '&a', '*a', '!t'),
)

describe('frontmatter', () => {
  it('reads `key: value` frontmatter exactly as the YAML parser does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(key, value), { maxLength: 5 }), async (pairs) => {
        const raw = pairs.map(([k, v]) => `${k}: ${v}`).join('\n')
        let expected: unknown
        try {
          expected = raw.trim() ? load(raw) : {}
        } catch {
          return // not YAML: the parser's error is what the user sees, tested elsewhere
        }
        if (expected === null || typeof expected !== 'object' || Array.isArray(expected)) return
        const read = await readMarkdown(`---\n${raw}\n---\nbody\n`, 'f.md')
        expect(read).toMatchObject({ ok: true, value: { frontmatter: expected, body: 'body\n' } })
      }),
      { numRuns: 500 },
    )
  })

  it('says where frontmatter is broken', async () => {
    expect(await readMarkdown('---\nname: x\ndescription: [oops\n---\n', 'f.md')).toMatchObject({ ok: false, problem: { file: 'f.md', line: 4 } })
    expect(await readMarkdown('---\nname: x\n', 'f.md')).toEqual({
      ok: false,
      problem: { file: 'f.md', line: 1, message: 'the frontmatter opened by `---` is never closed by another `---` line' },
    })
    expect(await readMarkdown('# no frontmatter\n', 'f.md')).toEqual({ ok: true, value: { frontmatter: undefined, body: '# no frontmatter\n', lines: {} } })
  })
})
