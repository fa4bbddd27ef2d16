import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { isOmhError, type OmhError } from '@omh/plugin-api'
import { chooseDevcontainer, readDevcontainer } from './devcontainer.js'

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'omh-devc-'))
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.join(root, path.dirname(file)), { recursive: true })
    writeFileSync(path.join(root, file), text)
  }
  return root
}

const failure = (fn: () => unknown): OmhError => {
  try {
    fn()
  } catch (error) {
    if (isOmhError(error)) return error
    throw error
  }
  throw new Error('it did not fail')
}

describe('which devcontainer.json', () => {
  it('auto takes .devcontainer/devcontainer.json, then .devcontainer.json, then the only named one', () => {
    const both = repo({ '.devcontainer/devcontainer.json': '{}', '.devcontainer.json': '{}' })
    expect(chooseDevcontainer(both, undefined)).toEqual({ file: path.join(both, '.devcontainer/devcontainer.json') })
    const top = repo({ '.devcontainer.json': '{}' })
    expect(chooseDevcontainer(top, 'auto')).toEqual({ file: path.join(top, '.devcontainer.json') })
    const named = repo({ '.devcontainer/python/devcontainer.json': '{}' })
    expect(chooseDevcontainer(named, 'auto')).toEqual({ file: path.join(named, '.devcontainer/python/devcontainer.json') })
    expect(chooseDevcontainer(repo({}), 'auto')).toEqual({ none: undefined })
  })

  it('several named ones need a name, and a name picks one; none turns it off', () => {
    const root = repo({ '.devcontainer/a/devcontainer.json': '{}', '.devcontainer/b/devcontainer.json': '{}' })
    expect(chooseDevcontainer(root, 'auto')).toEqual({ none: '.devcontainer/ holds 2 (a, b): name one with [image] devcontainer' })
    expect(chooseDevcontainer(root, 'b')).toEqual({ file: path.join(root, '.devcontainer/b/devcontainer.json') })
    expect(chooseDevcontainer(root, 'c')).toEqual({ none: '[image] devcontainer = "c" names .devcontainer/c/devcontainer.json, which is not there' })
    expect(chooseDevcontainer(repo({ '.devcontainer.json': '{}' }), 'none')).toEqual({ none: undefined })
  })
})

