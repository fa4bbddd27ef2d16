/**
 * `omh auth` on a real engine with fake harnesses whose "login" is a script:
 * one saves a token the way real harnesses do (a new file renamed over the
 * old), one leaves before finishing, and one has its token file mounted as a
 * file instead of its directory, where that rename fails. What is recorded,
 * and what is refused, is checked on the host.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, TEST_BASE, client, removeBuiltImages, requireEngine, type Engine } from '../helpers/engines.js'
import { omhAsync, stateOf } from '../helpers/run.js'

/** One engine is enough here: the first this run tests (vitest.config.ts gives the file to Docker's project). */
const engine: Engine = ENGINES[0]!

/** A fake harness: `login` is what its binary does when run. */
const adapter = (name: string, creds: string, login: string, logins = '') => `name = "${name}"
bin = "${name}"
install = '''
cat > $OMH_PREFIX/bin/${name} <<'SH'
#!/bin/sh
${login}
SH
chmod 755 $OMH_PREFIX/bin/${name}
'''
creds = ["${creds}"]
token = ["$HOME/.fakeh/token.json"]
login = "Nothing to do: the fake logs in by itself."

${logins}
[capabilities.rules]
path = "/work/AGENTS.md"
render = "concat"
`
/** A login in the token file the credential proxy could hold, at `access`. */
const loginAt = (access: string) => `[[logins]]\nfile = "$HOME/.fakeh/token.json"\naccess = "${access}"\nhosts = ["api.fakeh.test"]\n`

// Saves the token as real harnesses do: write beside, rename over.
const SAVES = `mkdir -p "$HOME/.fakeh"
printf '{"theme":"dark"}\\n' > "$HOME/.fakeh/settings.json"
printf '{"token":"t-%s"}\\n' "$$" > "$HOME/.fakeh/.token.tmp"
mv "$HOME/.fakeh/.token.tmp" "$HOME/.fakeh/token.json"`

// Starts, writes its settings like any harness does on start, and is left before the login.
const QUITS = `mkdir -p "$HOME/.fakeh"
printf '{"theme":"dark"}\\n' > "$HOME/.fakeh/settings.json"
exit 0`



describe(`omh auth on ${engine}, with fake harnesses`, () => {
  let home: string
  const omh = (args: readonly string[], env: Record<string, string>) => omhAsync(args, { env })
  const env = () => ({ OMH_HOME: home })
  const creds = (harness: string, account: string, file = '.fakeh/token.json') => path.join(stateOf(home), 'creds', harness, account, file)

  beforeAll(async () => {
    await requireEngine(engine)
    home = mkdtempSync(path.join(os.tmpdir(), 'omh-auth-e2e-'))
    mkdirSync(path.join(home, 'adapters'))
    writeFileSync(path.join(home, 'settings.toml'), `runtime = "${engine}"\n\n[image]\nbase = "${TEST_BASE}"\nnetwork = "host"\n`)
    writeFileSync(path.join(home, 'adapters/fakeh.toml'), adapter('fakeh', '$HOME/.fakeh/', SAVES, loginAt('token')))
    // Names a login where the file it saves holds none: a key, as a provider's key in a harness's many-provider file.
    writeFileSync(path.join(home, 'adapters/fakeh-key.toml'), adapter('fakeh-key', '$HOME/.fakeh/', SAVES, loginAt('oauth.access')))
    writeFileSync(path.join(home, 'adapters/fakeh-quits.toml'), adapter('fakeh-quits', '$HOME/.fakeh/', QUITS))
    writeFileSync(path.join(home, 'adapters/fakeh-file.toml'), adapter('fakeh-file', '$HOME/.fakeh/token.json', SAVES))
  })

  afterAll(() => {
    const listed = client(engine, ['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', 'label=omh.kind=harness'])
    removeBuiltImages(engine, listed.stdout.split('\n').filter((t) => /\/omh-fakeh(-quits|-file|-key)?:/.test(t)))
    rmSync(home, { recursive: true, force: true })
  })

  it('captures the login in the account directory, the token saved by rename over a directory mount', async () => {
    const ran = await omh(['auth', 'fakeh', 'work', '--json'], env())
    expect(ran.status, ran.stderr).toBe(0)
    expect(JSON.parse(ran.stdout).result).toMatchObject({ harness: 'fakeh', account: 'work', reauthenticated: false, confirmed: true, keptOutside: true, accounts: ['work'] })
    expect(readFileSync(creds('fakeh', 'work'), 'utf8')).toMatch(/^\{"token":"t-\d+"\}\n$/)
    expect(readFileSync(creds('fakeh', 'work', '.fakeh/settings.json'), 'utf8')).toContain('dark')
  })

  it('says a login stays inside when the files hold none the adapter can keep outside', async () => {
    const ran = await omh(['auth', 'fakeh-key', 'work'], env())
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stdout).toContain('stays inside: omh keeps no fakeh-key login of this kind outside')
  })

  it('logs into the only captured account again when none is named', async () => {
    const ran = await omh(['auth', 'fakeh'], env())
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stdout).toContain('fakeh account work logged in again')
  })

  it('refuses to guess between two captured accounts', async () => {
    expect((await omh(['auth', 'fakeh', 'home'], env())).status).toBe(0)
    const ran = await omh(['auth', 'fakeh'], env())
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain('fakeh has several accounts (home, work), and nothing says which to use.')
    expect(ran.stderr).toContain('Code: ACCOUNT_AMBIGUOUS')
    expect((await omh(['auth', 'fakeh', '-a', 'home', '--json'], env())).status).toBe(0)
  })

  it('reports a login that did not complete, and records nothing', async () => {
    const ran = await omh(['auth', 'fakeh-quits', 'work'], env())
    expect(ran.status).toBe(1)
    expect(ran.stderr).toContain('The fakeh-quits login for account "work" did not complete (fakeh-quits exited 0): still empty: /home/agent/.fakeh/token.json. Nothing was recorded.')
    expect(ran.stderr).toContain('Code: LOGIN_INCOMPLETE')
    expect(existsSync(path.join(stateOf(home), 'creds/fakeh-quits/work'))).toBe(false)
  })

  it('cannot keep a login whose token file is mounted as a file: the rename over it fails', async () => {
    const ran = await omh(['auth', 'fakeh-file', 'work', '--json'], env())
    expect(ran.status).toBe(1)
    const doc = JSON.parse(ran.stdout)
    expect(doc.error.code).toBe('LOGIN_INCOMPLETE')
    expect(doc.error.details.status).not.toBe(0)
    expect(doc.error.details.output).toMatch(/mv: .*token\.json.*: (Device or )?[Rr]esource busy/)
    expect(existsSync(path.join(stateOf(home), 'creds/fakeh-file/work'))).toBe(false)
  })
})
