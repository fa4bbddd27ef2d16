import { readFileSync } from 'node:fs'
import path from 'node:path'
import { createSession, repository, resolveBase, sessionAllowed } from '@omh/sandbox'
import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { gitRepo, testdir, write } from '../helpers/testdir.js'

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

  it('refuses what is no host pattern, and a call with no host, exit 2, changing nothing', async () => {
    const { paths, run } = await withSession()
    const bad = run('http://x.test/')
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain('"http://x.test/" is no host pattern')
    expect(run('s01').status).toBe(2)
    expect(await sessionAllowed(path.join(paths.run, 'egress'))).toEqual([])
  })
})
