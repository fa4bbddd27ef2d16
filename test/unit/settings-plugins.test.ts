import { describe, expect, it } from 'vitest'
import { withAllowedHosts, withPlugins } from '../../src/lib/settings-plugins.js'

const add = (name: string) => (current: readonly string[]) => [...current, name]

describe('withPlugins', () => {
  it('adds `plugins` at the top when the file has none, keeping every byte after it', () => {
    const text = '# mine\n[image]\nbase = "x" # a comment\n'
    expect(withPlugins(text, 's.toml', add('a'))).toBe(`plugins = ["a"]\n${text}`)
    expect(withPlugins('', 's.toml', add('a'))).toBe('plugins = ["a"]\n')
  })

  it('rewrites only the array, read past strings and comments that hold brackets', () => {
    const text = 'runtime = "auto"\nplugins = [\n  "./a]b.js", # not the end ]\n  \'c[d\',\n] # after\n[image]\nbase = "x"\n'
    expect(withPlugins(text, 's.toml', add('e'))).toBe(
      'runtime = "auto"\nplugins = [\n  "./a]b.js",\n  "c[d",\n  "e",\n] # after\n[image]\nbase = "x"\n',
    )
    expect(withPlugins(text, 's.toml', () => [])).toBe('runtime = "auto"\n[image]\nbase = "x"\n')
  })

  it('keeps a #:schema directive on the first line, where editors read it', () => {
    const text = '#:schema https://example.test/settings.json\n# mine\n[image]\nbase = "x"\n'
    expect(withPlugins(text, 's.toml', add('a'))).toBe('#:schema https://example.test/settings.json\nplugins = ["a"]\n# mine\n[image]\nbase = "x"\n')
  })

  it('takes the key away when the last plugin goes, leaving no `plugins = []` behind', () => {
    expect(withPlugins('#:schema x\nplugins = ["a"]\n[image]\nbase = "x"\n', 's.toml', () => [])).toBe('#:schema x\n[image]\nbase = "x"\n')
    expect(withPlugins('plugins = ["a"]', 's.toml', () => [])).toBe('')
    expect(withPlugins('[image]\nbase = "x"\n', 's.toml', () => [])).toBe('[image]\nbase = "x"\n')
  })

  it('refuses to edit a `plugins` it cannot rewrite without touching anything else', () => {
    expect(() => withPlugins('plugins = "a"\n', 's.toml', add('b'))).toThrow(/`plugins` is not a list of strings/)
    expect(() => withPlugins('plugins.x = 1\n', 's.toml', add('b'))).toThrow(/`plugins` is not a list of strings/)
    expect(() => withPlugins('"plugins" = []\n', 's.toml', add('b'))).not.toThrow()
    expect(() => withPlugins('a = [\n1]\n[t]\nplugins = []\n', 's.toml', add('b'))).not.toThrow()
  })
})

describe('withAllowedHosts', () => {
  it('adds a [network] table at the end of a file without one, every byte before it kept', () => {
    expect(withAllowedHosts('# mine\nruntime = "auto"\n', 's.toml', ['api.x.test'])).toBe('# mine\nruntime = "auto"\n\n[network]\nallow = ["api.x.test"]\n')
    expect(withAllowedHosts('', 's.toml', ['a.test', 'b.test'])).toBe('[network]\nallow = [\n  "a.test",\n  "b.test",\n]\n')
  })

  it('adds the list below the header of a table without it, and extends a list that is there', () => {
    expect(withAllowedHosts('[network] # out\negress = "allowlist"\n', 's.toml', ['a.test'])).toBe('[network] # out\nallow = ["a.test"]\negress = "allowlist"\n')
    expect(withAllowedHosts('[network]\nallow = ["a.test"] # kept\n[image]\nbase = "x"\n', 's.toml', ['b.test', 'a.test'])).toBe(
      '[network]\nallow = [\n  "a.test",\n  "b.test",\n] # kept\n[image]\nbase = "x"\n',
    )
  })

  it('leaves a file that allows the hosts already as it is, and refuses a way of writing it omh would not keep', () => {
    expect(withAllowedHosts('[network]\nallow = ["a.test"]\n', 's.toml', ['a.test'])).toBe('[network]\nallow = ["a.test"]\n')
    expect(() => withAllowedHosts('network = { allow = ["a.test"] }\n', 's.toml', ['b.test'])).toThrow(/SETTINGS_UNEDITABLE|allow/)
  })
})
