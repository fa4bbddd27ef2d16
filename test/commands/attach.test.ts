import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { gitRepo, testdir, write } from '../helpers/testdir.js'

describe('omh attach, before any container', () => {
  it('refuses an editor it does not know, naming the bundled ones and the nearest', () => {
    const r = omh(['attach', 'cod'], { cwd: gitRepo(), env: { OMH_HOME: testdir() } })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('No editor is called "cod".')
    expect(r.stderr).toContain('Did you mean "code"? Known editors: code, cursor, nvim, zed.')
    expect(r.stderr).toContain('Code: EDITOR_NOT_FOUND')
  })

  it('refuses an editor file with an unknown key, with its line', () => {
    const home = testdir()
    write(home, { 'editors/mine.toml': 'name = "mine"\nbin = "mine"\nargs = []\nargz = []\n' })
    const r = omh(['attach', 'mine', '--json'], { cwd: gitRepo(), env: { OMH_HOME: home } })
    expect(r.status).toBe(2)
    expect(r.json().error).toMatchObject({ code: 'EDITOR_INVALID', problems: [{ line: 4, path: 'argz', message: 'unknown key' }] })
  })

  it('needs a repository, and a session in it', () => {
    expect(omh(['attach'], { cwd: testdir(), env: { OMH_HOME: testdir() } }).stderr).toContain('Code: NOT_A_REPOSITORY')
    const r = omh(['attach'], { cwd: gitRepo(), env: { OMH_HOME: testdir() } })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('has no sessions yet.')
    expect(r.stderr).toContain('Start one with `omh <harness>`.')
  })
})
