import { failure } from '@omh/test-utils'
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { gitRepo, testdir } from '@omh/test-utils'
import { fakeRuntime, type FakeRuntime } from '@omh/test-utils'
import { isOmhError, GUEST_WORK, type ContainerSpec } from '@omh/plugin-api'
import { Kernel } from '@omh/kernel'
import { doctor, type DoctorHost } from './run.js'
import type { RunnerReport } from './runner.js'

const g = globalThis as { __omhFakeRuntime?: FakeRuntime }
const saved = { GIT_DIR: process.env['GIT_DIR'] }
afterEach(() => {
  delete g.__omhFakeRuntime
  if (saved.GIT_DIR === undefined) delete process.env['GIT_DIR']
  else process.env['GIT_DIR'] = saved.GIT_DIR
})

const renderer = `export default { kind: 'renderer', apiVersion: 1, meta: { name: 'r', version: '0' }, formats: ['r'], classes: ['rules'],
  render(input) { return { files: input.items.length ? [{ kind: 'file', guest: input.binding.path, content: input.items.map((i) => i.text).join('\\n') }] : [], dropped: [] } } }\n`

const EMPTY_REPORT: RunnerReport = { digest: {}, syntax: {}, bins: {}, renames: {}, probes: {} }

/** A kernel whose only runtime is a fake that, asked to run the doctor's container, lists what `/work` holds. */
async function setup(env: Record<string, string | undefined> = {}, files: Record<string, string> = {}) {
  const dir = testdir({
    ...files,
    'omh/defaults.toml': 'plugins = ["./r.mjs", "./fake.mjs"]\nruntime = "fake"\n',
    'omh/r.mjs': renderer,
    'omh/fake.mjs': 'export default globalThis.__omhFakeRuntime\n',
    'omh/adapters/h.toml': 'name = "h"\nbin = "h-bin"\ninstall = "true"\ncreds = ["$HOME/.h/"]\n[capabilities.rules]\npath = "/work/RULES.md"\nrender = "r"\n',
    'home/rules/style.md': 'Be brief.\n',
  })
  const root = gitRepo({ 'README.md': 'the checkout\n', 'src/a.txt': 'a\n' })
  const fake = fakeRuntime()
  const seen: { work?: string[]; readme?: string } = {}
  fake.run = async (spec: ContainerSpec) => {
    const work = spec.mounts.find((m) => m.guest === GUEST_WORK)!.host
    seen.work = readdirSync(work, { recursive: true, encoding: 'utf8' }).sort()
    seen.readme = readFileSync(path.join(work, 'README.md'), 'utf8')
    return { exitCode: 0, stdout: JSON.stringify(EMPTY_REPORT), stderr: '' }
  }
  g.__omhFakeRuntime = fake
  const kernel = await Kernel.create({
    cwd: root,
    env: { ...process.env, OMH_HOME: path.join(dir, 'home'), OMH_STATE: path.join(dir, 'state'), ...env },
    defaultsFile: path.join(dir, 'omh/defaults.toml'),
    bundledAdapters: path.join(dir, 'omh/adapters'),
  })
  const host: DoctorHost = { context: { env: process.env, progress: () => undefined, verbose: false }, notice: () => undefined, images: { from: 'omh-test/base:1' } }
  return { root, kernel, host, seen }
}

describe('doctor', () => {
  it("gives /work the base commit's files, although the environment names another repository", async () => {
    const other = gitRepo({ 'OTHER.md': 'not this one\n' })
    const gitDir = path.join(other, '.git')
    const t = await setup({ GIT_DIR: gitDir })
    // Inherited from a git hook or an editor's terminal (set only now: the fixtures' own git follows it).
    process.env['GIT_DIR'] = gitDir
    const report = await doctor(t.kernel, { harness: 'h' }, t.host)
    expect(report.harness).toBe('h')
    expect(t.seen.work).toEqual(expect.arrayContaining(['README.md', 'src', path.join('src', 'a.txt')]))
    expect(t.seen.work).not.toContain('OTHER.md')
    expect(t.seen.readme).toBe('the checkout\n')
  })

  it('blames the settings file, not --runtime, for an engine no plugin drives', async () => {
    const t = await setup({}, { 'home/settings.toml': 'runtime = "nope"\n' })
    const error = await failure(() => doctor(t.kernel, { harness: 'h' }, t.host))
    expect(error.code).toBe('RUNTIME_UNKNOWN')
    expect(error.message).toContain('settings.toml')
    expect(error.message).not.toContain('--runtime')
  })

  it('reports a base commit git cannot archive as GIT_FAILED, and leaves no scratch place', async () => {
    const t = await setup()
    const blob = execFileSync('git', ['rev-parse', 'HEAD:README.md'], { cwd: t.root, encoding: 'utf8' }).trim()
    rmSync(path.join(t.root, '.git/objects', blob.slice(0, 2), blob.slice(2)), { force: true })
    const error = await failure(() => doctor(t.kernel, { harness: 'h' }, t.host))
    expect(error.code).toBe('GIT_FAILED')
    expect(error.exit).toBe(1)
    expect(error.message).toContain('main')
    expect(readdirSync(path.join(t.kernel.omhState, 'scratch'))).toEqual([])
  })

  it('reports a tar that cannot run as an OmhError, and leaves no scratch place', async () => {
    // A PATH with git and nothing else: tar is missing.
    const bin = testdir()
    symlinkSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), path.join(bin, 'git'))
    const t = await setup({ PATH: bin })
    const error = await failure(() => doctor(t.kernel, { harness: 'h' }, t.host))
    expect(isOmhError(error)).toBe(true)
    expect(error.code).toBe('DOCTOR_WORKSPACE_FAILED')
    expect(error.exit).toBe(1)
    expect(error.message).toContain('tar')
    expect(readdirSync(path.join(t.kernel.omhState, 'scratch'))).toEqual([])
  })
})
