import { existsSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import path from 'node:path'
import { createSession, repository, resolveBase, sessionAllowed } from '@omh/sandbox'
import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { gitRepo, testdir, write } from '@omh/test-utils'

async function withSession() {
  const root = gitRepo({ 'README.md': 'hi\n' })
  const home = testdir()
  write(home, { 'settings.toml': '# mine\nruntime = "docker"\n' })
  const repo = repository(root)
  const paths = await createSession(home, repo, 's01', await resolveBase(repo, process.env), process.env)
  const env = { OMH_HOME: home, OMH_STATE: home }
  return { root, home, paths, run: (...args: string[]) => omh(['sessions', 'allow', ...args], { cwd: root, env }) }
}

describe('omh sessions allow', () => {
  it("adds hosts to the session's own allowlist, kept for its next start when no proxy runs, and with --save to your settings", async () => {
    const { home, paths, run } = await withSession()
    const r = run('api.x.test', '*.pkg.test:8443', '--json')
    expect(r.status, r.stderr).toBe(0)
    expect(r.json().result).toEqual({ session: 's01', allowed: ['api.x.test', '*.pkg.test:8443'], applied: false })
    const dir = path.join(paths.run, 'egress')
    expect(await sessionAllowed(dir)).toEqual(['api.x.test', '*.pkg.test:8443'])
    const saved = run('s01', 'api.x.test', 'other.test', '--save', '--json')
    expect(saved.status, saved.stderr).toBe(0)
    expect(saved.json().result).toMatchObject({ session: 's01', allowed: ['api.x.test', '*.pkg.test:8443', 'other.test'], saved: path.join(home, 'settings.toml') })
    expect(readFileSync(path.join(home, 'settings.toml'), 'utf8')).toBe('# mine\nruntime = "docker"\n\n[network]\nallow = [\n  "api.x.test",\n  "other.test",\n]\n')
  })

  it("with --save=repo writes the repository's settings, which stay trusted when they were; never through a link out of the repository", async () => {
    const { root, home, run } = await withSession()
    const env = { OMH_HOME: home, OMH_STATE: home }
    write(root, { '.omh/settings.toml': '[network]\nallow = ["first.test"]\n' })
    expect(omh(['trust'], { cwd: root, env }).status).toBe(0)
    const saved = run('pkg.test:8443', '--save=repo', '--json')
    expect(saved.status, saved.stderr).toBe(0)
    expect(saved.json().result.saved).toBe(path.join(root, '.omh', 'settings.toml'))
    expect(readFileSync(path.join(root, '.omh/settings.toml'), 'utf8')).toBe('[network]\nallow = [\n  "first.test",\n  "pkg.test:8443",\n]\n')
    expect(omh(['trust', '--show', '--json'], { cwd: root, env }).json().result.trusted, 'your own edit keeps your trust').toBe(true)

    // A file changed since you trusted it is not yours to add to unseen: refused, left as it is.
    write(root, { '.omh/settings.toml': '[network]\nallow = ["changed.test"]\n' })
    const untrusted = run('more.test', '--save=repo')
    expect(untrusted.status).toBe(2)
    expect(untrusted.stderr).toContain('Code: REPOSITORY_UNTRUSTED')
    expect(readFileSync(path.join(root, '.omh/settings.toml'), 'utf8')).toBe('[network]\nallow = ["changed.test"]\n')

    const elsewhere = testdir()
    rmSync(path.join(root, '.omh'), { recursive: true })
    symlinkSync(elsewhere, path.join(root, '.omh'))
    const out = run('x.test', '--save=repo')
    expect(out.status).toBe(2)
    expect(out.stderr).toContain('Code: FILE_OUTSIDE_TREE')
    expect(existsSync(path.join(elsewhere, 'settings.toml'))).toBe(false)
  })

  it('refuses what is no host pattern, and a call with no host, exit 2, changing nothing', async () => {
    const { paths, run } = await withSession()
    const bad = run('http://x.test/')
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain('"http://x.test/" is no host pattern')
    expect(run('s01').status).toBe(2)
    expect(await sessionAllowed(path.join(paths.run, 'egress'))).toEqual([])
  })
})
