// Sessions on real engines: a test adapter whose harness is a small script
// (test/fixtures/adapters/probe.toml) runs in a real container, and each test
// asks from inside what the sandbox lets it see and do.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, TEST_BASE as BASE, TEST_RUN } from '../helpers/engines.js'
import { BIN, ROOT, finished, probeProject, spareMarks, stateOf, until } from '../helpers/run.js'
import { write } from '@omh/test-utils'

const identity = { GIT_AUTHOR_NAME: 'User', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'User', GIT_COMMITTER_EMAIL: 'u@example.com' }

interface Ran {
  status: number
  stdout: string
  stderr: string
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, ...identity } }).trim()

/** Runs the built CLI without a terminal, as a script would; resolves when it exits. */
function omh(args: readonly string[], cwd: string, env: Record<string, string>): Promise<Ran> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', ...identity, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  return finished(child, 300_000)
}

const branchOfSession = (sid: string) => `omh/${sid}`

/** `key=value` lines a probe printed. */
const facts = (stdout: string) => Object.fromEntries(stdout.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))

/** A directory for the whole file (the testdir helper removes its own after each test). */
const scratch = () => realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-e2e-')))

describe.each(ENGINES)('sessions on %s', (engine) => {
  let dirs: string[] = []
  let home: string
  let root: string
  let env: Record<string, string>
  const run = (args: readonly string[], cwd = root) => omh(args, cwd, env)
  const worktree = (sid: string) => path.join(stateOf(home), 'worktrees', readdirSync(path.join(stateOf(home), 'worktrees'))[0]!, sid)

  beforeAll(async () => {
    home = scratch()
    root = scratch()
    dirs = [home, root]
    write(home, {
      'settings.toml': `runtime = "${engine}"\n[image]\nbase = "${BASE}"\nnetwork = "host"\n`,
      'rules/style.md': 'Be brief.\n',
    })
    mkdirSync(path.join(home, 'adapters'))
    copyFileSync(path.join(ROOT, 'test/fixtures/adapters/probe.toml'), path.join(home, 'adapters/probe.toml'))
    write(root, { 'README.md': 'the checkout\n', 'src/app.txt': 'app\n' })
    git(root, 'init', '-q', '-b', 'main')
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', 'init')
    git(root, 'switch', '-q', '-c', 'feature')
    git(root, 'commit', '-q', '--allow-empty', '-m', 'feature work nobody else may see')
    git(root, 'tag', 'v1')
    git(root, 'switch', '-q', 'main')
    env = { OMH_HOME: home, OMH_STATE: stateOf(home) }
    // The first launch builds the base and the probe's layer; later tests reuse them.
    const first = await run(['probe'])
    expect(first.stderr).toContain('omh: probe on omh/s01')
    expect(first.status).toBe(0)
  })

  afterAll(async () => {
    if (!home) return
    const repoId = existsSync(path.join(stateOf(home), 'worktrees')) ? readdirSync(path.join(stateOf(home), 'worktrees'))[0] : undefined
    for (const sid of existsSync(path.join(stateOf(home), 'worktrees')) ? readdirSync(path.dirname(worktree('s01'))) : []) {
      await run(['sessions', 'rm', sid, '--force'])
    }
    // Egress proxies and networks a failed test left, by their label (`<repo id>-<sid>`), endpoints first.
    if (repoId) {
      const ours = (kind: string[], format: string) =>
        spawnSync(engine, [...kind, '-q', '--filter', 'label=omh.egress'], { encoding: 'utf8' })
          .stdout.split('\n')
          .filter(Boolean)
          .map((id) => ({ id, label: spawnSync(engine, [kind[0] === 'network' ? 'network' : 'container', 'inspect', '--format', format, id], { encoding: 'utf8' }).stdout.trim() }))
          .filter((o) => o.label.startsWith(`${repoId}-`))
      for (const proxy of ours(['ps', '-a'], '{{index .Config.Labels "omh.egress"}}')) spawnSync(engine, ['rm', '-f', proxy.id])
      for (const network of ours(['network', 'ls'], '{{index .Labels "omh.egress"}}')) {
        for (const member of [`omh-${network.label}`, `omh-${network.label}-egress`, `omh-${network.label}-creds`]) spawnSync(engine, ['network', 'disconnect', '-f', network.id, member])
        spawnSync(engine, ['network', 'rm', network.id])
      }
    }
    // Whatever a failed test left: containers by this repository's label.
    const ids = spawnSync(engine, ['ps', '-aq', '--filter', `label=omh.worktree`], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)
    for (const id of ids) {
      const worktreeOf = spawnSync(engine, ['inspect', '--format', '{{index .Config.Labels "omh.worktree"}}', id], { encoding: 'utf8' }).stdout.trim()
      if (worktreeOf.startsWith(home)) spawnSync(engine, ['rm', '-f', id])
    }
    // The images these tests built, and only those: the probe's session images and its harness tools.
    const tags = spawnSync(engine, ['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', 'label=omh.kind'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((t) => t.startsWith('localhost/omh-probe:') || t.startsWith('localhost/omh-broken:') || t.startsWith(`localhost/omh-prune-${TEST_RUN.toLowerCase().replace(/[^a-z0-9]/g, '')}:`))
    for (const tag of tags) {
      // The harness tools it copied go too; the toolset and the environment stay for other files.
      const tools = spawnSync(engine, ['image', 'inspect', '--format', '{{index .Config.Labels "omh.tools"}}', tag], { encoding: 'utf8' }).stdout.trim()
      spawnSync(engine, ['rmi', tag])
      if (tools) spawnSync(engine, ['rmi', tools])
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it('runs the harness as the agent in /work, the worktree, which it can write', async () => {
    const r = await run(['probe', '--', 'echo "pwd=$(pwd)"; echo "id=$(id -u):$(id -g)"; echo "readme=$(cat README.md)"; echo made > /work/from-agent.txt; grep -E "^(CapEff|NoNewPrivs)" /proc/self/status | tr -d "\\t" | tr ":" "="'])
    expect(r.status).toBe(0)
    const f = facts(r.stdout)
    expect(f).toMatchObject({ pwd: '/work', id: '1000:1000', readme: 'the checkout', CapEff: '0000000000000000', NoNewPrivs: '1' })
    expect(readFileSync(path.join(worktree('s01'), 'from-agent.txt'), 'utf8')).toBe('made\n')
  })

  it("starts the agent on a clean tree, though omh's rules are mounted over the repository's own AGENTS.md", async () => {
    const own = scratch()
    const state = scratch()
    dirs.push(own, state)
    write(own, { 'AGENTS.md': "The project's own rules.\n", 'app.txt': 'app\n' })
    git(own, 'init', '-q', '-b', 'main')
    git(own, 'add', '-A')
    git(own, 'commit', '-q', '-m', 'init')
    const at = { OMH_HOME: home, OMH_STATE: state }
    const r = await omh(['--new', 'probe', '--', 'echo "status=[$(git status --porcelain | tr "\\n" " ")]"; echo "rules=$(grep -c "Be brief" AGENTS.md)"'], own, at)
    expect(r.status, r.stderr).toBe(0)
    expect(facts(r.stdout)).toMatchObject({ status: '[]', rules: '1' })
    const sid = /omh: probe on omh\/(s\d+)/.exec(r.stderr)![1]!
    expect((await omh(['sessions', 'rm', sid, '--force'], own, at)).status).toBe(0)
  })

  it('runs a command in the session as the agent without ssh, passing its output and exit status through', async () => {
    const r = await run(['sessions', 'exec', 's01', '--', 'sh', '-c', 'echo "who=$(id -u)"; echo "at=$(pwd)"; exit 3'])
    expect(r.status, r.stderr).toBe(3)
    expect(facts(r.stdout)).toMatchObject({ who: '1000', at: '/work' })
    const json = await run(['--json', 'sessions', 'exec', '--', 'git', 'rev-parse', '--is-inside-work-tree'])
    expect(json.status, json.stderr).toBe(0)
    const result = JSON.parse(json.stdout).result
    expect(result).toMatchObject({ session: 's01', command: ['git', 'rev-parse', '--is-inside-work-tree'], status: 0 })
    expect(result.stdout.trim()).toBe('true')
  })

  it('shows staged files read-only, and keeps their mountpoints out of the work', async () => {
    const r = await run(['probe', '--', 'cat /work/AGENTS.md; if echo x >> /work/AGENTS.md; then echo wrote=yes; else echo wrote=no; fi; if rm -f /work/AGENTS.md; then echo removed=yes; else echo removed=no; fi'])
    expect(r.stdout).toContain('Be brief.')
    expect(facts(r.stdout)).toMatchObject({ wrote: 'no', removed: 'no' })
    const ls = await run(['--json', 'sessions', 'ls'])
    expect(JSON.parse(ls.stdout).result.sessions[0]).toMatchObject({ id: 's01', container: 'running', harness: 'probe', uncommitted: 1 })
  })

  it("keeps the user's checkout and every ref but the session's own out of reach", async () => {
    const r = await run(['probe', '--', `echo "checkout=$(test -e ${root} && echo visible || echo absent)"; echo "mounted=$(grep -c ${root} /proc/self/mountinfo)"; echo "refs=$(git for-each-ref --format='%(refname)' | tr '\\n' ' ')"; echo "commits=$(git rev-list --all | wc -l)"; echo "messages=$(git log --all --format=%s | tr '\\n' ' ')"`])
    const f = facts(r.stdout)
    expect(f).toMatchObject({ checkout: 'absent', mounted: '0', refs: 'refs/heads/sandbox ', commits: '1' })
    expect(f['messages']).not.toContain('feature work')
    expect(git(root, 'for-each-ref', '--format=%(refname)')).not.toContain('sandbox')
  })

  it("commits the agent's change to omh/<sid>, without omh's files", async () => {
    const r = await run(['sessions', 'commit', 's01', '-m', 'Work from the agent'])
    expect(r.status).toBe(0)
    expect(git(root, 'log', '-1', '--format=%s', 'omh/s01')).toBe('Work from the agent')
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01')).toBe('from-agent.txt')
  })

  it('gives two launches at once two sessions', async () => {
    const [a, b] = await Promise.all([run(['probe', '--', 'sleep 2']), run(['probe', '--', 'sleep 2'])])
    const branches = [a, b].map((r) => /omh: probe on (omh\/s\d+)/.exec(r.stderr)?.[1]).sort()
    expect(branches).toEqual(['omh/s01', 'omh/s02'])
  })

  it('never restarts a container while a harness runs in it', async () => {
    // The harness says when it runs: a loaded engine may take seconds to start it.
    const mark = path.join(worktree('s01'), 'busy.mark')
    const busy = run(['--session', 's01', 'probe', '--', 'touch /work/busy.mark; sleep 12'])
    for (let n = 0; n < 300 && !existsSync(mark); n++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(existsSync(mark), 'the harness did not start within 30 s').toBe(true)
    rmSync(mark)
    write(home, { 'rules/style.md': 'Be briefer.\n' })
    const refused = await run(['--session', 's01', 'probe'])
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain('Code: SESSION_BUSY')
    expect(refused.stderr).toContain('sleep 12')
    expect((await busy).status).toBe(0)
    const restarted = await run(['--session', 's01', 'probe', '--', 'cat /work/AGENTS.md'])
    expect(restarted.stderr).toContain('restarting the container of omh/s01')
    expect(restarted.stdout).toContain('Be briefer.')
  })

  it('keeps a harness running when its terminal closes, and the next launch reattaches to it', async () => {
    // `script` gives the launch a terminal; killing it closes that terminal, as closing a window would.
    const inTerminal = (command: string) =>
      spawn('script', ['-qec', command, '/dev/null'], { cwd: root, env: { ...process.env, NO_COLOR: '1', ...identity, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    const first = inTerminal(`${process.execPath} ${BIN} --session s01 probe -- 'echo started; sleep 6; echo finished; exit 5'`)
    let seen = ''
    first.stdout.on('data', (d: Buffer) => (seen += d))
    for (let n = 0; n < 100 && !seen.includes('started'); n++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(seen).toContain('started')
    first.kill('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const again = inTerminal(`${process.execPath} ${BIN} probe`)
    let out = ''
    again.stdout.on('data', (d: Buffer) => (out += d))
    const status = await new Promise<number>((resolve) => again.on('close', (code) => resolve(code ?? -1)))
    expect(out).toContain('omh: probe on omh/s01')
    expect(out).toContain('finished')
    expect(status).toBe(5)
  })

  it('leaves no session behind when the image does not build, and the retry succeeds', async () => {
    const adapter = (install: string) => `name = "broken"\nbin = "true"\ninstall = "${install}"\n[capabilities.rules]\npath = "/work/AGENTS.md"\nrender = "concat"\n`
    write(home, { 'adapters/broken.toml': adapter('echo no such package >&2; exit 3') })
    const before = git(root, 'branch', '--list', 'omh/*')
    const failed = await run(['--new', 'broken'])
    expect(failed.status).toBe(1)
    expect(failed.stderr).toContain('Code: IMAGE_BUILD_FAILED')
    expect(git(root, 'branch', '--list', 'omh/*')).toBe(before)
    write(home, { 'adapters/broken.toml': adapter('true') })
    const retried = await run(['--new', 'broken'])
    expect(retried.status).toBe(0)
    expect(retried.stderr).toMatch(/omh: broken on omh\/s\d+/)
  })

  it('goes straight to exec on a warm relaunch, and starts the container again when it was removed or stopped behind omh\'s back', async () => {
    const id = () => spawnSync(engine, ['ps', '-aq', '--filter', `label=omh.worktree=${worktree('s01')}`], { encoding: 'utf8' }).stdout.trim()
    expect(id()).not.toBe('')
    // A launch whose files (its own earlier writes among them) settled for two seconds is recorded, and the next replays it.
    const warm = ['--session', 's01', 'probe', '--', 'echo "kept=$OMH_HARNESS"']
    const kept = path.join(stateOf(home), 'run/.kept-launch')
    expect((await run(warm)).status).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 2100))
    const recorded = await run(warm)
    expect(recorded.status).toBe(0)
    const [entry] = readdirSync(kept).map((name) => path.join(kept, name)).filter((file) => readFileSync(file, 'utf8').includes('kept=$OMH_HARNESS'))
    const inputs = (JSON.parse(readFileSync(entry!, 'utf8')) as { inputs: [string, string][] }).inputs.map(([file]) => file)
    // What the plan depends on was noted as read: the adapter, settings, the catalogue, plugins' manifests.
    expect(inputs).toEqual(expect.arrayContaining([path.join(home, 'adapters/probe.toml'), path.join(home, 'settings.toml'), path.join(home, 'rules/style.md')]))
    expect(inputs.some((file) => /renderer-agent-md\/package\.json$/.test(file))).toBe(true)
    const inode = statSync(entry!).ino
    const replayed = await run(warm)
    expect(replayed.status).toBe(0)
    expect(replayed.stderr).toBe(recorded.stderr)
    expect(facts(replayed.stdout)).toEqual({ kept: 'probe' })
    // Replayed, not recorded again: the entry is the same file.
    expect(statSync(entry!).ino).toBe(inode)

    spawnSync(engine, ['rm', '-f', id()])
    expect(id()).toBe('')
    const afterRemoval = await run(warm)
    expect(afterRemoval.status).toBe(0)
    expect(facts(afterRemoval.stdout)).toEqual({ kept: 'probe' })
    expect(id()).not.toBe('')

    spawnSync(engine, ['stop', '--time', '0', id()])
    const afterStop = await run(['--session', 's01', 'probe'])
    expect(afterStop.status).toBe(0)
    expect(afterStop.stderr).toContain('restarting the container of omh/s01: it was stopped')
    expect(afterStop.stdout).toContain('probe: 1000:1000 in /work of session s01 as probe')

    // The form people type, into the current session (s01, launched into last), is kept the same way.
    const bare = ['probe', '--', 'echo "bare=$OMH_SESSION"']
    expect((await run(bare)).status).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 2100))
    const recordedBare = await run(bare)
    expect(facts(recordedBare.stdout)).toEqual({ bare: 's01' })
    const [bareEntry] = readdirSync(kept).map((name) => path.join(kept, name)).filter((file) => readFileSync(file, 'utf8').includes('bare=$OMH_SESSION'))
    const bareInode = statSync(bareEntry!).ino
    const replayedBare = await run(bare)
    expect(facts(replayedBare.stdout)).toEqual({ bare: 's01' })
    expect(statSync(bareEntry!).ino).toBe(bareInode)

    // With the engine named, before or after the session, each order kept as its own launch.
    for (const [n, args] of [['--runtime', engine, 'probe'], ['-s', 's01', `--runtime=${engine}`, 'probe']].entries()) {
      const named = [...args, '--', `echo "named${n}=$OMH_SESSION"`]
      expect((await run(named)).status).toBe(0)
      await new Promise((resolve) => setTimeout(resolve, 2100))
      expect(facts((await run(named)).stdout)).toEqual({ [`named${n}`]: 's01' })
      const [namedEntry] = readdirSync(kept).map((name) => path.join(kept, name)).filter((file) => readFileSync(file, 'utf8').includes(`named${n}=$OMH_SESSION`))
      expect(namedEntry, `${args.join(' ')} was recorded`).toBeDefined()
      const namedInode = statSync(namedEntry!).ino
      expect(facts((await run(named)).stdout)).toEqual({ [`named${n}`]: 's01' })
      expect(statSync(namedEntry!).ino, `${args.join(' ')} was replayed`).toBe(namedInode)
    }
  })

  it('keeps a fork bomb and a memory hog inside the session, and the host, sessions ls and the next launch still answer', async () => {
    const settings = readFileSync(path.join(home, 'settings.toml'), 'utf8')
    write(home, { 'settings.toml': `${settings}[session]\nmemory = "192m"\npids = 96\n` })
    try {
      // Builtins only once the bomb runs: every fork fails at the ceiling, so the report must not need one.
      const cg = (v1: string, v2: string) => `$(test -e /sys/fs/cgroup/${v1} && echo /sys/fs/cgroup/${v1} || echo /sys/fs/cgroup/${v2})`
      const bomb = await run([
        '--new', 'probe', '--',
        `max=${cg('pids/pids.max', 'pids.max')}; cur=${cg('pids/pids.current', 'pids.current')}; read m < $max; echo "max=$m"; ` +
          // Waits on the clock (/proc/uptime, read by a builtin), not on a count of reads: on a loaded
          // machine the bomb grows slowly, and a fixed count of reads could end before it reached anything.
          // A bomb whose processes live on, each forking for ever: one that forks and exits can rise to the
          // ceiling and die back down while this loop, starved of the CPU, is not looking.
          `read up _ < /proc/uptime; end=$((\${up%.*} + 60)); (f(){ while :; do f & done; }; f) >/dev/null 2>&1 & ` +
          `p=0; while :; do read c < $cur; [ "$c" -gt "$p" ] && p=$c; [ "$c" -ge "$m" ] && break; read up _ < /proc/uptime; [ "\${up%.*}" -ge "$end" ] && break; done; echo "current=$p"`,
      ])
      const f = facts(bomb.stdout)
      expect(f['max']).toBe('96')
      expect(Number(f['current'])).toBeLessThanOrEqual(96)
      expect(Number(f['current'])).toBeGreaterThan(16)
      const sid = /omh: probe on omh\/(s\d+)/.exec(bomb.stderr)![1]!
      // The host, the session list and a launch in another session all still answer while the bomb runs.
      expect(execFileSync('sh', ['-c', 'echo alive'], { encoding: 'utf8' })).toBe('alive\n')
      const ls = await run(['--json', 'sessions', 'ls'])
      expect(ls.status).toBe(0)
      expect(JSON.parse(ls.stdout).result.sessions.map((s: { id: string }) => s.id)).toContain(sid)
      const next = await run(['--session', 's01', 'probe', '--', 'echo next=answers'])
      expect(facts(next.stdout)['next']).toBe('answers')
      expect((await run(['sessions', 'rm', sid, '--force'])).status).toBe(0)

      const hog = await run([
        '--new', 'probe', '--',
        `node -e 'const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1))'; echo "status=$?"; m=${cg('memory/memory.max_usage_in_bytes', 'memory.peak')}; echo "peak=$(cat $m)"`,
      ])
      const h = facts(hog.stdout)
      expect(h['status']).toBe('137')
      expect(Number(h['peak'])).toBeLessThanOrEqual(192 * 1024 * 1024)
      const hogSid = /omh: probe on omh\/(s\d+)/.exec(hog.stderr)![1]!
      expect((await run(['--json', 'sessions', 'ls'])).status).toBe(0)
      expect((await run(['sessions', 'rm', hogSid, '--force'])).status).toBe(0)
    } finally {
      write(home, { 'settings.toml': settings })
    }
  })

  it('hands a <secret NAME> to the harness as a variable, never in a staged file or any output, and refuses a launch without it', async () => {
    const VALUE = 's3cr3t-e2e-4f9a1c'
    const adapter = readFileSync(path.join(home, 'adapters/probe.toml'), 'utf8')
    write(home, {
      'adapters/probe.toml': `${adapter}\n[capabilities.mcp]\npath   = "/work/.mcp.json"\nrender = "mcp-json"\n`,
      'mcp.json': JSON.stringify({ mcpServers: { sentry: { command: 'sentry-mcp', args: [], env: { SENTRY_TOKEN: '<secret OMH_E2E_SENTRY>' } } } }),
    })
    const secrets = path.join(home, 'secrets.toml')
    try {
      const missing = await run(['--new', 'probe'])
      expect(missing.status).toBe(2)
      expect(missing.stderr).toContain('<secret OMH_E2E_SENTRY> (OMH_E2E_SENTRY of probe')
      expect(missing.stderr).toContain('Code: SECRET_MISSING')

      write(home, { 'secrets.toml': `OMH_E2E_SENTRY = "${VALUE}"\n` })
      chmodSync(secrets, 0o644)
      const exposed = await run(['--new', 'probe'])
      expect(exposed.status).toBe(2)
      expect(exposed.stderr).toContain('Code: SECRET_EXPOSED')
      expect(`${exposed.stdout}${exposed.stderr}`).not.toContain(VALUE)

      chmodSync(secrets, 0o600)
      const launched = await run(['--new', 'probe', '--', 'echo "token=$OMH_E2E_SENTRY"; echo "doc=$(grep SENTRY_TOKEN /work/.mcp.json | tr -d " ")"'])
      expect(launched.status).toBe(0)
      expect(facts(launched.stdout)).toMatchObject({ token: VALUE, doc: '"SENTRY_TOKEN":"${OMH_E2E_SENTRY}"' })
      expect(launched.stderr).not.toContain(VALUE)
      const sid = /omh: probe on omh\/(s\d+)/.exec(launched.stderr)![1]!
      // Nothing staged for any session holds it.
      const staged = spawnSync('grep', ['-rl', VALUE, path.join(stateOf(home), 'run')], { encoding: 'utf8' })
      expect(staged.stdout).toBe('')
      for (const args of [['render', 'probe', '--content'], ['render', 'probe', '--json'], ['--dry-run', '--json', 'probe'], ['--json', 'sessions', 'ls']]) {
        const shown = await run(args)
        expect(shown.status).toBe(0)
        expect(`${shown.stdout}${shown.stderr}`).not.toContain(VALUE)
      }
      const rendered = await run(['render', 'probe', '--content'])
      expect(rendered.stdout).toContain('${OMH_E2E_SENTRY}')
      expect((await run(['sessions', 'rm', sid, '--force'])).status).toBe(0)
    } finally {
      write(home, { 'adapters/probe.toml': adapter })
      rmSync(path.join(home, 'mcp.json'), { force: true })
      rmSync(secrets, { force: true })
    }
  })

  it('lets a session out only through its egress proxy, to allowed names, logging every decision, and applies an allowlist edit live', async () => {
    const outside = `omh-e2e-out-${engine}-${process.pid}`
    const web = `${outside}-web`
    const settings = readFileSync(path.join(home, 'settings.toml'), 'utf8')
    const server = 'require("http").createServer((q, s) => s.end("hello from " + q.headers.host + "\\n")).listen(80)'
    try {
      expect(spawnSync(engine, ['network', 'create', '--label', 'omh.test=e2e', outside], { encoding: 'utf8' }).status).toBe(0)
      const started = spawnSync(engine, ['run', '-d', '--pull=never', '--name', web, '--label', 'omh.test=e2e', '--network', outside, '--network-alias', 'web.test', '--network-alias', 'other.test', BASE, 'node', '-e', server], { encoding: 'utf8' })
      expect(started.stderr).toBe('')
      const webIp = spawnSync(engine, ['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', web], { encoding: 'utf8' }).stdout.trim()
      // A network this engine lacks is named with the setting that named it, before anything starts.
      write(home, { 'settings.toml': `${settings}[session]\nnetwork = "${outside}-nowhere"\n` })
      const missing = await run(['--new', 'probe', '--', 'true'])
      expect(missing.status).toBe(2)
      expect(missing.stderr).toContain('Code: NETWORK_MISSING')
      expect(missing.stderr).toContain(`The network "${outside}-nowhere" ([session] network in ${path.join(home, 'settings.toml')}) does not exist on ${engine}.`)
      write(home, { 'settings.toml': `${settings}[session]\nnetwork = "${outside}"\n[network]\nregistries = []\nallow = ["web.test", "localhost", "169.254.169.254", "near.test", "meta.test", "loop.test:3128"]\n` })
      const first = await run(['--new', 'probe'])
      expect(first.status).toBe(0)
      const sid = /omh: probe on omh\/(s\d+)/.exec(first.stderr)![1]!
      const repoId = path.basename(path.dirname(worktree(sid)))
      copyFileSync(path.join(ROOT, 'test/fixtures/egress-client.cjs'), path.join(worktree(sid), 'client.cjs'))
      const ask = async (...args: string[]) => facts((await run(['--session', sid, 'probe', '--', `node client.cjs ${args.join(' ')}`])).stdout)['result']
      const env = facts((await run(['--session', sid, 'probe', '--', 'echo "proxy=$HTTPS_PROXY"; echo "noproxy=$NO_PROXY"'])).stdout)
      expect(env).toMatchObject({ proxy: 'http://omh-egress:3128', noproxy: 'localhost,127.0.0.1,::1,omh-creds' })

      expect(await ask('get', 'http://web.test/')).toBe('200 hello from web.test')
      expect(await ask('connect', 'web.test:80')).toBe('200 hello from web.test:80')
      expect(await ask('connect', 'other.test:80')).toBe('403')
      expect(await ask('direct', webIp)).toMatch(/^error /)
      expect(await ask('connect', 'localhost:3128')).toBe('403')
      expect(await ask('get', 'http://169.254.169.254/latest/meta-data/')).toBe('403')
      // An allowed name that resolves to metadata or loopback is refused for where it leads. The proxy's
      // hosts file, which squid reads as it reads a DNS answer, stands in offline for a hostile resolver;
      // near.test, resolved the same way to the web container, shows the entries are in force.
      const proxy = `omh-${repoId}-${sid}-egress`
      const hosts = `printf '%s\\n' '${webIp} near.test' '169.254.169.254 meta.test' '127.0.0.1 loop.test' >> /etc/hosts`
      expect(spawnSync(engine, ['exec', '-u', 'root', proxy, 'sh', '-c', hosts], { encoding: 'utf8' }).stderr).toBe('')
      expect(spawnSync(engine, ['exec', proxy, 'squid', '-k', 'reconfigure', '-f', '/omh/egress/squid.conf'], { encoding: 'utf8' }).status).toBe(0)
      await new Promise((r) => setTimeout(r, 1000))
      const asks = { near: 'get http://near.test/', metaGet: 'get http://meta.test/latest/meta-data/', metaConnect: 'connect meta.test:443', loop: 'connect loop.test:3128' }
      const asked = await run(['--session', sid, 'probe', '--', Object.entries(asks).map(([k, a]) => `node client.cjs ${a} | sed s/^result=/${k}=/`).join('; ')])
      expect(facts(asked.stdout)).toMatchObject({ near: '200 hello from near.test', metaGet: '403', metaConnect: '403', loop: '403' })

      const log = await run(['--json', 'sessions', 'egress', sid])
      expect(log.status).toBe(0)
      const decisions = JSON.parse(log.stdout).result.decisions as { allowed: boolean; host: string; port: number; method: string; time: string }[]
      expect(decisions).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ allowed: true, host: 'web.test', port: 80, method: 'GET' }),
          expect.objectContaining({ allowed: true, host: 'web.test', port: 80, method: 'CONNECT' }),
          expect.objectContaining({ allowed: false, host: 'other.test', port: 80, method: 'CONNECT' }),
          expect.objectContaining({ allowed: false, host: 'localhost', port: 3128 }),
          expect.objectContaining({ allowed: false, host: '169.254.169.254', port: 80 }),
          expect.objectContaining({ allowed: true, host: 'near.test', port: 80, method: 'GET' }),
          expect.objectContaining({ allowed: false, host: 'meta.test', port: 80, method: 'GET' }),
          expect.objectContaining({ allowed: false, host: 'meta.test', port: 443, method: 'CONNECT' }),
          expect.objectContaining({ allowed: false, host: 'loop.test', port: 3128, method: 'CONNECT' }),
        ]),
      )
      expect(decisions.every((d) => !Number.isNaN(Date.parse(d.time)))).toBe(true)
      expect((await run(['sessions', 'egress', sid])).stdout).toMatch(/denied\s+CONNECT\s+other\.test:80/)

      // An edit to the allowlist reaches the proxy while the harness runs: no restart, no other omh command.
      const allowConf = path.join(stateOf(home), 'run', repoId, sid, 'egress', 'allow.conf')
      const liveArgs = [
        '--session', sid, 'probe', '--',
        'node client.cjs connect other.test:80 | sed s/^result=/first=/; touch .asked; i=0; while [ ! -e .go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; node client.cjs connect other.test:80 | sed s/^result=/second=/',
      ]
      // Run once without waiting, so the live run below is a kept launch that goes straight to exec:
      // its watch of the settings is the kept launch's own.
      writeFileSync(path.join(worktree(sid), '.go'), '')
      await new Promise((r) => setTimeout(r, 2100))
      expect((await run(liveArgs)).status).toBe(0)
      rmSync(path.join(worktree(sid), '.go'))
      rmSync(path.join(worktree(sid), '.asked'))
      const kept = path.join(stateOf(home), 'run/.kept-launch')
      const entries = () => readdirSync(kept).map((name) => `${name}:${statSync(path.join(kept, name)).ino}`).sort()
      expect(readdirSync(kept).some((name) => readFileSync(path.join(kept, name), 'utf8').includes('s/^result=/second=/')), 'the first run was kept').toBe(true)
      const keptBefore = entries()
      const live = run(liveArgs)
      const until = async (ok: () => boolean, what: string) => {
        for (let i = 0; i < 600 && !ok(); i++) await new Promise((r) => setTimeout(r, 100))
        expect(ok(), what).toBe(true)
      }
      await until(() => existsSync(path.join(worktree(sid), '.asked')), 'the first request was made')
      write(home, { 'settings.toml': `${settings}[session]\nnetwork = "${outside}"\n[network]\nregistries = []\nallow = ["web.test", "other.test:80"]\n` })
      await until(() => readFileSync(allowConf, 'utf8').includes('other.test'), 'the proxy got the edited allowlist')
      // squid answers from the new rules once it has reread them, which the reload waits for.
      await new Promise((r) => setTimeout(r, 1500))
      writeFileSync(path.join(worktree(sid), '.go'), '')
      const during = await live
      expect(entries(), 'the live run was a kept launch').toEqual(keptBefore)
      expect(during.stderr).not.toContain('restarting')
      expect(facts(during.stdout)).toMatchObject({ first: '403', second: '200 hello from other.test:80' })
      rmSync(path.join(worktree(sid), '.asked'))
      rmSync(path.join(worktree(sid), '.go'))

      // A launch into the running session also applies it: no new container for the session.
      write(home, { 'settings.toml': `${settings}[session]\nnetwork = "${outside}"\n[network]\nregistries = []\nallow = ["web.test", "other.test:81", "other.test:80"]\n` })
      const again = await run(['--session', sid, 'probe', '--', 'node client.cjs connect other.test:80'])
      expect(again.stderr).not.toContain('restarting')
      expect(facts(again.stdout)['result']).toBe('200 hello from other.test:80')

      // A new container of the session gets a network never used before; the old one is gone.
      const recorded = () => readFileSync(path.join(stateOf(home), 'run', repoId, sid, 'egress', 'network'), 'utf8').trim()
      const before = recorded()
      // The engine's own table wins over [session] network, and another engine's applies only there.
      const other = engine === 'docker' ? 'podman' : 'docker'
      write(home, { 'settings.toml': `${settings}[session]\nnetwork = "${outside}-nowhere"\n[runtimes.${engine}]\nnetwork = "${outside}"\n[runtimes.${other}]\nnetwork = "only-on-${other}"\n[network]\nregistries = []\nallow = ["web.test"]\n` })
      expect((await run(['sessions', 'down', sid])).status).toBe(0)
      expect(facts((await run(['--session', sid, 'probe', '--', 'node client.cjs get http://web.test/'])).stdout)['result']).toBe('200 hello from web.test')
      expect(recorded()).not.toBe(before)
      const label = `label=omh.egress=${repoId}-${sid}`
      const networks = () => spawnSync(engine, ['network', 'ls', '--format', '{{.Name}}', '--filter', label], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)
      expect(networks()).toEqual([recorded()])
      expect((await run(['sessions', 'rm', sid, '--force'])).status).toBe(0)
      expect(spawnSync(engine, ['ps', '-aq', '--filter', label], { encoding: 'utf8' }).stdout).toBe('')
      expect(networks()).toEqual([])
    } finally {
      write(home, { 'settings.toml': settings })
      spawnSync(engine, ['rm', '-f', web])
      spawnSync(engine, ['network', 'rm', outside])
    }
  })

  it("gives a session's proxy a way out on a network of omh's own when no setting names one", async () => {
    // This machine's engines start containers on no network by default (`--bridge=none`,
    // `netns = "none"`): a proxy left there would answer every request with "No route to host".
    const web = `omh-e2e-own-out-${engine}-${process.pid}`
    const settings = readFileSync(path.join(home, 'settings.toml'), 'utf8')
    const server = 'require("http").createServer((q, s) => s.end("hello from " + q.headers.host + "\\n")).listen(80)'
    try {
      spawnSync(engine, ['network', 'create', '--label', 'omh.outside=true', 'omh-outside'], { encoding: 'utf8' })
      const started = spawnSync(engine, ['run', '-d', '--pull=never', '--name', web, '--label', 'omh.test=e2e', '--network', 'omh-outside', '--network-alias', 'own.test', BASE, 'node', '-e', server], { encoding: 'utf8' })
      expect(started.stderr).toBe('')
      write(home, { 'settings.toml': `${settings}[network]\nregistries = []\n` })
      const r = await run(['--new', 'probe', '--', 'true'])
      expect(r.status, r.stderr).toBe(0)
      const sid = sessionOf(r)
      copyFileSync(path.join(ROOT, 'test/fixtures/egress-client.cjs'), path.join(worktree(sid), 'client.cjs'))
      const ask = async () => facts((await run(['--session', sid, 'probe', '--', 'node client.cjs body http://own.test/'])).stdout)['result']
      // The refusal says, in one line the agent reads, what would allow the host: that command, as it says.
      const refused = await ask()
      expect(refused).toBe(`403 omh: this sandbox may not reach own.test:80, which is not on its egress allowlist. To let it through, the user runs on the host: omh sessions allow ${sid} own.test:80`)
      // Refused, listed once, then allowed from outside: the running proxy takes it, nothing restarts.
      const denied = await run(['--json', 'sessions', 'egress', sid, '--denied'])
      expect(JSON.parse(denied.stdout).result.denied).toEqual([expect.objectContaining({ host: 'own.test', port: 80, count: 1 })])
      const allowed = await run(['--json', ...refused!.slice(refused!.indexOf('omh sessions allow ') + 4).split(' ')])
      expect(allowed.status, allowed.stderr).toBe(0)
      expect(JSON.parse(allowed.stdout).result).toMatchObject({ session: sid, allowed: ['own.test:80'], applied: true })
      const container = containerOf(sid)
      expect(await ask()).toBe('200 hello from own.test')
      expect(containerOf(sid)).toBe(container)

      // The egress self-test, from inside a second session while the first runs beside it.
      const second = await run(['--new', 'probe', '--', 'true'])
      expect(second.status, second.stderr).toBe(0)
      const other = sessionOf(second)
      expect((await run(['sessions', 'allow', other, 'own.test:80'])).status).toBe(0)
      const checked = await run(['doctor', 'probe', '--network', '--json'])
      const egress = JSON.parse(checked.stdout).result?.egress ?? JSON.parse(checked.stdout).error?.details?.egress
      expect(egress, checked.stdout.slice(-2000)).toMatchObject({ session: other, mode: 'allowlist', ok: true })
      const outcome = (target: string) => egress.results.find((r: { target: string }) => r.target === target)
      expect(outcome('own.test:80')).toMatchObject({ expect: 'open', got: 'open', ok: true })
      for (const target of ['omh-doctor-unlisted.invalid:443', '169.254.169.254:80', 'localhost:3128', '1.1.1.1:443', '[2606:4700:4700::1111]:443', 'gateway:80']) {
        expect(outcome(target), target).toMatchObject({ expect: 'closed', got: 'closed' })
      }
      expect(egress.results.some((r: { name: string; ok: boolean }) => r.name.startsWith("another session's container") && r.ok), 'the first session is out of reach').toBe(true)
      // A rule that cannot hold (omh never lets loopback out) fails doctor, named.
      expect((await run(['sessions', 'allow', other, 'localhost:3128'])).status).toBe(0)
      const failing = await run(['doctor', 'probe', '--network'])
      expect(failing.status).toBe(1)
      expect(failing.stderr).toContain('Code: EGRESS_CHECK_FAILED')
      expect(failing.stderr).toContain('allowed localhost:3128 ([network] allow "localhost:3128"): proxy answered 403')
      expect((await run(['sessions', 'rm', other, '--force'])).status).toBe(0)
      expect((await run(['sessions', 'rm', sid, '--force'])).status).toBe(0)
    } finally {
      write(home, { 'settings.toml': settings })
      spawnSync(engine, ['rm', '-f', web])
    }
  })

  const sessionOf = (r: Ran) => /omh: [\w-]+ on omh\/(s\d+)/.exec(r.stderr)?.[1] ?? ''
  const containerOf = (sid: string) => spawnSync(engine, ['ps', '-aq', '--filter', `label=omh.worktree=${worktree(sid)}`], { encoding: 'utf8' }).stdout.trim()

  it('carries untracked files into a new session as copies, an ignored .env among them, hidden from diff and commit', async () => {
    write(root, { '.env': 'SECRET=1\n', 'fixtures/data.db': 'rows\n', '.omh/settings.local.toml': '[session]\ncarry_in = [".env", "fixtures/*.db"]\n' })
    // Ignored, as in almost every repository; git refuses an exclude that names an ignored file.
    const exclude = path.join(root, '.git/info/exclude')
    const excluded = existsSync(exclude) ? readFileSync(exclude, 'utf8') : ''
    writeFileSync(exclude, `${excluded}.env\n`)
    try {
      // Carrying the user's files into the sandbox widens it: the repository's settings wait for trust.
      const untrusted = await run(['--new', 'probe'])
      expect(untrusted.stderr).toContain('session.carry_in: settings that widen the sandbox')
      expect((await run(['trust'])).status).toBe(0)
      const r = await run(['--new', 'probe', '--', 'echo "env=$(cat .env)"; echo "db=$(cat fixtures/data.db)"; echo changed > .env; echo "status=$(git status --porcelain | tr "\\n" " ")"'])
      expect(r.status).toBe(0)
      const f = facts(r.stdout)
      expect(f).toMatchObject({ env: 'SECRET=1', db: 'rows' })
      expect(f['status']).not.toMatch(/\.env|fixtures/)
      expect(readFileSync(path.join(root, '.env'), 'utf8')).toBe('SECRET=1\n')
      const sid = sessionOf(r)
      expect(readFileSync(path.join(worktree(sid), '.env'), 'utf8')).toBe('changed\n')
      expect((await run(['sessions', 'diff', sid, '--stat'])).stdout).toBe('')
      const commit = await run(['sessions', 'commit', sid, '-m', 'nothing of theirs'])
      expect(commit.stderr).toContain('Code: NOTHING_TO_COMMIT')
      expect((await run(['--session', sid, 'probe', '--', 'echo work > work.txt; mkdir -p notes; echo later > notes/todo.md; echo tmp > scratch.txt'])).status).toBe(0)
      const diff = await run(['sessions', 'diff', sid, '--stat'])
      expect(diff.status, diff.stderr).toBe(0)
      expect(diff.stdout).toContain('work.txt')
      expect(diff.stdout).not.toMatch(/\.env|fixtures/)
      // Part of the work: the paths named, less those excluded; the rest stays in the session.
      const kept = await run(['sessions', 'commit', sid, '-m', 'The work', '--exclude', 'scratch.txt', '--', 'work.txt', 'scratch.txt'])
      expect(kept.status, kept.stderr).toBe(0)
      expect(git(root, 'show', '--name-only', '--format=', branchOfSession(sid))).toBe('work.txt')
      const uncommitted = async () => (JSON.parse((await run(['--json', 'sessions', 'ls'])).stdout).result.sessions as { id: string; uncommitted: unknown }[]).find((r) => r.id === sid)?.uncommitted
      expect(await uncommitted()).toBe(2)
      const notes = await run(['sessions', 'commit', sid, '-m', 'Notes', '--exclude', 'scratch.txt'])
      expect(notes.status, notes.stderr).toBe(0)
      expect(git(root, 'show', '--name-only', '--format=', branchOfSession(sid))).toBe('notes/todo.md')
      expect(await uncommitted()).toBe(1)
      expect((await run(['sessions', 'diff', sid, '--stat'])).stdout).toMatch(/notes\/todo\.md[\s\S]*scratch\.txt[\s\S]*work\.txt/)
      expect((await run(['sessions', 'rm', sid, '--force'])).status).toBe(0)
    } finally {
      writeFileSync(exclude, excluded)
      await run(['trust', '--revoke'])
      for (const made of ['.env', 'fixtures', '.omh']) rmSync(path.join(root, made), { recursive: true, force: true })
    }
  })

  it('makes a spare after a launch that makes a session, hidden until the next --new claims it as it is, and sends it away once a commit leaves it stale', async () => {
    // A home and repository of its own: spares made in the background must not meet the other tests' ids.
    const home2 = scratch()
    const repo2 = scratch()
    dirs.push(home2, repo2)
    probeProject(home2, `runtime = "${engine}"\n[image]\nbase = "${BASE}"\nnetwork = "host"\n[session]\nspare = 1\n`, repo2, { 'README.md': 'spares\n' })
    const env2 = { OMH_HOME: home2, OMH_STATE: stateOf(home2) }
    const run2 = (args: readonly string[]) => omh(args, repo2, env2)
    const runDir = () => {
      const repos = path.join(stateOf(home2), 'run')
      return path.join(repos, readdirSync(repos).find((n) => !n.startsWith('.'))!)
    }
    const spareMark = (sid: string) => spareMarks(stateOf(home2)).find((spare) => spare.sid === sid)?.mark
    const container = (sid: string) => spawnSync(engine, ['inspect', '--format', '{{.Id}}', `omh-${path.basename(runDir())}-${sid}`], { encoding: 'utf8' }).stdout.trim()
    const listed = async () => (JSON.parse((await run2(['--json', 'sessions', 'ls'])).stdout).result.sessions as { id: string }[]).map((r) => r.id)
    try {
      const first = await run2(['probe'])
      expect(first.status, first.stderr).toBe(0)
      await until('the spare s02', () => spareMark('s02')?.ready === true)
      expect(spareMark('s02')!.base).toBe(git(repo2, 'rev-parse', 'main'))
      expect(await listed()).toEqual(['s01'])
      const made = container('s02')
      expect(made).not.toBe('')

      // Claimed as it is: the container the spare started runs the harness.
      const claimed = await run2(['--new', 'probe'])
      expect(claimed.status, claimed.stderr).toBe(0)
      expect(sessionOf(claimed)).toBe('s02')
      expect(container('s02')).toBe(made)
      expect(spareMark('s02')).toBeUndefined()
      expect(await listed()).toEqual(['s01', 's02'])

      // The next spare, made after that claim, goes stale with a commit on main: --new passes it by.
      await until('the spare s03', () => spareMark('s03')?.ready === true)
      git(repo2, 'commit', '-q', '--allow-empty', '-m', 'new work on main')
      const past = await run2(['--new', 'probe'])
      expect(past.status, past.stderr).toBe(0)
      expect(sessionOf(past)).toBe('s04')
      // The maker that launch started takes the stale spare away, then makes one from the new commit.
      await until('the stale spare to go', () => !existsSync(path.join(stateOf(home2), 'worktrees', path.basename(runDir()), 's03')))
      const networksOf = (sid: string) => spawnSync(engine, ['network', 'ls', '--format', '{{.Name}}'], { encoding: 'utf8' }).stdout.split('\n').filter((n) => n.startsWith(`omh-${path.basename(runDir())}-${sid}-`))
      expect([container('s03'), container('s03-egress'), ...networksOf('s03')]).toEqual(['', ''])
      expect(git(repo2, 'branch', '--list', 'omh/s03')).toBe('')
      await until('a spare from the new commit', () => spareMark('s05')?.ready === true)
      expect(spareMark('s05')!.base).toBe(git(repo2, 'rev-parse', 'main'))
      expect(await listed()).toEqual(['s01', 's02', 's04'])

      // Turned off, the spare that stands goes with the next session made.
      writeFileSync(path.join(home2, 'settings.toml'), `runtime = "${engine}"\n[image]\nbase = "${BASE}"\nnetwork = "host"\n[session]\nspare = 0\n`)
      const off = await run2(['--new', 'probe'])
      expect(sessionOf(off)).toBe('s06')
      await until('the spare to go when turned off', () => spareMark('s05') === undefined)
      expect([container('s05'), container('s05-egress'), ...networksOf('s05')]).toEqual(['', ''])
    } finally {
      for (const sid of await listed().catch(() => [] as string[])) await run2(['sessions', 'rm', sid, '--force'])
      const repoId = existsSync(path.join(stateOf(home2), 'run')) ? path.basename(runDir()) : undefined
      if (repoId) {
        for (const id of spawnSync(engine, ['ps', '-aq', '--filter', `label=omh.repo=${repoId}`], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)) spawnSync(engine, ['rm', '-f', id])
        for (const name of [`omh-${repoId}-s03`, `omh-${repoId}-s05`].flatMap((c) => [`${c}-egress`, c])) spawnSync(engine, ['rm', '-f', name])
        const networks = spawnSync(engine, ['network', 'ls', '--format', '{{.Name}}'], { encoding: 'utf8' }).stdout.split('\n').filter((n) => n.startsWith(`omh-${repoId}-`))
        for (const network of networks) spawnSync(engine, ['network', 'rm', network])
      }
    }
  })

  it('stops a container idle longer than [session] idle_stop at the next command, keeping its worktree and branch', async () => {
    write(root, { '.omh/settings.local.toml': '[session]\nidle_stop = "1s"\n' })
    let sid: string
    try {
      sid = sessionOf(await run(['--new', 'probe']))
    } finally {
      rmSync(path.join(root, '.omh'), { recursive: true, force: true })
    }
    expect(containerOf(sid)).not.toBe('')
    expect(containerOf('s01')).not.toBe('')
    // Commands look at most every ten minutes; the stamp of the last look goes, as ten minutes passing would.
    rmSync(path.join(stateOf(home), 'run', '.idle-checked'), { force: true })
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const next = await run(['sessions', 'ls'])
    expect(next.status).toBe(0)
    expect(next.stderr).toContain(`omh: stopped the idle container of omh/${sid}`)
    expect(containerOf(sid)).toBe('')
    expect(containerOf('s01')).not.toBe('')
    expect(existsSync(worktree(sid))).toBe(true)
    expect(git(root, 'branch', '--list', `omh/${sid}`)).not.toBe('')
    const quiet = await run(['sessions', 'ls'])
    expect(quiet.stderr).not.toContain('stopped the idle container')
    expect((await run(['sessions', 'rm', sid, '--force'])).status).toBe(0)
  })

  it('lists its images with the sessions using them, and prunes only those no session uses', async () => {
    const repoId = path.basename(path.dirname(worktree('s01')))
    const probe = JSON.parse((await run(['images', 'ls', '--harness', 'probe', '--json'])).stdout).result.images as { tags: string[]; sessions: string[]; size: number }[]
    const used = probe.find((i) => i.sessions.includes(`${repoId}/s01`))
    expect(used?.size).toBeGreaterThan(0)
    // A harness of this run alone, so pruning touches no image another run may use.
    const name = `prune-${TEST_RUN.toLowerCase().replace(/[^a-z0-9]/g, '')}`
    write(home, { [`adapters/${name}.toml`]: `name = "${name}"\nbin = "true"\ninstall = "echo ${name}"\n[capabilities.rules]\npath = "/work/AGENTS.md"\nrender = "concat"\n` })
    const made = await run(['--new', name])
    expect(made.status).toBe(0)
    const sid = sessionOf(made)
    const kept = await run(['images', 'prune', '--harness', name, '--json'])
    expect(JSON.parse(kept.stdout).result.removed).toEqual([])
    expect((await run(['sessions', 'rm', sid, '--force'])).status).toBe(0)
    const young = await run(['images', 'prune', '--harness', name, '--older-than', '1d', '--json'])
    expect(JSON.parse(young.stdout).result.removed).toEqual([])
    // Ten minutes old at least, unless told: a fresh image may be one a launch is about to use.
    expect(JSON.parse((await run(['images', 'prune', '--harness', name, '--json'])).stdout).result.removed).toEqual([])
    const pruned = await run(['images', 'prune', '--harness', name, '--older-than', '1s', '--json'])
    expect(pruned.status).toBe(0)
    expect(JSON.parse(pruned.stdout).result.removed.map((i: { harness: string; kind: string }) => `${i.kind} ${i.harness}`).sort()).toEqual([`harness ${name}`, `tools ${name}`])
    expect(JSON.parse((await run(['images', 'ls', '--harness', name, '--json'])).stdout).result.images).toEqual([])
    const bad = await run(['images', 'prune', '--older-than', 'soon'])
    expect(bad.status).toBe(2)
  })

  it("keeps the agent's own commits, pushes the branch from the host, and names files two sessions both changed", async () => {
    // The agent commits with the git inside the container, on the sandbox repository.
    const agent = await run(['--session', 's01', 'probe', '--', 'echo one > step.txt && git add step.txt && git commit -q -m "Agent step one" && echo two >> step.txt && git commit -q -am "Agent step two" && echo loose > loose.txt && echo committed=yes'])
    expect(facts(agent.stdout)).toMatchObject({ committed: 'yes' })
    const r = await run(['--json', 'sessions', 'commit', 's01', '-m', 'The rest'])
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout).result.kept.map((k: { subject: string }) => k.subject)).toEqual(['Agent step one', 'Agent step two'])
    expect(git(root, 'log', '-3', '--reverse', '--format=%s|%an|%cn', 'omh/s01').split('\n')).toEqual([
      'Agent step one|omh sandbox|User',
      'Agent step two|omh sandbox|User',
      'The rest|User|User',
    ])
    expect(git(root, 'show', 'omh/s01:step.txt')).toBe('one\ntwo')
    expect(git(root, 'show', '--name-only', '--format=', 'omh/s01')).toBe('loose.txt')

    const bare = scratch()
    dirs.push(bare)
    git(bare, 'init', '-q', '--bare')
    git(root, 'remote', 'add', 'origin', bare)
    try {
      const pushed = await run(['sessions', 'push', 's01'])
      expect(pushed.status).toBe(0)
      expect(pushed.stdout).toContain('pushed omh/s01')
      expect(git(bare, 'rev-parse', 'refs/heads/omh/s01')).toBe(git(root, 'rev-parse', 'omh/s01'))
    } finally {
      git(root, 'remote', 'remove', 'origin')
    }

    expect((await run(['--session', 's02', 'probe', '--', 'echo other > step.txt'])).status).toBe(0)
    const ls = await run(['--json', 'sessions', 'ls'])
    const rows = JSON.parse(ls.stdout).result.sessions as { id: string; shared: { path: string; with: string[] }[] }[]
    expect(rows.find((row) => row.id === 's01')?.shared).toEqual([{ path: 'step.txt', with: ['s02'] }])
    expect(rows.find((row) => row.id === 's02')?.shared).toEqual([{ path: 'step.txt', with: ['s01'] }])
    expect((await run(['sessions', 'ls'])).stdout).toContain('s01 and s02 both changed step.txt')
  })

  it('names a session: its branch carries the name, and the name serves wherever an id does', async () => {
    const r = await run(['--name', 'feature-x', 'probe', '--', 'echo made > named.txt'])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toContain('omh: probe on omh/feature-x')
    expect(git(root, 'branch', '--list', 'omh/feature-x')).toContain('omh/feature-x')
    const again = await run(['--session', 'feature-x', 'probe', '--', 'cat named.txt'])
    expect(again.stdout).toContain('made')
    expect((await run(['sessions', 'diff', 'feature-x', '--stat'])).stdout).toContain('named.txt')
    const rows = JSON.parse((await run(['--json', 'sessions', 'ls'])).stdout).result.sessions as { id: string; container: string }[]
    expect(rows.find((row) => row.id === 'feature-x')).toMatchObject({ container: 'running' })
    expect(rows.at(-1)!.id).toBe('feature-x')
    const taken = await run(['--name', 'feature-x', 'probe', '--', 'true'])
    expect(taken.status).toBe(2)
    expect(taken.stderr).toContain('SESSION_NAME_REFUSED')
    expect((await run(['sessions', 'rm', 'feature-x', '--force'])).status).toBe(0)
    expect(git(root, 'branch', '--list', 'omh/feature-x')).toBe('')
  })

  it('keeps a session on the engine it was launched on whatever the setting says, and down without an id stops only the current one', async () => {
    const other = engine === 'docker' ? 'podman' : 'docker'
    const home2 = scratch()
    dirs.push(home2)
    write(home2, { 'settings.toml': `runtime = "${other}"\n[image]\nbase = "${BASE}"\nnetwork = "host"\n` })
    mkdirSync(path.join(home2, 'adapters'))
    copyFileSync(path.join(ROOT, 'test/fixtures/adapters/probe.toml'), path.join(home2, 'adapters/probe.toml'))
    const elsewhere = { OMH_HOME: home2, OMH_STATE: stateOf(home) }
    const onOther = (sid: string) => spawnSync(other, ['ps', '-aq', '--filter', `label=omh.worktree=${worktree(sid)}`], { encoding: 'utf8' }).stdout.trim()

    const first = await omh(['--runtime', engine, '--new', 'probe', '--', 'true'], root, elsewhere)
    expect(first.status, first.stderr).toBe(0)
    const sid = /omh: probe on omh\/(s\d+)/.exec(first.stderr)![1]!
    const row = async (id: string) => (JSON.parse((await omh(['--json', 'sessions', 'ls'], root, elsewhere)).stdout).result.sessions as { id: string; container: string }[]).find((r) => r.id === id)
    expect(await row(sid)).toMatchObject({ container: 'running' })

    // Without --runtime the session stays where it runs: nothing starts on the other engine.
    const again = await omh(['probe', '--', 'echo where=here'], root, elsewhere)
    expect(again.status, again.stderr).toBe(0)
    expect(facts(again.stdout)).toMatchObject({ where: 'here' })
    expect(onOther(sid)).toBe('')

    const moved = await omh(['--runtime', other, '--session', sid, 'probe', '--', 'true'], root, elsewhere)
    expect(moved.status).toBe(1)
    expect(moved.stderr).toContain('SESSION_ELSEWHERE')
    expect(onOther(sid)).toBe('')

    const egress = await omh(['sessions', 'egress', sid], root, elsewhere)
    expect(egress.status, egress.stderr).toBe(0)

    // Down without an id: the current session only, on its own engine.
    const down = await omh(['--json', 'sessions', 'down'], root, elsewhere)
    expect(down.status, down.stderr).toBe(0)
    expect(JSON.parse(down.stdout).result.sessions).toEqual([{ session: sid, stopped: true }])
    expect(await row(sid)).toMatchObject({ container: 'none' })
    expect(await row('s01')).toMatchObject({ container: 'running' })
    expect((await omh(['sessions', 'rm', sid, '--force'], root, elsewhere)).status).toBe(0)
  })

  it('starts harnesses in the background, each in a session of its own, keeps what they print, and refuses a second start where one runs', async () => {
    // Three from one shell, as a user starts them: each prints its id and returns while its harness runs.
    // Each runs until the test lets it go, so the second start below meets it running.
    const started = await Promise.all(['one', 'two', 'three'].map((word) => run(['--detach', '--new', 'probe', `echo started-${word}; while [ ! -e /tmp/omh-go ]; do sleep 0.2; done; echo done-${word}; exit 3`])))
    for (const r of started) expect(r.status, r.stderr).toBe(0)
    const sids = started.map((r) => r.stdout.trim())
    expect(new Set(sids).size).toBe(3)
    for (const sid of sids) expect(sid).toMatch(/^s\d+$/)
    expect(started[0]!.stderr).toContain(`probe runs in the background in ${sids[0]}`)
    const [sid] = sids as [string]
    // A second start where the probe runs is refused, naming what to do instead.
    const again = await run(['--detach', '--session', sid, 'probe', 'true'])
    expect(again.status).toBe(1)
    expect(again.stderr).toContain(`probe already runs in session ${sid}, in the background`)
    expect(again.stderr).toContain('Code: HARNESS_RUNNING')
    const early = await run(['sessions', 'logs', sid, '--json'])
    expect(early.status, early.stderr).toBe(0)
    expect(JSON.parse(early.stdout).result.output).toContain('started-one')
    // The probe's adapter binds no hooks: its state comes from its process, and the row says so.
    const stateIn = async (id: string) => (JSON.parse((await run(['--json', 'sessions', 'ls'])).stdout).result.sessions as { id: string; state: unknown }[]).find((r) => r.id === id)?.state
    expect(await stateIn(sid)).toMatchObject({ harness: 'probe', state: 'running', from: 'process' })
    expect((await run(['sessions', 'ls'])).stdout).toMatch(new RegExp(`^${sid} +probe +running \\(process\\) +\\d+[smh] ago`, 'm'))
    // Once it exited: its whole output, its status kept, and nothing left to attach to.
    expect((await run(['sessions', 'exec', sid, '--', 'touch', '/tmp/omh-go'])).status).toBe(0)
    let logs = ''
    for (let n = 0; n < 60 && !logs.includes('done-one'); n++) {
      await new Promise((done) => setTimeout(done, 500))
      logs = (await run(['sessions', 'logs', sid])).stdout
    }
    expect(logs).toContain(`probe: 1000:1000 in /work of session ${sid} as probe`)
    expect(logs).toContain('done-one')
    expect(await stateIn(sid)).toMatchObject({ harness: 'probe', state: 'finished', exit: 3, from: 'process' })
    const attach = spawnSync('script', ['-qec', `${process.execPath} ${BIN} sessions attach ${sid}`, '/dev/null'], { cwd: root, env: { ...process.env, ...env, NO_COLOR: '1' }, encoding: 'utf8' })
    expect(attach.status).toBe(1)
    expect(attach.stdout).toContain('No harness runs in the background in session')
    for (const s of sids) expect((await run(['sessions', 'rm', s, '--force'])).status).toBe(0)
  })

  it('brings a harness in the background to a terminal and passes on its status; its output reaches no terminal as commands', async () => {
    const started = await run(['--detach', '--new', 'probe', "printf 'x\\033]0;owned\\007\\033[31mred\\033[0m\\n'; sleep 3; exit 7"])
    expect(started.status, started.stderr).toBe(0)
    const sid = started.stdout.trim()
    // Attached with a terminal of its own (script), it waits for the harness and exits with its status.
    const attach = spawnSync('script', ['-qec', `${process.execPath} ${BIN} sessions attach ${sid}`, '/dev/null'], { cwd: root, env: { ...process.env, ...env, NO_COLOR: '1' }, encoding: 'utf8', timeout: 60_000 })
    expect(attach.status, attach.stdout).toBe(7)
    const shown = await run(['sessions', 'logs', sid])
    expect(shown.stdout).toContain('xred')
    expect(shown.stdout).not.toContain('\u001b')
    expect(shown.stdout).not.toContain('\u0007')
    const raw = await run(['sessions', 'logs', sid, '--raw'])
    expect(raw.stdout).toContain('\u001b[31mred')
    expect((await run(['sessions', 'rm', sid, '--force'])).status).toBe(0)
  })

  it('stops a session and leaves no placeholder behind', async () => {
    expect(existsSync(path.join(worktree('s01'), 'AGENTS.md'))).toBe(true)
    const r = await run(['sessions', 'down', '--all'])
    expect(r.status).toBe(0)
    expect(existsSync(path.join(worktree('s01'), 'AGENTS.md'))).toBe(false)
    expect(git(worktree('s01'), 'status', '--porcelain')).toBe('')
    expect(spawnSync(engine, ['ps', '-aq', '--filter', `label=omh.worktree=${worktree('s01')}`], { encoding: 'utf8' }).stdout.trim()).toBe('')
  })
})

