import type { ContainerSpec } from '@omh/plugin-api'
import type { Limits, MountContent } from '../src/manifests.js'

const text = (s: string) => new TextEncoder().encode(s)

/** How omh runs every session container: the agent's IDs in /work, a keeper process, hardened. */
export const SESSION_SHAPE = {
  workdir: '/work',
  user: '1000:1000',
  argv: ['sleep', 'infinity'],
  capDrop: ['ALL'],
  noNewPrivileges: true,
  init: true,
} as const satisfies Partial<ContainerSpec>

/** A session as omh plans it: worktree, shadow git directory and a credential file writable, the rendered profile read-only. */
export const sessionSpec: ContainerSpec & { limits: Limits } = {
  image: 'registry.example.com/omh/omh-claude:0123456789abcdef',
  name: 'omh-3f2a9c0d1e4b-s01',
  mounts: [
    { host: '/home/me/.omh/state/worktrees/3f2a/s01', guest: '/work', readOnly: false },
    { host: '/home/me/.omh/state/shadow/3f2a/s01', guest: '/omh/shadow', readOnly: false },
    { host: '/home/me/.omh/state/creds/claude/default/.claude.json', guest: '/home/agent/.claude.json', readOnly: false },
    { host: '/home/me/.omh/state/run/3f2a/s01/claude/home/agent/.claude/CLAUDE.md', guest: '/home/agent/.claude/CLAUDE.md', readOnly: true },
    { host: '/home/me/.omh/state/run/3f2a/s01/claude/home/agent/.claude/agents', guest: '/home/agent/.claude/agents', readOnly: true },
  ],
  env: { HOME: '/home/agent', OMH_SESSION: 's01', GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '/work', API_TOKEN: 'secret-value' },
  labels: { 'omh.repo': '3f2a9c0d1e4b', 'omh.session': 's01', 'omh.harness': 'claude', 'omh.plan': 'a1b2c3d4e5f60718', 'omh.worktree': '/home/me/.omh/state/worktrees/3f2a/s01' },
  ...SESSION_SHAPE,
  limits: { memory: 2 * 1024 ** 3, pids: 2048, cpus: 1.5 },
}

export const sessionContent: MountContent[] = [
  { guest: '/home/agent/.claude.json', kind: 'file', files: [] },
  { guest: '/home/agent/.claude/CLAUDE.md', kind: 'file', files: [{ path: '', content: text('# Rules\n\nBe brief.\n'), executable: false }] },
  {
    guest: '/home/agent/.claude/agents',
    kind: 'directory',
    files: [
      { path: 'reviewer.md', content: text('---\nname: reviewer\n---\nReview.\n'), executable: false },
      { path: 'tools/lint.sh', content: text('#!/bin/sh\nexit 0\n'), executable: true },
      { path: 'tools/blob.bin', content: new Uint8Array([0, 255, 128, 1]), executable: false },
    ],
  },
]

/** A one-shot container with nothing writable and no environment. */
export const bareSpec: ContainerSpec = {
  image: 'registry.example.com/omh/omh-base:fedcba9876543210',
  name: 'omh-doctor-1',
  mounts: [{ host: '/tmp/x/hello.txt', guest: '/work/hello.txt', readOnly: true }],
  env: {},
  labels: { 'omh.doctor': '1' },
  workdir: '/work',
  user: '1000:1000',
  argv: ['cat', '/work/hello.txt'],
  capDrop: ['ALL'],
  noNewPrivileges: true,
}

export const bareContent: MountContent[] = [{ guest: '/work/hello.txt', kind: 'file', files: [{ path: '', content: text('hello\n'), executable: false }] }]

/** A session of the copied way: the worktree, the sandbox repository and the staged profile in claims, no host mounts. */
export const copiedSpec: ContainerSpec = {
  ...sessionSpec,
  mounts: [],
  volumes: [
    { volume: 'omh-3f2a9c0d1e4b-s01-work', guest: '/work', readOnly: false },
    { volume: 'omh-3f2a9c0d1e4b-s01-repo', guest: '/omh/shadow', readOnly: false },
    { volume: 'omh-3f2a9c0d1e4b-s01-staged', guest: '/omh/staged', readOnly: true },
  ],
}
