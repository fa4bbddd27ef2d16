// Both runtime plugins against fake clients on PATH: what each says when its
// engine is missing, not answering or refusing, that the caller's environment
// (a remote engine's address) reaches the client, and how failures surface.
// The real engines are exercised by test/e2e.
import { chmodSync, chownSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { ContainerSpec, RuntimeContext, RuntimePlugin } from '@omh/plugin-api'
import { describe, expect, it } from 'vitest'
import { testdir } from '@omh/test-utils'
import docker from '../../runtime-docker/src/index.js'
import podman from '../../runtime-podman/src/index.js'

/**
 * A client that logs its arguments and the variables that pick an engine,
 * then answers `version` with $FAKE_VERSION, or fails as $FAKE_FAIL says.
 */
const client = `#!/bin/sh
echo "$* | DOCKER_HOST=$DOCKER_HOST CONTAINER_HOST=$CONTAINER_HOST DOCKER_BUILDKIT=$DOCKER_BUILDKIT SECRET=$SECRET" >>"$FAKE_LOG"
case "$1" in
  version) if [ -n "$FAKE_FAIL" ]; then echo "$FAKE_FAIL" >&2; exit 1; fi; echo "$FAKE_VERSION" ;;
  buildx) [ -n "$FAKE_BUILDX" ] || { echo "unknown command: docker buildx" >&2; exit 1; } ;;
  build) while read -r _; do :; done; echo "Step 1/2 : FROM x"; echo "step failed" >&2; exit "\${FAKE_BUILD_EXIT:-0}" ;;
  run) echo "Error: no such image" >&2; exit "\${FAKE_RUN_EXIT:-0}" ;;
  image) echo "Error response from daemon: No such image: $5" >&2; exit 1 ;;
  rm) echo "Error response from daemon: No such container: $3" >&2; exit 1 ;;
  inspect)
    if [ -n "$FAKE_FAIL" ]; then echo "$FAKE_FAIL" >&2; exit 1; fi
    if [ "$4" = there ]; then echo '[{"Id":"abc","Name":"/there","State":{"Running":true},"Config":{"Image":"i:1","Labels":{"omh.plan":"p1"}},"NetworkSettings":{"Ports":{"2222/tcp":[{"HostIp":"127.0.0.1","HostPort":"32768"}],"80/tcp":null,"53/udp":[{"HostIp":"127.0.0.1","HostPort":"5353"}]}}}]'; exit 0; fi
    if [ "$4" = stopped ]; then echo '[{"Id":"def","Name":"/stopped","State":{"Running":false},"Config":{"Image":"i:1","Labels":null},"NetworkSettings":{"Ports":{}}}]'; exit 0; fi
    echo '[]'; echo "Error: no such container $4" >&2; exit 1 ;;
esac
`

function fake(program: string, env: Record<string, string> = {}) {
  const dir = testdir({ [`bin/${program}`]: client, log: '' })
  chmodSync(path.join(dir, 'bin', program), 0o755)
  const lines: string[] = []
  const context: RuntimeContext = {
    env: { PATH: path.join(dir, 'bin'), FAKE_LOG: path.join(dir, 'log'), ...env },
    progress: (line) => lines.push(line),
    verbose: false,
  }
  return { context, lines, log: () => readFileSync(path.join(dir, 'log'), 'utf8').trim().split('\n') }
}

const engines: [string, RuntimePlugin, Record<string, string>, string][] = [
  ['docker', docker, { FAKE_VERSION: '{"Client":{"Context":"default"},"Server":{"Version":"27.1.0"}}' }, '27.1.0'],
  ['podman', podman, { FAKE_VERSION: '{"Client":{"Version":"5.2.0"}}' }, '5.2.0'],
]

describe.each(engines)('%s against a fake client', (_, runtime, answers, version) => {
  const program = runtime.engine

  it('detect answers the engine version', async () => {
    expect(await runtime.detect(fake(program, answers).context)).toEqual({ engine: program, version })
  })

  it('detect says the client is not installed, and how to get it', async () => {
    const { context } = fake('unrelated')
    const found = await runtime.detect(context)
    expect(found).toMatchObject({ engine: program, reason: `not installed (no \`${program}\` on PATH)` })
    expect('hint' in found && found.hint).toMatch(/^Install /)
  })

  it('detect says the engine does not answer, with the client complaint and what to start', async () => {
    const { context } = fake(program, { FAKE_FAIL: 'Error: Cannot connect to the engine at unix:///run/x.sock. Is it running?' })
    const found = await runtime.detect(context)
    expect(found).toMatchObject({
      reason: 'installed, but the engine does not answer (Cannot connect to the engine at unix:///run/x.sock. Is it running?)',
    })
    expect('hint' in found && found.hint).toMatch(/^Start /)
  })

  it('detect says when this user may not use the engine', async () => {
    const { context } = fake(program, {
      FAKE_FAIL: 'permission denied while trying to connect to the daemon socket at unix:///var/run/x.sock',
    })
    expect(await runtime.detect(context)).toMatchObject({ reason: expect.stringMatching(/^installed, but this user may not use the engine \(/) })
  })

  it('a failing build streams its output and fails with IMAGE_BUILD_FAILED and the client error as cause', async () => {
    const { context, lines, log } = fake(program, { FAKE_BUILD_EXIT: '3' })
    const recipe = { tag: 'localhost/omh-base:0123', containerfile: 'FROM x\n', labels: { 'omh.kind': 'base' }, network: 'host' }
    const error = (await runtime.build(recipe, context).catch((e: unknown) => e)) as Error & { cause: { shortMessage: string } }
    expect(error).toMatchObject({ code: 'IMAGE_BUILD_FAILED', exit: 1 })
    expect(error.message).toMatch(new RegExp(`^${program} could not build the image localhost/omh-base:0123: Command failed with exit code 3: ${program} build`))
    expect(error.cause.shortMessage).toMatch(/^Command failed with exit code 3/)
    expect(lines).toEqual(['Step 1/2 : FROM x', 'step failed'])
    expect(log().at(-1)).toMatch(/^build -t localhost\/omh-base:0123 .*--label omh.kind=base --network host -f - \/\S+\/context \|/)
  })

  it('a run the engine refuses (exit 125) is CONTAINER_FAILED; a missing image is false, a missing container is gone', async () => {
    const { context } = fake(program, { FAKE_RUN_EXIT: '125' })
    const spec: ContainerSpec = { image: 'i', mounts: [], env: {}, labels: {}, workdir: '/', user: 'agent', argv: ['true'] }
    await expect(runtime.run(spec, context)).rejects.toMatchObject({ code: 'CONTAINER_FAILED', message: expect.stringMatching(new RegExp(`^${program} could not run a container from i: Command failed with exit code 125`)) })
    expect(await runtime.hasImage('localhost/nope:1', context)).toBe(false)
    await expect(runtime.down('gone', context)).resolves.toBeUndefined()
  })

  it('inspect finds a container by name with the TCP ports it publishes, says when there is none, and fails when the engine does not answer', async () => {
    expect(await runtime.inspect!('there', fake(program).context)).toEqual({
      id: 'abc',
      name: 'there',
      running: true,
      image: 'i:1',
      labels: { 'omh.plan': 'p1' },
      ports: [{ guest: 2222, host: 32768, hostIp: '127.0.0.1' }],
    })
    expect(await runtime.inspect!('stopped', fake(program).context)).toEqual({ id: 'def', name: 'stopped', running: false, image: 'i:1', labels: {}, ports: [] })
    expect(await runtime.inspect!('absent', fake(program).context)).toBeUndefined()
    const silent = fake(program, { FAKE_FAIL: 'Cannot connect to the engine' })
    await expect(runtime.inspect!('there', silent.context)).rejects.toMatchObject({
      code: 'CONTAINER_FAILED',
      message: expect.stringMatching(new RegExp(`^${program} could not inspect the container there: Command failed with exit code 1: ${program} inspect`)),
    })
    await expect(runtime.inspect!('there', fake('unrelated').context)).rejects.toMatchObject({ code: 'CONTAINER_FAILED' })
  })

  it('a process exit status other than 125 is the answer, not a failure', async () => {
    const { context } = fake(program, { FAKE_RUN_EXIT: '7' })
    const spec: ContainerSpec = { image: 'i', mounts: [], env: { SECRET: 's3cret' }, labels: {}, workdir: '/', user: 'agent', argv: ['true'] }
    expect(await runtime.run(spec, context)).toEqual({ exitCode: 7, stdout: '', stderr: 'Error: no such image\n' })
  })

  it('environment values reach the client through its environment, not its arguments', async () => {
    const { context, log } = fake(program)
    const spec: ContainerSpec = { image: 'i', mounts: [], env: { SECRET: 's3cret' }, labels: {}, workdir: '/', user: 'agent', argv: ['true'] }
    await runtime.run(spec, context)
    expect(log().at(-1)).toMatch(/^run --rm --pull=never -e SECRET -w \/ -u agent i true \| .* SECRET=s3cret$/)
  })
})

describe('remote engines', () => {
  it('docker reports DOCKER_HOST as its endpoint and the client sees it', async () => {
    const { context, log } = fake('docker', { ...engines[0]![2], DOCKER_HOST: 'tcp://build.example:2376' })
    expect(await docker.detect(context)).toEqual({ engine: 'docker', version: '27.1.0', endpoint: 'tcp://build.example:2376' })
    expect(log()[0]).toContain('DOCKER_HOST=tcp://build.example:2376')
  })

  it('docker reports a named context as its endpoint', async () => {
    const { context } = fake('docker', { FAKE_VERSION: '{"Client":{"Context":"work"},"Server":{"Version":"27.1.0"}}' })
    expect(await docker.detect(context)).toEqual({ engine: 'docker', version: '27.1.0', endpoint: 'context work' })
  })

  it('an unreachable remote is named in the reason', async () => {
    const { context } = fake('docker', { DOCKER_HOST: 'tcp://gone.example:2376', FAKE_FAIL: 'Cannot connect' })
    expect(await docker.detect(context)).toMatchObject({ reason: 'installed, but the engine at tcp://gone.example:2376 does not answer (Cannot connect)' })
  })

  it('podman reports CONTAINER_HOST and the server version', async () => {
    const { context, log } = fake('podman', {
      CONTAINER_HOST: 'ssh://me@box/run/podman/podman.sock',
      FAKE_VERSION: '{"Client":{"Version":"5.2.0"},"Server":{"Version":"4.9.4"}}',
    })
    expect(await podman.detect(context)).toEqual({ engine: 'podman', version: '4.9.4', endpoint: 'ssh://me@box/run/podman/podman.sock' })
    expect(log()[0]).toContain('CONTAINER_HOST=ssh://me@box/run/podman/podman.sock')
  })
})

describe("the host user's files", () => {
  const spec = (user: string, hostUser = { uid: 1100, gid: 1200 }): ContainerSpec => ({ image: 'i', mounts: [], env: {}, labels: {}, workdir: '/', user, argv: ['true'], hostUser })
  const userns = (line: string | undefined) => line?.split(' ').filter((a) => a.startsWith('--userns'))

  it('rootless podman (a local client run by someone other than root) maps the host user onto the container user', async () => {
    const { context, log } = fake('podman')
    await podman.run(spec('1100:1200'), context)
    expect(userns(log().at(-1))).toEqual(['--userns=keep-id:uid=1100,gid=1200'])
    await podman.up(spec('1000:1000'), context)
    expect(userns(log().at(-1))).toEqual(['--userns=keep-id:uid=1000,gid=1000'])
  })

  it("rootless podman reached through the user's own socket maps the user too; through root's it shares the host's IDs", async () => {
    const dir = testdir()
    const socket = path.join(dir, 'podman.sock')
    writeFileSync(socket, '')
    const me = process.getuid?.() === 0 ? 4242 : process.getuid!()
    if (process.getuid?.() === 0) chownSync(socket, me, me)
    const own = fake('podman', { CONTAINER_HOST: `unix://${socket}` })
    await podman.run(spec(`${me}:${me}`, { uid: me, gid: me }), own.context)
    expect(userns(own.log().at(-1))).toEqual([`--userns=keep-id:uid=${me},gid=${me}`])
    const rootful = fake('podman', { CONTAINER_HOST: 'unix:///run/podman/podman.sock' })
    await podman.run(spec('1100:1200'), rootful.context)
    expect(userns(rootful.log().at(-1))).toEqual([])
  })

  it("docker shares the host's IDs: the agent that is the host user needs no mapping", async () => {
    const { context, log } = fake('docker')
    await docker.run(spec('1100:1200'), context)
    expect(log().at(-1)).toMatch(/^run --rm --pull=never -w \/ -u 1100:1200 i true /)
  })

  it('an engine sharing the host IDs refuses to show the host user as another user, naming both', async () => {
    const failure = await docker.up(spec('1000:1000'), fake('docker').context).catch((e: unknown) => e)
    expect(failure).toMatchObject({ code: 'CONTAINER_FAILED' })
    expect((failure as Error).message).toBe(
      "docker could not start a container as 1000:1000 for the host user 1100:1200: docker gives containers the host's user IDs, so files of 1100:1200 cannot appear as 1000:1000's",
    )
  })

  it('a user named rather than numbered cannot be mapped', async () => {
    const failure = await podman.run(spec('agent'), fake('podman').context).catch((e: unknown) => e)
    expect((failure as Error).message).toMatch(/^podman could not start a container as agent for the host user 1100:1200: /)
  })
})

describe('docker builders', () => {
  const recipe = { tag: 't', containerfile: 'FROM x\n', labels: {} }

  it('uses the legacy builder when the client has no buildx (BuildKit would fail there)', async () => {
    const { context, log } = fake('docker')
    await docker.build(recipe, context)
    expect(log().at(-1)).toMatch(/^build -t t --force-rm -f - .* DOCKER_BUILDKIT=0 /)
  })

  it('uses BuildKit with plain progress when buildx is there, and respects DOCKER_BUILDKIT', async () => {
    const withBuildx = fake('docker', { FAKE_BUILDX: '1' })
    await docker.build(recipe, withBuildx.context)
    expect(withBuildx.log().at(-1)).toMatch(/^build -t t --progress=plain -f - .* DOCKER_BUILDKIT= /)
    const forced = fake('docker', { DOCKER_BUILDKIT: '0', FAKE_BUILDX: '1' })
    await docker.build(recipe, forced.context)
    expect(forced.log()).toHaveLength(1)
    expect(forced.log()[0]).toMatch(/^build -t t --force-rm .* DOCKER_BUILDKIT=0 /)
  })
})

/** A client whose `images` answers as Podman does to two label filters: with every image carrying either. */
const orClient = `#!/bin/sh
echo "$*" >>"$FAKE_LOG"
case "$1" in
  images) echo sha256:aaa; echo sha256:bbb ;;
  image)
    if [ "$2" = rm ]; then exit 0; fi
    echo '[{"Id":"sha256:aaa","RepoTags":["localhost/omh-claude:1"],"Created":"2026-01-01T00:00:00Z","Size":10,"Config":{"Labels":{"omh.kind":"harness","omh.adapter":"claude"}}},{"Id":"sha256:bbb","RepoTags":["localhost/omh-mine:1"],"Created":"2026-01-02T00:00:00Z","Size":20,"Labels":{"omh.kind":"harness","omh.adapter":"mine"}}]' ;;
esac
`

describe.each(engines)('%s images', (_, runtime) => {
  it('are the ones carrying every label asked for, whatever the client matched', async () => {
    const dir = testdir({ [`bin/${runtime.engine}`]: orClient, log: '' })
    chmodSync(path.join(dir, 'bin', runtime.engine), 0o755)
    const context: RuntimeContext = { env: { PATH: path.join(dir, 'bin'), FAKE_LOG: path.join(dir, 'log') }, progress: () => undefined, verbose: false }
    const images = await runtime.images!({ 'omh.kind': 'harness', 'omh.adapter': 'mine' }, context)
    expect(images).toEqual([{ id: 'sha256:bbb', tags: ['localhost/omh-mine:1'], created: '2026-01-02T00:00:00Z', size: 20, labels: { 'omh.kind': 'harness', 'omh.adapter': 'mine' } }])
    expect((await runtime.images!({ 'omh.kind': '' }, context)).map((i) => i.id)).toEqual(['sha256:aaa', 'sha256:bbb'])
    await runtime.removeImage!('localhost/omh-mine:1', context)
    const log = readFileSync(path.join(dir, 'log'), 'utf8')
    expect(log).toContain('images -q --no-trunc --filter label=omh.kind=harness --filter label=omh.adapter=mine')
    expect(log).toContain('image rm localhost/omh-mine:1\n')
  })

  it('are pushed to the registry their tag names', async () => {
    const dir = testdir({ [`bin/${runtime.engine}`]: orClient, log: '' })
    chmodSync(path.join(dir, 'bin', runtime.engine), 0o755)
    const context: RuntimeContext = { env: { PATH: path.join(dir, 'bin'), FAKE_LOG: path.join(dir, 'log') }, progress: () => undefined, verbose: false }
    await runtime.pushImage!('registry.example.com/team/omh-mine:1', context)
    expect(readFileSync(path.join(dir, 'log'), 'utf8')).toContain('push registry.example.com/team/omh-mine:1\n')
  })
})