describe("the README's example", () => {
  it('launches the example harness from a fresh clone with the example profile, leaving nothing in the checkout', async () => {
    const clone = path.join(scratch(), 'omh')
    const xdg = scratch()
    try {
      // As the README says: the clone's own examples/profile is OMH_HOME, and state goes where it goes by default.
      execFileSync('git', ['clone', '-q', ROOT, clone])
      const env = { OMH_HOME: path.join(clone, 'examples/profile'), XDG_STATE_HOME: xdg }
      const r = await omh(['hello', '--', 'sh', '-c', 'echo hi > hi.txt'], clone, env)
      expect(r.status).toBe(0)
      expect(r.stderr).toContain('omh: hello on omh/s01')
      expect(r.stdout).toContain('hello from session s01: agent (uid 1000) in /work')
      expect(r.stdout).toContain('# Testing')
      expect(readdirSync(path.join(xdg, 'omh')).sort()).toEqual(['run', 'shadow', 'worktrees'])
      expect((await omh(['sessions', 'diff', '--stat'], clone, env)).stdout).toContain('hi.txt')
      // Ignored files too: a worktree inside the checkout is what broke lint, gitignored or not.
      expect(git(clone, 'status', '--porcelain', '--ignored')).toBe('')
      expect((await omh(['sessions', 'rm', 's01', '--force'], clone, env)).status).toBe(0)
      expect(git(clone, 'status', '--porcelain', '--ignored')).toBe('')
    } finally {
      for (const engine of ENGINES) {
        const tags = spawnSync(engine, ['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', 'label=omh.adapter=hello'], { encoding: 'utf8' })
        for (const tag of tags.stdout.split('\n').filter(Boolean)) spawnSync(engine, ['rmi', tag])
      }
      rmSync(path.dirname(clone), { recursive: true, force: true })
      rmSync(xdg, { recursive: true, force: true })
    }
  })
})
