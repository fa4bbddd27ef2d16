import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { NEUTRAL } from '../../packages/sandbox/src/host/git.js'
import { ROOT } from '../helpers/run.js'

describe('the recorder of kept answers', () => {
  it("knows every setting omh passes host git, so a listing's ref queries stay answerable", () => {
    const source = readFileSync(path.join(ROOT, 'bin/record.js'), 'utf8')
    const listed = /const NEUTRAL = new Set\((\[[^\]]*\])\)/.exec(source)?.[1]
    expect(listed, 'bin/record.js lists the settings').toBeDefined()
    const settings = NEUTRAL.filter((_, n) => n % 2 === 1)
    expect(JSON.parse(listed!.replaceAll("'", '"'))).toEqual(settings)
  })
})
