import type { ContainerSpec } from '@omh/plugin-api'
import { describe, expect, it } from 'vitest'
import { buildArgs, containerArgs, envFlags, execArgs, listArgs, unmountable } from './args.js'

const spec: ContainerSpec = {
  image: 'localhost/omh-probe:0123456789abcdef',
  name: 'omh-repo-s01',
  mounts: [
    { host: '/h/worktree', guest: '/work', readOnly: false },
    { host: '/h/stage/rules.md', guest: '/work/CLAUDE.md', readOnly: true },
  ],
  env: { OMH_SESSION: 's01' },
  labels: { 'omh.session': 's01', 'omh.plan': 'line one\nline two' },
  workdir: '/work',
  user: 'agent',
  argv: ['sleep', 'infinity'],
  network: 'none',
  ports: [{ host: 50022, guest: 22 }, { guest: 2222 }],
  tty: true,
  interactive: true,
  capDrop: ['ALL'],
  noNewPrivileges: true,
  init: true,
}

describe('containerArgs', () => {
  it('mounts volumes the engine keeps before host paths, read-only as `ro` (which Podman takes as well as Docker)', () => {
    const copied: ContainerSpec = { ...spec, mounts: [], volumes: [{ volume: 'v-work', guest: '/work', readOnly: false }, { volume: 'v-staged', guest: '/omh/copied/staged', readOnly: true }] }
    const args = containerArgs(copied, {}, false).args
    expect(args.filter((_, n) => args[n - 1] === '--mount')).toEqual(['type=volume,source=v-work,target=/work', 'type=volume,source=v-staged,target=/omh/copied/staged,ro'])
  })

  it('translates every field, publishes ports on 127.0.0.1 only (at a free port the engine picks when none is given) and never pulls', () => {
    expect(containerArgs(spec, {}, true)).toEqual({
      args: [
        '--pull=never',
        '--name', 'omh-repo-s01',
        '--init',
        '-i',
        '-t',
        '--mount', 'type=bind,source=/h/worktree,target=/work',
        '--mount', 'type=bind,source=/h/stage/rules.md,target=/work/CLAUDE.md,readonly',
        '-e', 'OMH_SESSION',
        '--label', 'omh.session=s01',
        '--label', 'omh.plan=line one\nline two',
        '-w', '/work',
        '-u', 'agent',
        '--network', 'none',
        '-p', '127.0.0.1:50022:22',
        '-p', '127.0.0.1::2222',
        '--cap-drop', 'ALL',
        '--security-opt', 'no-new-privileges',
        'localhost/omh-probe:0123456789abcdef',
        'sleep', 'infinity',
      ],
      env: { OMH_SESSION: 's01' },
    })
  })

  it('adds nothing the spec does not ask for', () => {
    const bare: ContainerSpec = { image: 'i', mounts: [], env: {}, labels: {}, workdir: '/w', user: '1000:1000', argv: ['true'] }
    expect(containerArgs(bare, {}, true).args).toEqual(['--pull=never', '-w', '/w', '-u', '1000:1000', 'i', 'true'])
  })

  it('gives no terminal to an attached process when omh has none', () => {
    expect(containerArgs(spec, {}, false).args).not.toContain('-t')
  })
})

describe('envFlags', () => {
  it('passes values through the client environment, keeping them off the command line', () => {
    expect(envFlags({ API_KEY: 'secret' }, {})).toEqual({ args: ['-e', 'API_KEY'], env: { API_KEY: 'secret' } })
  })

  it('passes by value a name the client reads itself, or one the host sets differently', () => {
    expect(envFlags({ PATH: '/x', DOCKER_HOST: 'y', TERM: 'dumb', SAME: 'v' }, { TERM: 'xterm', SAME: 'v' })).toEqual({
      args: ['-e', 'PATH=/x', '-e', 'DOCKER_HOST=y', '-e', 'TERM=dumb', '-e', 'SAME'],
      env: { SAME: 'v' },
    })
  })
})

describe('execArgs', () => {
  it('maps options to flags before the container and argv', () => {
    expect(
      execArgs('c1', ['claude', '--resume'], { tty: true, interactive: true, user: 'agent', workdir: '/work', env: { A: '1' } }, {}, true),
    ).toEqual({ args: ['-i', '-t', '-u', 'agent', '-w', '/work', '-e', 'A', 'c1', 'claude', '--resume'], env: { A: '1' } })
    expect(execArgs('c1', ['true'], { tty: true }, {}, false).args).toEqual(['c1', 'true'])
  })
})

describe('buildArgs and listArgs', () => {
  it('builds from stdin against the given context with labels and network', () => {
    const recipe = { tag: 'localhost/omh-base:abc', containerfile: 'FROM x\n', labels: { 'omh.kind': 'base' }, network: 'host' }
    expect(buildArgs(recipe, '/tmp/ctx', ['--force-rm'])).toEqual([
      '-t', 'localhost/omh-base:abc', '--force-rm', '--label', 'omh.kind=base', '--network', 'host', '-f', '-', '/tmp/ctx',
    ])
  })

  it('lists ids of containers running or not, filtered by every label', () => {
    expect(listArgs({ 'omh.repo': 'api-1a2b', 'omh.session': 's01' })).toEqual([
      'ps', '-a', '--no-trunc', '--format', '{{.ID}}', '--filter', 'label=omh.repo=api-1a2b', '--filter', 'label=omh.session=s01',
    ])
  })
})

describe('unmountable', () => {
  it('refuses relative paths and paths a bind mount cannot name', () => {
    expect(unmountable({ host: '/a:b/c', guest: '/x', readOnly: true })).toBeUndefined()
    expect(unmountable({ host: 'rel', guest: '/x', readOnly: true })).toBe('rel is not an absolute path')
    expect(unmountable({ host: '/a,b', guest: '/x', readOnly: true })).toMatch(/contains a comma/)
  })
})
