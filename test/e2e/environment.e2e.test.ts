/**
 * The project's environment on real engines, with the probe harness (a small
 * script that runs the shell command it is given): a devcontainer built from
 * the repository's Containerfile on a locally built Debian image without Node,
 * its variables and its create command; images of other kinds (glibc without
 * apt, musl); and each refusal, leaving nothing half-made.
 */
import { execFileSync, spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, TEST_BASE, client, testNetwork, type Engine } from '../helpers/engines.js'
import { BIN, ROOT, finished, stateOf } from '../helpers/run.js'

const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }

/** `key=value` lines a probe printed. */
const facts = (stdout: string) => Object.fromEntries(stdout.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))

/**
 * Images the tests start from, built here from the test base: Debian without
 * Node (as many projects' own images are), glibc without apt or Node, and a
 * musl one from Debian's musl and busybox-static packages (no registry here).
 */
const IMAGES = {
  nonode: `FROM ${TEST_BASE}\nUSER root\nRUN rm -f /usr/local/bin/node /usr/local/bin/npm /usr/local/bin/npx && rm -rf /usr/local/lib/node_modules\n`,
  noapt: `FROM ${TEST_BASE}\nUSER root\nRUN rm -f /usr/local/bin/node /usr/local/bin/npm /usr/local/bin/npx /usr/bin/apt* /usr/bin/dpkg* && rm -rf /usr/local/lib/node_modules /var/lib/dpkg /var/lib/apt\n`,
  musl: `FROM ${TEST_BASE} AS debs
USER root
RUN set -e; apt-get update; cd /tmp; apt-get download busybox-static musl; mkdir /root-fs; for d in *.deb; do dpkg-deb -x "$d" /root-fs; done; \\
    mkdir -p /root-fs/etc /root-fs/tmp /root-fs/root; chmod 1777 /root-fs/tmp; \\
    printf 'root:x:0:0:root:/root:/bin/sh\\n' > /root-fs/etc/passwd; printf 'root:x:0:\\n' > /root-fs/etc/group
FROM scratch
COPY --from=debs /root-fs/ /
RUN ["/bin/busybox", "--install", "-s", "/bin"]
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
`,
}
const tagOf = (engine: Engine, kind: keyof typeof IMAGES | 'postgres') => `localhost/omh-e2e-env-${kind}:${engine}`

/** Debian's PostgreSQL, a cluster made at build with password-less logins on every address: a service for the tests. */
const POSTGRES = `FROM ${TEST_BASE}
USER root
RUN apt-get update && apt-get install -y --no-install-recommends postgresql && rm -rf /var/lib/apt/lists/*
USER postgres
RUN /usr/lib/postgresql/15/bin/initdb -D /var/lib/postgresql/data --auth=trust -U postgres && \
    echo "listen_addresses='*'" >> /var/lib/postgresql/data/postgresql.conf && \
    echo "host all all 0.0.0.0/0 trust" >> /var/lib/postgresql/data/pg_hba.conf
CMD ["/usr/lib/postgresql/15/bin/postgres", "-D", "/var/lib/postgresql/data", "-k", "/tmp"]
`

/** A GET from this machine: the status and body, or the error. */
async function get(url: string): Promise<string> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(5000) })
    return `${r.status} ${(await r.text()).trim()}`
  } catch (error) {
    return `error ${(error as Error).message}`
  }
}