describe('reading a devcontainer.json', () => {
  it('honours image, variables, the create commands in every form, ports and the user, and names the rest', () => {
    const root = repo({
      '.devcontainer/devcontainer.json': `// a comment, as VS Code writes them
{
  "name": "app",
  "image": "mcr.microsoft.com/devcontainers/python:3.12",
  "containerEnv": { "APP_MODE": "test", "PATH": "\${containerEnv:PATH}:/work/bin" },
  "remoteEnv": { "WORK": "\${containerWorkspaceFolder}/x", "DROPPED": null },
  "onCreateCommand": "pip install -e .",
  "updateContentCommand": ["npm", "ci"],
  "postCreateCommand": { "a": "make", "b": ["echo", "b"] },
  "forwardPorts": [3000, "8080", "db:5432"],
  "remoteUser": "vscode",
  "containerUser": "root",
  "features": { "ghcr.io/devcontainers/features/node:1": {} },
  "runArgs": ["--privileged"],
  "mounts": [],
  "privileged": true,
  "capAdd": ["SYS_PTRACE"],
  "customizations": {},
}`,
    })
    const d = readDevcontainer(path.join(root, '.devcontainer/devcontainer.json'), root)
    expect(d.image).toBe('mcr.microsoft.com/devcontainers/python:3.12')
    expect(d.build).toBeUndefined()
    expect(d.env).toEqual({ APP_MODE: 'test', PATH: '${PATH}:/work/bin', WORK: '/work/x' })
    expect(d.create).toEqual([
      { key: 'onCreateCommand', command: 'pip install -e .' },
      { key: 'updateContentCommand', command: ['npm', 'ci'] },
      { key: 'postCreateCommand', command: { a: 'make', b: ['echo', 'b'] } },
    ])
    expect(d.forwardPorts).toEqual([3000, 8080])
    expect(d.user).toBe('vscode')
    expect(d.unsupported.map((u) => u.key)).toEqual(['capAdd', 'customizations', 'features', 'mounts', 'privileged', 'runArgs', 'forwardPorts[2]'])
    expect(d.unsupported.find((u) => u.key === 'privileged')?.why).toBe('a session never runs privileged')
  })

  it('resolves a build against the file, inside the repository, with args and target', () => {
    const root = repo({ '.devcontainer/devcontainer.json': '{"build": {"dockerfile": "Containerfile", "context": "..", "args": {"V": "3"}, "target": "dev"}}', '.devcontainer/Containerfile': 'FROM x\n' })
    expect(readDevcontainer(path.join(root, '.devcontainer/devcontainer.json'), root).build).toEqual({
      dockerfile: path.join(root, '.devcontainer/Containerfile'),
      context: root,
      args: { V: '3' },
      target: 'dev',
    })
    const legacy = repo({ '.devcontainer.json': '{"dockerFile": "Dockerfile"}' })
    expect(readDevcontainer(path.join(legacy, '.devcontainer.json'), legacy).build).toEqual({ dockerfile: path.join(legacy, 'Dockerfile'), context: legacy, args: {} })
  })

  it('refuses a build that reaches outside the repository, naming the key and its line', () => {
    const root = repo({ '.devcontainer/devcontainer.json': '{\n  "build": {\n    "dockerfile": "../../etc/Dockerfile"\n  }\n}' })
    const error = failure(() => readDevcontainer(path.join(root, '.devcontainer/devcontainer.json'), root))
    expect(error.code).toBe('SETTINGS_INVALID')
    expect(error.problems).toEqual([expect.objectContaining({ line: 3, path: 'build.dockerfile', message: '"../../etc/Dockerfile" leads outside the repository' })])
  })

  it('bad JSONC is SETTINGS_INVALID with file, line and column', () => {
    const root = repo({ '.devcontainer.json': '{\n  "image": "x",\n  "containerEnv": { "A": 1 \n}' })
    const file = path.join(root, '.devcontainer.json')
    const error = failure(() => readDevcontainer(file, root))
    expect(error.code).toBe('SETTINGS_INVALID')
    expect(error.exit).toBe(2)
    expect(error.problems?.[0]).toMatchObject({ file, line: 4, column: 2 })
  })

  it("carries none of this machine's variables in, naming the value it dropped", () => {
    const root = repo({ '.devcontainer.json': '{"image": "x", "containerEnv": {"TOKEN": "${localEnv:GITHUB_TOKEN}", "KEEP": "1"}}' })
    const d = readDevcontainer(path.join(root, '.devcontainer.json'), root)
    expect(d.env).toEqual({ KEEP: '1' })
    expect(d.unsupported).toEqual([{ key: 'containerEnv.TOKEN', why: "${localEnv:GITHUB_TOKEN} would carry this machine's GITHUB_TOKEN into the sandbox; use [secrets] for what a session needs" }])
  })

  it('refuses a value with a control character, a non-string variable and a bad command', () => {
    const root = repo({ '.devcontainer.json': '{"image": "x\\ny", "containerEnv": {"A": 1}, "postCreateCommand": 5}' })
    const error = failure(() => readDevcontainer(path.join(root, '.devcontainer.json'), root))
    expect(error.problems?.map((p) => p.path)).toEqual(['image', 'containerEnv.A', 'postCreateCommand'])
  })

  it('reads no file through a link out of the repository', () => {
    const outside = repo({ 'devcontainer.json': '{"image": "x"}' })
    const root = repo({})
    symlinkSync(path.join(outside, 'devcontainer.json'), path.join(root, '.devcontainer.json'))
    expect(failure(() => readDevcontainer(path.join(root, '.devcontainer.json'), root)).code).toBe('FILE_OUTSIDE_TREE')
  })
})
