import { describe, expect, it } from 'vitest'
import { placeholdersOf } from './pattern.js'

describe('probe patterns', () => {
  it('name their placeholders in order, repeats included', () => {
    expect(placeholdersOf('{{name}}: * {{path}}/{{name}}')).toEqual(['name', 'path', 'name'])
  })
})