describe.each(ENGINES)('the project environment on %s', (engine: Engine) => {
  let scratch: string
  let home: string
  let outside: string
  const made: string[] = []
  const omh = (cwd: string, args: readonly string[]) =>
    finished(spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', OMH_HOME: home, OMH_STATE: stateOf(home), ...identity }, stdio: ['ignore', 'pipe', 'pipe'] }), 600_000)

  /** A repository with these files, committed. */
  const repo = (name: string, files: Record<string, string>) => {
    const dir = path.join(scratch, name)
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.join(dir, path.dirname(file)), { recursive: true })
      writeFileSync(path.join(dir, file), text)
    }
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe', env: { ...process.env, ...identity } })
    git('init', '-q', '-b', 'main')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
    made.push(dir)
    return dir
  }
  const sessionsOf = (dir: string) => {
    const worktrees = path.join(stateOf(home), 'worktrees')
    const key = existsSync(worktrees) ? readdirSync(worktrees).find((k) => k.startsWith(`${path.basename(dir)}-`)) : undefined
    return key ? readdirSync(path.join(worktrees, key)) : []
  }

  beforeAll(() => {
    scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-env-e2e-')))
    home = path.join(scratch, 'omh')
    mkdirSync(path.join(home, 'adapters'), { recursive: true })
    copyFileSync(path.join(ROOT, 'test/fixtures/adapters/probe.toml'), path.join(home, 'adapters/probe.toml'))
    writeFileSync(path.join(home, 'settings.toml'), `runtime = "${engine}"\n\n[image]\nbase = "${TEST_BASE}"\nnetwork = "host"\n`)
    for (const [kind, text] of [...Object.entries(IMAGES), ['postgres', POSTGRES]] as [keyof typeof IMAGES | 'postgres', string][]) {
      // From a file: Podman's client opens /dev/stdin, which a pipe from Node is not.
      const file = path.join(scratch, `${kind}.Containerfile`)
      writeFileSync(file, text)
      execFileSync(engine, ['build', '--network', 'host', '-t', tagOf(engine, kind), '-f', file, scratch], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 })
    }
    // Ports are published on a network that can publish one; this machine's engines have none by default.
    outside = testNetwork(engine, 'env')
    writeFileSync(path.join(home, 'settings.toml'), `runtime = "${engine}"\n\n[image]\nbase = "${TEST_BASE}"\nnetwork = "host"\n\n[session]\nnetwork = "${outside}"\n`)
  })

  afterAll(async () => {
    if (!home) return
    for (const dir of made) for (const sid of sessionsOf(dir)) await omh(dir, ['sessions', 'rm', sid, '--force'])
    for (const dir of made) await omh(dir, ['caches', 'rm'])
    // Session images and environments made from the images above go with them.
    const mine = (tag: string) => {
      const labels = client(engine, ['image', 'inspect', '--format', '{{json .Config.Labels}}', tag]).stdout
      return Object.keys(IMAGES).some((kind) => labels.includes(tagOf(engine, kind as keyof typeof IMAGES))) || labels.includes('omh-e2e-env')
    }
    for (const kind of ['harness', 'environment']) {
      const tags = client(engine, ['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', `label=omh.kind=${kind}`]).stdout.split('\n').filter(Boolean)
      for (const tag of tags) if (mine(tag)) client(engine, ['rmi', tag])
    }
    for (const kind of [...Object.keys(IMAGES), 'postgres']) client(engine, ['rmi', tagOf(engine, kind as keyof typeof IMAGES)])
    for (const tag of client(engine, ['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', 'label=omh.kind=service']).stdout.split('\n').filter((t) => t.startsWith('localhost/omh-service:'))) {
      if (client(engine, ['image', 'inspect', '--format', '{{index .Config.Labels "omh.from"}}', tag]).stdout.includes('omh-e2e-env-')) client(engine, ['rmi', tag])
    }
    rmSync(scratch, { recursive: true, force: true })
  })

  it("runs the harness in the repository's devcontainer, built from its Containerfile on a Debian image without Node: its variables reach the harness, and postCreateCommand runs once over two launches", async () => {
    const dir = repo('devc', {
      '.devcontainer/devcontainer.json': `// The project's own environment.
{
  "build": { "dockerfile": "Containerfile", "args": { "GREETING": "hello-from-build" } },
  "containerEnv": { "PROJECT_MODE": "sandboxed", "PATH": "\${containerEnv:PATH}:/opt/project/bin" },
  "postCreateCommand": "echo created >> /work/created.log",
  "forwardPorts": [8080],
  "features": {},
  "runArgs": ["--privileged"],
}
`,
      '.devcontainer/Containerfile': `FROM ${tagOf(engine, 'nonode')}\nARG GREETING\nUSER root\nRUN mkdir -p /opt/project/bin && printf '#!/bin/sh\\necho %s\\n' "$GREETING" > /opt/project/bin/project-tool && chmod 755 /opt/project/bin/project-tool\n`,
      'README.md': 'a project with a devcontainer\n',
    })
    const untrusted = await omh(dir, ['--new', 'probe', '--', 'true'])
    expect(untrusted.status).toBe(2)
    expect(untrusted.stderr).toContain('Code: REPOSITORY_UNTRUSTED')
    expect(untrusted.stderr).toContain('devcontainer.json')
    expect(untrusted.stderr).toContain('Containerfile')
    expect(sessionsOf(dir), 'an untrusted environment makes no session').toEqual([])
    expect((await omh(dir, ['trust'])).status).toBe(0)

    const ask = 'echo mode=$PROJECT_MODE; echo tool=$(project-tool); echo node=$(command -v node); echo created=$(cat /work/created.log | wc -l); echo user=$(id -un)'
    const first = await omh(dir, ['--new', 'probe', '--', ask])
    expect(first.status, first.stderr.slice(-3000)).toBe(0)
    expect(first.stderr).toMatch(/environment: \.devcontainer\/devcontainer\.json — not honoured: features, runArgs/)
    expect(facts(first.stdout)).toMatchObject({ mode: 'sandboxed', tool: 'hello-from-build', node: '/opt/omh/fallback/node', created: '1', user: 'agent' })
    const sid = /omh: probe on omh\/(s\d+)/.exec(first.stderr)![1]!
    const again = await omh(dir, ['--session', sid, 'probe', '--', ask])
    expect(again.status, again.stderr).toBe(0)
    expect(facts(again.stdout)).toMatchObject({ created: '1' })
    expect(again.stderr).not.toContain('Setting')

    // The port the devcontainer forwards answers from this machine, at the address omh names.
    expect(first.stderr).toMatch(/omh: ports: 8080 → http:\/\/127\.0\.0\.1:\d+/)
    const serve = `setsid node -e 'require("http").createServer((q, s) => s.end("served by " + process.env.PROJECT_MODE)).listen(8080)' > /dev/null 2>&1 < /dev/null & sleep 1; echo serving=yes`
    expect(facts((await omh(dir, ['--session', sid, 'probe', '--', serve])).stdout)).toMatchObject({ serving: 'yes' })
    const ports = JSON.parse((await omh(dir, ['sessions', 'ports', sid, '--json'])).stdout).result.ports as { guest: number; url: string }[]
    expect(ports.map((p) => p.guest)).toEqual([8080])
    expect(await get(ports[0]!.url)).toBe('200 served by sandboxed')

    // A second session serving the same port is reachable too, at a port of its own.
    const second = await omh(dir, ['--new', 'probe', '--', serve.replace('process.env.PROJECT_MODE', '"the second"')])
    expect(second.status, second.stderr).toBe(0)
    const sid2 = /omh: probe on omh\/(s\d+)/.exec(second.stderr)![1]!
    const ports2 = JSON.parse((await omh(dir, ['sessions', 'ports', sid2, '--json'])).stdout).result.ports as { guest: number; url: string }[]
    expect(ports2.map((p) => p.guest)).toEqual([8080])
    expect(ports2[0]!.url).not.toBe(ports[0]!.url)
    expect(await get(ports2[0]!.url)).toBe('200 served by the second')
    expect(await get(ports[0]!.url)).toBe('200 served by sandboxed')
  })

  it('starts a service beside the session, reached by name from a test in the worktree; it has no way out but the proxy, and goes with down', async () => {
    const dir = repo('svc', {
      'test_db.sh': 'psql -h db -U postgres -tAc "select 40 + 2"\n',
      '.omh/settings.local.toml': `[image]\npackages = ["postgresql-client"]\n\n[services.db]\nimage = "${tagOf(engine, 'postgres')}"\nhealth = "/usr/lib/postgresql/15/bin/pg_isready -h 127.0.0.1 -U postgres"\n`,
    })
    expect((await omh(dir, ['trust'])).status).toBe(0)
    const ran = await omh(dir, ['--new', 'probe', '--', 'echo answer=$(sh test_db.sh)'])
    expect(ran.status, ran.stderr.slice(-3000)).toBe(0)
    expect(facts(ran.stdout)).toMatchObject({ answer: '42' })
    const sid = /omh: probe on omh\/(s\d+)/.exec(ran.stderr)![1]!
    const service = client(engine, ['ps', '--format', '{{.Names}}', '--filter', 'label=omh.service=db']).stdout.split('\n').find((n) => n.endsWith(`-${sid}-svc-db`))
    expect(service, 'the service runs').toBeDefined()
    const networks = client(engine, ['inspect', '--format', '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}', service!]).stdout.trim().split(' ')
    expect(networks, 'on the session network alone').toEqual([expect.stringMatching(new RegExp(`-${sid}-net-`))])
    expect((await omh(dir, ['sessions', 'down', sid])).status).toBe(0)
    expect(client(engine, ['ps', '-a', '--format', '{{.Names}}']).stdout.split('\n')).not.toContain(service)
  })

  it('runs on a glibc image without apt or Node, and on a musl image a shell harness runs while a glibc one is refused', async () => {
    const noapt = repo('noapt', { '.devcontainer.json': JSON.stringify({ image: tagOf(engine, 'noapt') }) })
    expect((await omh(noapt, ['trust'])).status).toBe(0)
    const ran = await omh(noapt, ['--new', 'probe', '--', 'echo apt=$(command -v apt-get || echo none); echo git=$(command -v git); echo node=$(node -e "process.stdout.write(process.version)")'])
    expect(ran.status, ran.stderr.slice(-3000)).toBe(0)
    expect(facts(ran.stdout)).toMatchObject({ apt: 'none', git: '/opt/omh/fallback/git', node: expect.stringMatching(/^v\d+/) })

    const musl = repo('musl', { '.devcontainer.json': JSON.stringify({ image: tagOf(engine, 'musl') }) })
    expect((await omh(musl, ['trust'])).status).toBe(0)
    const shell = await omh(musl, ['--new', 'probe', '--', 'echo libc=$(ls /lib/ld-musl-* ); echo user=$(id -un); echo git=$(git --version)'])
    expect(shell.status, shell.stderr.slice(-3000)).toBe(0)
    expect(facts(shell.stdout)).toMatchObject({ libc: '/lib/ld-musl-x86_64.so.1', user: 'agent', git: expect.stringMatching(/^git version/) })

    // A harness whose install leaves a glibc program: refused with the reason, nothing made.
    writeFileSync(path.join(home, 'adapters/glibc.toml'), `name = "glibc"\nbin = "glibc-tool"\ninstall = "cp /usr/bin/true $OMH_PREFIX/bin/glibc-tool"\n\n[capabilities.rules]\npath = "/work/AGENTS.md"\nrender = "concat"\n`)
    const before = sessionsOf(musl)
    const refused = await omh(musl, ['--new', 'glibc'])
    expect(refused.status, refused.stderr.slice(-2000)).toBe(2)
    expect(refused.stderr).toContain('Code: IMAGE_UNSUPPORTED')
    expect(refused.stderr).toMatch(/glibc-tool is built for glibc and needs \/lib64\/ld-linux-x86-64\.so\.2, which this image lacks/)
    expect(sessionsOf(musl)).toEqual(before)
  })

  it('a failing setup stops the launch with SETUP_FAILED and keeps the session; once fixed, the next launch runs it to the end', async () => {
    const dir = repo('setup', { '.omh/settings.toml': '[session]\nsetup = ["echo preparing", "test -f ready || exit 3"]\n' })
    const failed = await omh(dir, ['--new', 'probe', '--', 'echo ran'])
    expect(failed.status).toBe(1)
    expect(failed.stderr).toContain('Code: SETUP_FAILED')
    expect(failed.stderr).toContain('`test -f ready || exit 3` ([session] setup) exited with status 3')
    expect(failed.stderr).toContain('preparing')
    expect(failed.stdout).not.toContain('ran')
    const sid = /omh: probe on omh\/(s\d+)/.exec(failed.stderr)![1]!
    const log = /The whole output is in (\S+setup\.log)\./.exec(failed.stderr)![1]!
    expect(readFileSync(log, 'utf8')).toMatch(/# exit status 3 after \d+ ms/)
    expect(sessionsOf(dir)).toEqual([sid])

    const key = readdirSync(path.join(stateOf(home), 'worktrees')).find((k) => k.startsWith('setup-'))!
    writeFileSync(path.join(stateOf(home), 'worktrees', key, sid, 'ready'), '')
    const fixed = await omh(dir, ['--session', sid, 'probe', '--', 'echo ran'])
    expect(fixed.status, fixed.stderr).toBe(0)
    expect(fixed.stdout).toContain('ran')
    const then = await omh(dir, ['--session', sid, 'probe', '--', 'echo ran again'])
    expect(then.stderr).not.toContain('preparing')
  })

  it('a new session copies what an earlier setup of the same inputs left in its worktree instead of running it; a new commit runs it again', async () => {
    const dir = repo('reuse', {
      '.gitignore': 'deps/\n',
      '.omh/settings.toml': '[session]\nsetup = ["echo installing; mkdir -p deps/pkg && ln -s pkg deps/link && od -An -N8 -tx8 /dev/urandom > deps/pkg/made"]\n',
    })
    expect((await omh(dir, ['trust'])).status).toBe(0)
    const show = 'echo made=$(cat deps/pkg/made | tr -d " "); echo link=$(readlink deps/link); touch deps/pkg/mine && echo writable=yes'
    const one = await omh(dir, ['--new', 'probe', '--', show])
    expect(one.status, one.stderr.slice(-3000)).toBe(0)
    expect(one.stderr).toContain('installing')
    const two = await omh(dir, ['--new', 'probe', '--', show])
    expect(two.status, two.stderr.slice(-3000)).toBe(0)
    expect(two.stderr).not.toContain('installing')
    expect(two.stderr).toMatch(/copied what s\d+'s setup of the same inputs left \(deps\)/)
    expect(facts(two.stdout)).toEqual({ ...facts(one.stdout), writable: 'yes' })
    expect(facts(two.stdout)).toMatchObject({ link: 'pkg', writable: 'yes' })

    const listed = JSON.parse((await omh(dir, ['caches', 'ls', '--json'])).stdout).result
    expect(listed.setups).toHaveLength(1)
    expect(listed.setups[0].paths).toEqual(['deps'])
    writeFileSync(path.join(dir, 'README.md'), 'changed\n')
    execFileSync('git', ['add', 'README.md'], { cwd: dir })
    execFileSync('git', ['commit', '-qm', 'readme'], { cwd: dir, env: { ...process.env, ...identity } })
    const three = await omh(dir, ['--new', 'probe', '--', show])
    expect(three.stderr, 'another tree is another input').toContain('installing')
    for (const sid of sessionsOf(dir)) expect((await omh(dir, ['sessions', 'rm', sid, '--force'])).status).toBe(0)
    expect(JSON.parse((await omh(dir, ['caches', 'ls', '--json'])).stdout).result.setups.length, 'sessions rm leaves them').toBe(2)
    expect((await omh(dir, ['caches', 'rm', 'setup'])).stdout).toContain('removed the setup')
    expect(JSON.parse((await omh(dir, ['caches', 'ls', '--json'])).stdout).result.setups).toEqual([])
  })

  it("builds a Containerfile of the repository's on the environment, and shares the repository's dependency caches between its sessions; caches ls and rm manage them", async () => {
    const dir = repo('caches', {
      'README.md': 'caches\n',
      'layer.txt': 'from the repository\n',
      '.omh/settings.toml': '[image]\ncontainerfile = ".omh/Containerfile"\n',
      '.omh/Containerfile': 'ARG OMH_BASE\nFROM ${OMH_BASE}\nUSER root\nCOPY layer.txt /etc/omh-layer\n',
    })
    expect((await omh(dir, ['--new', 'probe', '--', 'true'])).stderr).toContain('Code: REPOSITORY_UNTRUSTED')
    expect((await omh(dir, ['trust'])).status).toBe(0)
    const one = await omh(dir, ['--new', 'probe', '--', 'echo kept > ~/.npm/from-one; echo layer=$(cat /etc/omh-layer)'])
    expect(one.status, one.stderr.slice(-3000)).toBe(0)
    expect(facts(one.stdout)).toMatchObject({ layer: 'from the repository' })
    const two = await omh(dir, ['--new', 'probe', '--', 'echo seen=$(cat ~/.npm/from-one)'])
    expect(facts(two.stdout)).toMatchObject({ seen: 'kept' })
    const listed = await omh(dir, ['caches', 'ls', '--json'])
    expect(JSON.parse(listed.stdout).result.caches.map((c: { tool: string }) => c.tool)).toContain('npm')
    for (const sid of sessionsOf(dir)) expect((await omh(dir, ['sessions', 'rm', sid, '--force'])).status).toBe(0)
    expect(JSON.parse((await omh(dir, ['caches', 'ls', '--json'])).stdout).result.caches.length, 'sessions rm leaves the caches').toBeGreaterThan(0)
    expect((await omh(dir, ['caches', 'rm', 'npm'])).status).toBe(0)
    expect(JSON.parse((await omh(dir, ['caches', 'ls', '--json'])).stdout).result.caches.map((c: { tool: string }) => c.tool)).not.toContain('npm')
  })
})
