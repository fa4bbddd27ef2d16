import { chmodSync } from 'node:fs'
import { createServer, type AddressInfo, type Server } from 'node:net'
import path from 'node:path'
import { repository } from '@omh/sandbox'
import { afterEach, describe, expect, it } from 'vitest'
import { omh, omhAsync, stateOf } from '../helpers/run.js'
import { gitRepo, testdir, write } from '@omh/test-utils'

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

/**
 * A runtime whose every session container runs and publishes sshd's port
 * where $FAKE_SSH_PORT says (or, with FAKE_PUBLISHES=no, says nothing of
 * ports, as a cluster's runtime): enough for attach to get as far as the editor.
 */
const FAKE_RUNTIME = `const answer = { exitCode: 0, stdout: '', stderr: '' }
export default {
  kind: 'runtime', apiVersion: 1, meta: { name: 'fake-runtime', version: '0.0.0' }, engine: 'fake',
  async detect() { return { engine: 'fake', version: '1' } },
  async hasImage() { return true },
  async build() {},
  async up() { return 'c' },
  async exec() { return answer },
  async run() { return answer },
  async list(labels) {
    const ports = process.env.FAKE_PUBLISHES === 'no' ? {} : { ports: [{ guest: 2222, host: Number(process.env.FAKE_SSH_PORT), hostIp: '127.0.0.1' }] }
    return [{ id: 'c', name: 'c', running: true, image: 'i', labels, ...ports }]
  },
  async down() {},
}
`

describe('omh attach, with the session running', () => {
  let server: Server | undefined
  afterEach(() => {
    server?.close()
    server = undefined
  })

  async function setup(extra: Record<string, string> = {}) {
    // Something on 127.0.0.1 that greets as sshd does.
    server = createServer((socket) => socket.end('SSH-2.0-fake\r\n'))
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    const home = testdir({
      'settings.toml': 'plugins = ["./fake-runtime.mjs"]\nruntime = "fake"\n',
      'fake-runtime.mjs': FAKE_RUNTIME,
      'editors/fine.toml': 'name = "fine"\nbin = "sh"\nargs = ["-c", "echo opened $0", "$ALIAS"]\n',
      'editors/failing.toml': 'name = "failing"\nbin = "sh"\nargs = ["-c", "exit 3"]\n',
      'bin/broken': '#!/nowhere/interpreter\n',
    })
    chmodSync(path.join(home, 'bin/broken'), 0o755)
    write(home, { 'editors/broken.toml': `name = "broken"\nbin = "${path.join(home, 'bin/broken')}"\nargs = []\n` })
    const root = gitRepo()
    // A session is a worktree directory, as far as finding one goes.
    write(stateOf(home), { [`worktrees/${repository(root).id}/s01/.keep`]: '' })
    const port = String((server!.address() as AddressInfo).port)
    const env = { OMH_HOME: home, HOME: testdir(), FAKE_SSH_PORT: port, ...extra }
    const attach = (...args: string[]) => omhAsync(['attach', ...args], { cwd: root, env })
    return { attach, alias: `omh-${repository(root).id}-s01`, port }
  }

  it('opens the editor and exits 0 when it does', async () => {
    const t = await setup()
    const r = await t.attach('fine')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).toContain(`opened ${t.alias}\n`)
  })

  it('exits with the editor’s status when it fails, in --json too', async () => {
    const t = await setup()
    expect((await t.attach('failing')).status).toBe(3)
    const json = await t.attach('failing', '--json')
    expect(json.status).toBe(3)
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 3, result: { session: 's01', editor: { name: 'failing', started: true, status: 3 } } })
  })

  it('fails with EDITOR_FAILED when the editor cannot be started, saying the session is ready anyway', async () => {
    const t = await setup()
    const r = await t.attach('broken')
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/Could not start the editor broken \(\S+\/bin\/broken\): .*ENOENT/)
    expect(r.stderr).toContain(`ssh ${t.alias}`)
    expect(r.stderr).toContain('Code: EDITOR_FAILED')
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it('says what to forward when the runtime publishes no port here, and attaches through the forward given with --port', async () => {
    const t = await setup({ FAKE_PUBLISHES: 'no' })
    const refused = await t.attach()
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain('Session s01 runs where this machine cannot reach its sshd: the fake runtime publishes no port of its container c on this machine.')
    expect(refused.stderr).toContain('then run `omh attach --port <that port>`')
    expect(refused.stderr).toContain('Code: ATTACH_NEEDS_TUNNEL')
    const r = await t.attach('--port', t.port)
    expect(r.status).toBe(0)
    expect(r.stdout).toContain(`listens on 127.0.0.1:${t.port} as ${t.alias}`)
    expect((await t.attach('--port', '0')).status).toBe(2)
  })
})
