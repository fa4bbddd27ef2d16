import { describe, expect, it } from 'vitest'
import { memoryBytes } from '@omh/plugin-kit'

describe('memoryBytes', () => {
  it('reads bytes, binary units and a share of the host', () => {
    expect(memoryBytes(1000, 0)).toBe(1000)
    expect(memoryBytes('512m', 0)).toBe(512 * 1024 ** 2)
    expect(memoryBytes('4G', 0)).toBe(4 * 1024 ** 3)
    expect(memoryBytes('1.5gib', 0)).toBe(1.5 * 1024 ** 3)
    expect(memoryBytes('64k', 0)).toBe(65536)
    expect(memoryBytes('50%', 8000)).toBe(4000)
  })
})
