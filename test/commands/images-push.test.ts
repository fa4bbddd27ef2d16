import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { testdir } from '@omh/test-utils'

describe('[image] registry and omh images push', () => {
  it('refuses a registry written as a URL, naming the file and the key, exit 2', () => {
    const home = testdir({ 'settings.toml': '[image]\nregistry = "https://registry.example.com/team/"\n' })
    const r = omh(['images', 'push'], { env: { OMH_HOME: home } })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('settings.toml')
    expect(r.stderr).toContain('line 2, col 1  image.registry:')
    expect(r.stderr).toContain('without a scheme or a trailing slash')
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it('says what to set when no registry is named, before asking any engine, exit 2', () => {
    const home = testdir({ 'settings.toml': 'runtime = "no-such-engine"\n' })
    const r = omh(['images', 'push'], { env: { OMH_HOME: home } })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('`[image] registry` is not set')
    expect(r.stderr).toContain('registry = "registry.example.com/team"')
  })
})
