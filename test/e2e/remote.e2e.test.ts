// Sessions on an engine that does not share this machine's disk: a Docker and a
// Podman running in containers of the host's engines, their APIs on 127.0.0.1
// (../shared/runtimes/remote/start.sh). One nested engine per kind serves the
// whole file and is removed after it. omh builds its images there, as it would
// on a build box: only the recipe crosses.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, TEST_BASE as BASE, TEST_RUN, freePort } from '../helpers/engines.js'
import { BIN, ROOT, finished, probeProject, stateOf } from '../helpers/run.js'
import { proxyRecipe } from '../../packages/sandbox/src/network/egress.js'
import { write } from '@omh/test-utils'

const START = process.env['OMH_REMOTE_START'] ?? path.resolve(ROOT, '../shared/runtimes/remote/start.sh')
const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, ...identity } }).trim()

/** `key=value` lines a probe printed. */
const facts = (stdout: string) => Object.fromEntries(stdout.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))

describe.each(ENGINES)('a session on a %s that does not share this disk', (engine) => {
  const nested = `omh-e2e-remote-${engine}-${TEST_RUN}`.toLowerCase()
  let home: string
  let root: string
  let env: Record<string, string>
  /** Where the nested engine is, as its client reads it. */
  let target: Record<string, string>
  const omh = (args: readonly string[]) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: root, env: { ...process.env, NO_COLOR: '1', ...identity, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    return finished(child, 600_000)
  }
  /** The nested engine's own client. */
  const remote = (...args: string[]) => spawnSync(engine, args, { encoding: 'utf8', env: { ...process.env, ...target } })
  const volumes = () => remote('volume', 'ls', '-q', '--filter', 'label=omh.session').stdout.split('\n').filter(Boolean).sort()
  const worktree = (sid: string) => path.join(stateOf(home), 'worktrees', readdirSync(path.join(stateOf(home), 'worktrees'))[0]!, sid)
  /** The egress proxy's image, if this machine's engine has it, goes there as the probe's did; otherwise a launch builds it there. */
  const loadProxyImage = () => {
    const tag = proxyRecipe({ from: BASE, network: 'host' }).tag
    const { DOCKER_HOST: _d, CONTAINER_HOST: _c, ...here } = process.env
    if (remote('image', 'inspect', tag).status === 0 || spawnSync(engine, ['image', 'inspect', tag], { env: here }).status !== 0) return
    const [key, value] = Object.entries(target)[0]!
    spawnSync('sh', ['-c', `${engine} save "$1" | ${key}="$2" ${engine} load -q`, 'load', tag, value], { env: here, stdio: 'ignore' })
  }

  beforeAll(async () => {
    const port = await freePort()
    const started = spawnSync(START, [engine, nested, String(port)], { encoding: 'utf8', timeout: 600_000 })
    if (started.status !== 0) throw new Error(`the nested ${engine} did not start: ${started.stderr}`)
    // The nested Podman's image has no catatonit, which `--init` needs: the host's static one serves.
    if (engine === 'podman') {
      const catatonit = realpathSync(spawnSync('sh', ['-c', 'command -v catatonit'], { encoding: 'utf8' }).stdout.trim() || '/usr/bin/catatonit')
      spawnSync('podman', ['exec', nested, 'mkdir', '-p', '/usr/libexec/podman'])
      spawnSync('podman', ['cp', catatonit, `${nested}:/usr/libexec/podman/catatonit`])
    }
    const line = started.stdout.trim().split('\n').at(-1)!
    target = { [line.slice(0, line.indexOf('='))]: line.slice(line.indexOf('=') + 1) }
    home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-e2e-remote-')))
    root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-e2e-remote-repo-')))
    probeProject(home, `runtime = "${engine}"\n[image]\nbase = "${BASE}"\nnetwork = "host"\n[network]\negress = "open"\n`, root, { 'README.md': 'the checkout\n' })
    env = { OMH_HOME: home, OMH_STATE: stateOf(home), ...target }
    // The probe's image, if this machine's engine has it already (other test files build it), goes
    // there by save | load: seconds instead of minutes. Otherwise the first launch builds it there.
    const { DOCKER_HOST: _d, CONTAINER_HOST: _c, ...here } = { ...process.env, ...env }
    const planned = spawnSync(process.execPath, [BIN, '--dry-run', '--json', 'probe'], { cwd: root, env: here, encoding: 'utf8' })
    const tag = planned.status === 0 ? (JSON.parse(planned.stdout) as { result: { container: { image: string } } }).result.container.image : undefined
    if (tag && spawnSync(engine, ['image', 'inspect', tag]).status === 0) {
      const quoted = (v: string) => `'${v.replace(/'/g, "'\\''")}'`
      const [key, value] = Object.entries(target)[0]!
      spawnSync('sh', ['-c', `${engine} save ${quoted(tag)} | ${key}=${quoted(value)} ${engine} load -q`], { env: here, stdio: 'ignore' })
    }
  }, 900_000)

  afterAll(() => {
    spawnSync(START, ['rm', nested])
    for (const dir of [home, root]) if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('refuses bind mounts the engine cannot see, rather than start with an empty /work', async () => {
    write(root, { '.omh/settings.local.toml': '[session]\nfiles = "mounted"\n' })
    try {
      // The first launch builds the images on the nested engine: a few minutes, once.
      const r = await omh(['probe', '--', 'ls /work'])
      expect(r.status).toBe(1)
      expect(r.stderr).toContain('Code: ENGINE_FILES_UNREACHABLE')
      expect(r.stderr).toMatch(/does not see \S+ through a bind mount/)
      expect(remote('ps', '-aq', '--filter', 'label=omh.session').stdout.trim()).toBe('')
      expect(existsSync(path.join(stateOf(home), 'worktrees')) ? readdirSync(path.dirname(worktree('s01'))) : []).toEqual([])
    } finally {
      rmSync(path.join(root, '.omh'), { recursive: true, force: true })
    }
  }, 900_000)

  it('copies the session in, and what the agent writes and commits comes back for diff and commit', async () => {
    // What the agent saw is read from a file it wrote, which must come back: a remote client's output
    // may lose lines (podman-remote exec, podman-container-tools/podman#25855).
    const r = await omh(['probe', '--', 'echo made > from-agent.txt; git add from-agent.txt; git commit -qm "The agent made a file"; { echo "readme=$(cat README.md)"; echo "rules=$(head -1 AGENTS.md)"; } > loose.txt'])
    expect(r.stderr).toContain('omh: probe on omh/s01')
    expect(r.status).toBe(0)
    expect(facts(readFileSync(path.join(worktree('s01'), 'loose.txt'), 'utf8'))).toMatchObject({ readme: 'the checkout', rules: '<!-- omh: style -->' })
    expect(readFileSync(path.join(worktree('s01'), 'from-agent.txt'), 'utf8')).toBe('made\n')
    expect(volumes().length).toBeGreaterThan(0)
    const diff = await omh(['sessions', 'diff', 's01', '--stat'])
    expect(diff.stdout).toContain('from-agent.txt')
    expect(diff.stdout).toContain('loose.txt')
    expect(diff.stdout).not.toContain('AGENTS.md')
    const commit = await omh(['sessions', 'commit', 's01', '-m', 'The rest'])
    expect(commit.status).toBe(0)
    expect(git(root, 'log', '--format=%s', 'omh/s01').split('\n').slice(0, 2)).toEqual(['The rest', 'The agent made a file'])
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01')).toBe('loose.txt')
  }, 900_000)

  it("relaunches into the same container and volumes, where the agent's work still is", async () => {
    const before = { volumes: volumes(), container: remote('ps', '-q', '--filter', 'label=omh.session=s01').stdout.trim() }
    const r = await omh(['probe', '--', 'cp from-agent.txt again.txt'])
    expect(r.status).toBe(0)
    expect(readFileSync(path.join(worktree('s01'), 'again.txt'), 'utf8')).toBe('made\n')
    expect(volumes()).toEqual(before.volumes)
    expect(remote('ps', '-q', '--filter', 'label=omh.session=s01').stdout.trim()).toBe(before.container)
  }, 600_000)

  it(`reaches it through a ${engine === 'docker' ? 'Docker context' : 'Podman connection'} as well`, async () => {
    const [key, url] = Object.entries(target)[0]!
    const config = path.join(home, 'client-config')
    mkdirSync(config, { recursive: true })
    // Podman reads the file CONTAINERS_CONF names, and keeps its connections there: it must exist.
    writeFileSync(path.join(config, 'containers.conf'), '')
    // The client's own configuration lives in the test's directory, never the user's.
    const named: Record<string, string> = engine === 'docker' ? { DOCKER_CONFIG: config, DOCKER_CONTEXT: nested } : { CONTAINERS_CONF: path.join(config, 'containers.conf'), CONTAINER_CONNECTION: nested }
    const { [key]: _gone, ...rest } = env
    const add = engine === 'docker' ? ['context', 'create', nested, '--docker', `host=${url}`] : ['system', 'connection', 'add', nested, url]
    const { [key]: _unset, ...client } = process.env
    const made = spawnSync(engine, add, { encoding: 'utf8', env: { ...client, ...named } })
    expect(made.status, made.stderr).toBe(0)
    const saved = env
    env = { ...rest, ...named }
    try {
      const r = await omh(['probe', '--', 'cp from-agent.txt named.txt'])
      expect(r.status).toBe(0)
      expect(readFileSync(path.join(worktree('s01'), 'named.txt'), 'utf8')).toBe('made\n')
    } finally {
      env = saved
    }
  }, 600_000)

  it('reaches it over ssh:// as well, as an engine on a build box is reached', async () => {
    // The build box: an sshd on the engine's own machine (a container of the nested engine on its
    // host network, from the probe's image, whose toolset has one), where the engine's client, or for Podman
    // its API socket, is what the ssh client reaches. This machine's ssh client is the real one,
    // with a configuration of the test's own (ssh reads the user's from the password database,
    // never $HOME, so it is given with -F).
    const ready = await omh(['probe', '--', 'true'])
    expect(ready.status, ready.stderr).toBe(0)
    const image = remote('inspect', '-f', '{{.Config.Image}}', remote('ps', '-q', '--filter', 'label=omh.session=s01').stdout.trim()).stdout.trim()
    expect(image).not.toBe('')
    const keys = mkdtempSync(path.join(os.tmpdir(), 'omh-e2e-remote-ssh-'))
    const gateway = `${nested}-sshd`
    try {
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(keys, 'id')])
      writeFileSync(path.join(keys, 'config'), `Host *\n  IdentityFile ${path.join(keys, 'id')}\n  IdentitiesOnly yes\n  BatchMode yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n`)
      mkdirSync(path.join(keys, 'bin'))
      const ssh = spawnSync('sh', ['-c', 'command -v ssh'], { encoding: 'utf8' }).stdout.trim()
      writeFileSync(path.join(keys, 'bin/ssh'), `#!/bin/sh\nexec ${ssh} -F ${path.join(keys, 'config')} "$@"\n`, { mode: 0o755 })
      const port = await freePort()
      const engineAddress = Object.values(target)[0]!
      // Docker's client runs `docker system dial-stdio` there, which reaches its engine as told; Podman's
      // opens the API's unix socket there, which a small forwarder serves for the engine's TCP API.
      const far =
        engine === 'docker'
          ? { mounts: ['-v', '/usr/bin/docker:/usr/local/bin/docker:ro'], serve: '', env: `-o "SetEnv=DOCKER_HOST=${engineAddress}"` }
          : { mounts: [], serve: `mkdir -p /run/podman; node -e 'const net = require("net"); net.createServer((c) => c.pipe(net.connect(${new URL(engineAddress).port}, "127.0.0.1")).pipe(c)).listen("/run/podman/podman.sock")' & `, env: '' }
      // omh's toolset's sshd, as root: its privilege separation wants a user and a directory of its own.
      const sshd = `set -e; mkdir -p /run/sshd /root/.ssh; printf '%s\\n' "$KEY" > /root/.ssh/authorized_keys; chmod 700 /root/.ssh; chmod 600 /root/.ssh/authorized_keys; grep -q '^sshd:' /etc/passwd || echo 'sshd:x:74:65534::/run/sshd:/bin/false' >> /etc/passwd; /opt/omh/libexec/ssh-keygen -q -t ed25519 -N '' -f /run/sshd/host_key; : > /run/sshd/sshd_config; ${far.serve}exec /opt/omh/libexec/sshd -f /run/sshd/sshd_config -h /run/sshd/host_key -D -e -p ${port} -o ListenAddress=127.0.0.1 -o PermitRootLogin=prohibit-password ${far.env}`
      const started = remote('run', '-d', '--pull=never', '--name', gateway, '--network', 'host', '--user', '0', '--entrypoint', 'sh', '-e', `KEY=${readFileSync(path.join(keys, 'id.pub'), 'utf8').trim()}`, ...far.mounts, image, '-c', sshd)
      expect(started.status, started.stderr).toBe(0)
      const [key] = Object.keys(target)
      const address = engine === 'docker' ? `ssh://root@127.0.0.1:${port}` : `ssh://root@127.0.0.1:${port}/run/podman/podman.sock`
      const over = { [key!]: address, PATH: `${path.join(keys, 'bin')}:${process.env['PATH']}`, ...(engine === 'podman' ? { CONTAINER_SSHKEY: path.join(keys, 'id') } : {}) }
      let answered = false
      for (let i = 0; i < 50 && !answered; i++) {
        answered = spawnSync(engine, ['version'], { env: { ...process.env, ...over } }).status === 0
        if (!answered) await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(answered, remote('logs', gateway).stderr).toBe(true)
      const saved = env
      env = { ...env, ...over }
      try {
        rmSync(path.join(worktree('s01'), 'over-ssh.txt'), { force: true })
        const r = await omh(['probe', '--', 'echo "came back over ssh" > over-ssh.txt'])
        expect(r.status, r.stderr).toBe(0)
        expect(readFileSync(path.join(worktree('s01'), 'over-ssh.txt'), 'utf8')).toBe('came back over ssh\n')
        const diff = await omh(['sessions', 'diff', 's01', '--stat'])
        expect(diff.stdout).toContain('over-ssh.txt')
      } finally {
        env = saved
      }
    } finally {
      await omh(['probe', '--', 'rm -f over-ssh.txt'])
      remote('rm', '-f', gateway)
      rmSync(keys, { recursive: true, force: true })
    }
  }, 600_000)

  it('runs doctor there too', async () => {
    const r = await omh(['doctor', 'probe'])
    expect(r.stdout).toContain('all 2 checks passed')
    expect(r.status).toBe(0)
    expect(remote('volume', 'ls', '-q', '--filter', 'label=omh.doctor').stdout.trim()).toBe('')
  }, 600_000)

  it('keeps a session behind its egress proxy there: rules in a volume, decisions read from the proxy, all gone with down', async () => {
    // The "outside": a web server on a named network of the nested engine, answering as a name of the
    // default allowlist and as one that is not on it. Nothing here reaches the internet.
    const outside = `${nested}-out`
    const settings = readFileSync(path.join(home, 'settings.toml'), 'utf8')
    const server = 'require("http").createServer((q, s) => s.end("hello from " + q.headers.host + "\\n")).listen(80)'
    loadProxyImage()
    try {
      expect(remote('network', 'create', outside).status).toBe(0)
      const web = remote('run', '-d', '--pull=never', '--name', `${outside}-web`, '--network', outside, '--network-alias', 'registry.npmjs.org', '--network-alias', 'denied.test', BASE, 'node', '-e', server)
      expect(web.status, web.stderr).toBe(0)
      write(home, { 'settings.toml': settings.replace('[network]\negress = "open"\n', `[session]\nnetwork = "${outside}"\n`) })
      const client = readFileSync(path.join(ROOT, 'test/fixtures/egress-client.cjs'), 'utf8')
      const placed = await omh(['probe', '--', `cat > /tmp/client.cjs <<'OMH'\n${client}\nOMH`])
      expect(placed.status, placed.stderr).toBe(0)
      if (engine === 'podman') {
        // The nested Podman networks through CNI without its DNS plugin: no container there resolves
        // another's name. The hosts files stand in for that resolver, as a remote Podman's netavark
        // would answer: the session finds its proxy, and the proxy (squid reads its hosts file as a
        // DNS answer) the web server.
        const repoId = path.basename(path.dirname(worktree('s01')))
        const network = readFileSync(path.join(stateOf(home), 'run', repoId, 's01', 'egress', 'network'), 'utf8').trim()
        const proxy = `omh-${repoId}-s01-egress`
        const ip = (container: string, net: string) => remote('inspect', '-f', `{{(index .NetworkSettings.Networks "${net}").IPAddress}}`, container).stdout.trim()
        const hosts = (container: string, lines: string[]) => remote('exec', '-u', 'root', container, 'sh', '-c', `printf '%s\\n' ${lines.map((l) => `'${l}'`).join(' ')} >> /etc/hosts`)
        expect(hosts(`omh-${repoId}-s01`, [`${ip(proxy, network)} omh-egress`]).status).toBe(0)
        expect(hosts(proxy, [`${ip(`${outside}-web`, outside)} registry.npmjs.org denied.test`]).status).toBe(0)
        expect(remote('exec', proxy, 'squid', '-k', 'reconfigure', '-f', '/omh/egress/squid.conf').status).toBe(0)
        await new Promise((resolve) => setTimeout(resolve, 1000))
      }
      const r = await omh(['probe', '--', '{ node /tmp/client.cjs get http://registry.npmjs.org/ | sed s/^result=/allowed=/; node /tmp/client.cjs connect denied.test:80 | sed s/^result=/denied=/; } > egress.txt'])
      expect(r.status, r.stderr).toBe(0)
      expect(facts(readFileSync(path.join(worktree('s01'), 'egress.txt'), 'utf8'))).toEqual({ allowed: '200 hello from registry.npmjs.org', denied: '403' })
      expect(volumes().filter((v) => v.endsWith('-egress-rules'))).toHaveLength(1)
      const log = await omh(['--json', 'sessions', 'egress', 's01'])
      expect(log.status, log.stderr).toBe(0)
      expect(JSON.parse(log.stdout).result.decisions).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ allowed: true, host: 'registry.npmjs.org', port: 80, method: 'GET' }),
          expect.objectContaining({ allowed: false, host: 'denied.test', port: 80, method: 'CONNECT' }),
        ]),
      )
      // An allowlist edit reaches the running proxy through its volume: no new container.
      write(home, { 'settings.toml': settings.replace('[network]\negress = "open"\n', `[session]\nnetwork = "${outside}"\n[network]\nallow = ["denied.test:80"]\n`) })
      const again = await omh(['probe', '--', 'node /tmp/client.cjs connect denied.test:80 > egress.txt'])
      expect(again.stderr).not.toContain('restarting')
      expect(facts(readFileSync(path.join(worktree('s01'), 'egress.txt'), 'utf8'))).toEqual({ result: '200 hello from denied.test:80' })
      expect((await omh(['sessions', 'down', 's01'])).status).toBe(0)
      expect(volumes()).toEqual([])
      expect(remote('ps', '-aq', '--filter', 'label=omh.egress').stdout.trim()).toBe('')
      expect(remote('network', 'ls', '-q', '--filter', 'label=omh.egress').stdout.trim()).toBe('')
    } finally {
      write(home, { 'settings.toml': settings })
      rmSync(path.join(worktree('s01'), 'egress.txt'), { force: true })
      remote('rm', '-f', `${outside}-web`)
      remote('network', 'rm', outside)
    }
  }, 900_000)

  it("keeps an API key outside a session there: the credential proxy's program and authorities in a volume, the key only in the proxy", async () => {
    // The "API host": a TLS server on a named network of the nested engine, under a name, with a
    // certificate from a throwaway authority that only the credential proxy is told to trust. It
    // answers with the key it was sent.
    const outside = `${nested}-api`
    const settings = readFileSync(path.join(home, 'settings.toml'), 'utf8')
    const adapter = readFileSync(path.join(home, 'adapters/probe.toml'), 'utf8')
    const certs = mkdtempSync(path.join(os.tmpdir(), 'omh-e2e-remote-ca-'))
    const upstream = 'api.upstream.test'
    const KEY = `sk-test-${randomBytes(16).toString('hex')}`
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: certs, stdio: 'pipe' })
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=omh test authority', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign')
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${upstream}`)
    writeFileSync(path.join(certs, 'ext.cnf'), `subjectAltName=DNS:${upstream}\nextendedKeyUsage=serverAuth\n`)
    ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf')
    const server = 'require("https").createServer({ cert: process.env.CERT, key: process.env.KEY }, (q, s) => s.end(JSON.stringify({ path: q.url, key: q.headers["x-api-key"] ?? null }))).listen(8443)'
    loadProxyImage()
    const saved = env
    try {
      expect(remote('network', 'create', outside).status).toBe(0)
      const web = remote('run', '-d', '--pull=never', '--name', `${outside}-web`, '--network', outside, '--network-alias', upstream, '-e', `CERT=${readFileSync(path.join(certs, 'server.pem'), 'utf8')}`, '-e', `KEY=${readFileSync(path.join(certs, 'server.key'), 'utf8')}`, BASE, 'node', '-e', server)
      expect(web.status, web.stderr).toBe(0)
      write(home, {
        'settings.toml': settings.replace('[network]\negress = "open"\n', `[session]\nnetwork = "${outside}"\n`),
        'adapters/probe.toml': `${adapter}\n[[keys]]\nvariable = "OMH_TEST_API_KEY"\nbase_url = "OMH_TEST_BASE_URL"\nheader   = "x-api-key"\nupstream = "https://${upstream}:8443"\n`,
      })
      env = { ...env, OMH_TEST_API_KEY: KEY, OMH_CREDENTIAL_CA: path.join(certs, 'ca.pem') }
      const first = await omh(['probe', '--', 'echo "seen=$OMH_TEST_API_KEY $OMH_TEST_BASE_URL" > creds.txt'])
      expect(first.status, first.stderr).toBe(0)
      const seen = facts(readFileSync(path.join(worktree('s01'), 'creds.txt'), 'utf8'))['seen']!
      expect(seen).toMatch(/^omh-credential-proxy-[0-9a-f]{32} http:\/\/omh-creds:\d+$/)
      expect(volumes().filter((v) => v.endsWith('-creds-program'))).toHaveLength(1)
      const repoId = path.basename(path.dirname(worktree('s01')))
      const creds = `omh-${repoId}-s01-creds`
      // The key went to the proxy's engine by name, never into the session's container.
      expect(remote('inspect', '-f', '{{json .Config.Env}}', `omh-${repoId}-s01`).stdout).not.toContain(KEY)
      if (engine === 'podman') {
        // No DNS between containers on the nested Podman (see the egress test): hosts files stand in.
        const network = readFileSync(path.join(stateOf(home), 'run', repoId, 's01', 'egress', 'network'), 'utf8').trim()
        const ip = (container: string, net: string) => remote('inspect', '-f', `{{(index .NetworkSettings.Networks "${net}").IPAddress}}`, container).stdout.trim()
        const hosts = (container: string, line: string) => remote('exec', '-u', 'root', container, 'sh', '-c', `echo '${line}' >> /etc/hosts`)
        expect(hosts(`omh-${repoId}-s01`, `${ip(creds, network)} omh-creds`).status).toBe(0)
        expect(hosts(creds, `${ip(`${outside}-web`, outside)} ${upstream}`).status).toBe(0)
      }
      const ask = `fetch(process.env.OMH_TEST_BASE_URL + "/v1/echo", { headers: { "x-api-key": process.env.OMH_TEST_API_KEY } }).then(async (r) => console.log("answer=" + r.status + " " + (await r.text())), (e) => console.log("answer=" + e.cause?.code))`
      const r = await omh(['probe', '--', `node -e '${ask}' > creds.txt`])
      expect(r.status, r.stderr).toBe(0)
      expect(facts(readFileSync(path.join(worktree('s01'), 'creds.txt'), 'utf8'))).toEqual({ answer: `200 ${JSON.stringify({ path: '/v1/echo', key: KEY })}` })
      expect((await omh(['sessions', 'down', 's01'])).status).toBe(0)
      expect(volumes()).toEqual([])
      expect(remote('ps', '-aq', '--filter', `name=${creds}`).stdout.trim()).toBe('')
    } finally {
      env = saved
      write(home, { 'settings.toml': settings, 'adapters/probe.toml': adapter })
      rmSync(path.join(worktree('s01'), 'creds.txt'), { force: true })
      rmSync(certs, { recursive: true, force: true })
      remote('rm', '-f', `${outside}-web`)
      remote('network', 'rm', outside)
    }
  }, 900_000)

  it('logs in there: the login comes back to the account, and one left unfinished changes nothing', async () => {
    // The probe's own image, with a shell as its binary: the login is the script on stdin.
    const adapter = readFileSync(path.join(home, 'adapters/probe.toml'), 'utf8')
    write(home, { 'adapters/probe.toml': adapter.replace('bin     = "omh-probe"', 'bin     = "sh"').replace('creds = ["$HOME/.probe/"]', 'creds = ["$HOME/.probe/"]\ntoken = ["$HOME/.probe/token.json"]') })
    const account = path.join(stateOf(home), 'creds', 'probe', 'work', '.probe')
    mkdirSync(account, { recursive: true })
    writeFileSync(path.join(account, 'seed.txt'), 'from the host\n')
    const login = (script: string) => {
      const child = spawn(process.execPath, [BIN, 'auth', 'probe', 'work', '--json'], { cwd: root, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
      child.stdin.end(script)
      return finished(child as unknown as Parameters<typeof finished>[0], 600_000)
    }
    try {
      // Saved as harnesses save a token: written beside, renamed over.
      const saved = await login('cd "$HOME/.probe" && cp seed.txt seen.txt && rm seed.txt && printf \'{"token":"t-1"}\' > .t && mv .t token.json\n')
      expect(saved.status, saved.stderr).toBe(0)
      expect(JSON.parse(saved.stdout).result).toMatchObject({ harness: 'probe', account: 'work', confirmed: true, accounts: ['work'] })
      expect(readFileSync(path.join(account, 'token.json'), 'utf8')).toBe('{"token":"t-1"}')
      expect(readFileSync(path.join(account, 'seen.txt'), 'utf8')).toBe('from the host\n')
      expect(existsSync(path.join(account, 'seed.txt'))).toBe(false)
      expect(statSync(path.join(account, 'token.json')).mode & 0o077).toBe(0)

      const unfinished = await login('rm "$HOME/.probe/token.json"; echo half > "$HOME/.probe/seen.txt"\n')
      expect(unfinished.status, unfinished.stderr).toBe(1)
      expect(JSON.parse(unfinished.stdout).error.code).toBe('LOGIN_INCOMPLETE')
      expect(readFileSync(path.join(account, 'token.json'), 'utf8')).toBe('{"token":"t-1"}')
      expect(readFileSync(path.join(account, 'seen.txt'), 'utf8')).toBe('from the host\n')
      // Nothing left beside the account: the login's copy went with it.
      expect(readdirSync(path.dirname(path.dirname(account))).filter((name) => name.startsWith('.'))).toEqual([])
      expect(remote('volume', 'ls', '-q', '--filter', 'label=omh.auth').stdout.trim()).toBe('')
    } finally {
      write(home, { 'adapters/probe.toml': adapter })
      rmSync(path.dirname(account), { recursive: true, force: true })
    }
  }, 600_000)

  it('down brings the work home and removes the volumes; rm leaves nothing on the engine', async () => {
    await omh(['probe', '--', 'echo late > late.txt'])
    const down = await omh(['sessions', 'down', 's01'])
    expect(down.status).toBe(0)
    expect(volumes()).toEqual([])
    expect(readFileSync(path.join(worktree('s01'), 'late.txt'), 'utf8')).toBe('late\n')
    rmSync(path.join(worktree('s01'), 'late-again.txt'), { force: true })
    const again = await omh(['probe', '--', 'cp late.txt late-again.txt'])
    expect(again.status).toBe(0)
    expect(readFileSync(path.join(worktree('s01'), 'late-again.txt'), 'utf8')).toBe('late\n')
    const rm = await omh(['sessions', 'rm', 's01', '--force'])
    expect(rm.status).toBe(0)
    expect(volumes()).toEqual([])
    expect(remote('ps', '-aq', '--filter', 'label=omh.session').stdout.trim()).toBe('')
  }, 600_000)
})
