import { describe, expect, it } from 'vitest'
import { NEUTRAL as RECORDED } from '@omh/fast-path'
import { NEUTRAL } from '../../packages/sandbox/src/host/git.js'

describe('the recorder of kept answers', () => {
  it("knows every setting omh passes host git, so a listing's ref queries stay answerable", () => {
    expect([...RECORDED]).toEqual(NEUTRAL.filter((_, n) => n % 2 === 1))
  })
})
