import { execFileSync } from 'node:child_process'
import { readFileSync, symlinkSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { gitRepo, testdir } from '@omh/test-utils'

// An extension that exists only in this project's node_modules, named by the
// project's settings: it writes what it saw to $AUDIT_LOG, labels every
// planned container, and throws where $AUDIT_THROW names a hook.
const AUDIT = `
import { appendFileSync } from 'node:fs'
const log = (line) => appendFileSync(process.env.AUDIT_LOG, line + '\\n')
const boom = (hook) => { if (process.env.AUDIT_THROW === hook) throw new Error('audit store unreachable') }
export default {
  kind: 'extension',
  apiVersion: 1,
  meta: { name: 'omh-extension-audit', version: '0.2.0' },
  apply(hooks) {
    hooks.beforeLaunch.tap('audit', async (plan) => {
      boom('beforeLaunch')
      log('beforeLaunch ' + plan.harness + ' ' + plan.session + ' ' + plan.exec.join(' '))
      return { ...plan, spec: { ...plan.spec, labels: { ...plan.spec.labels, 'audit.seen': 'yes' } } }
    })
    hooks.launched.tap('audit', (plan, status) => log('launched ' + plan.session + ' ' + status))
    hooks.failed.tap('audit', (error) => {
      boom('failed')
      log('failed ' + error.code)
    })
  },
}
`

function project() {
  const root = gitRepo({
    'README.md': 'hi\n',
    '.omh/settings.toml': 'plugins = ["omh-extension-audit"]\n',
    'node_modules/omh-extension-audit/package.json': JSON.stringify({
      name: 'omh-extension-audit',
      version: '0.2.0',
      type: 'module',
      exports: { '.': { import: './index.js' } },
    }),
    'node_modules/omh-extension-audit/index.js': AUDIT,
  })
  const home = testdir()
  const log = path.join(testdir(), 'audit.log')
  const env = { OMH_HOME: home, AUDIT_LOG: log }
  // The project's settings load code: the user trusts it first.
  expect(omh(['trust'], { cwd: root, env }).status).toBe(0)
  return { root, log, env }
}

const lines = (file: string) => {
  try {
    return readFileSync(file, 'utf8').trim().split('\n')
  } catch {
    return []
  }
}

describe('an extension plugin', () => {
  it('is listed, and taps beforeLaunch: a dry run shows the plan its tap changed', () => {
    const { root, log, env } = project()
    const plugins = omh(['plugins', '--json'], { cwd: root, env })
    expect(plugins.json().result.plugins).toContainEqual(expect.objectContaining({ name: 'omh-extension-audit', kind: 'extension' }))
    const r = omh(['--dry-run', '--json', 'claude', '-p', 'hi'], { cwd: root, env })
    expect(r.status).toBe(0)
    expect(r.json().result.container.labels).toMatchObject({ 'audit.seen': 'yes' })
    expect(lines(log)).toEqual(['beforeLaunch claude s01 claude --allowedTools=Grep(./**),Glob(./**) -p hi'])
  })

  it('hears every failed launch through failed, early or late', () => {
    const { root, log, env } = project()
    expect(omh(['claud'], { cwd: root, env }).status).toBe(2)
    // No engine on PATH: the launch fails after the session was picked.
    const bin = testdir()
    for (const tool of ['git', 'sh']) symlinkSync(execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), path.join(bin, tool))
    expect(omh(['claude'], { cwd: root, env: { ...env, PATH: bin } }).status).toBe(1)
    expect(lines(log)).toEqual(['failed ADAPTER_NOT_FOUND', 'failed RUNTIME_NOT_FOUND'])
  })

  it("is blamed by name when a tap throws, and a failed tap never hides the launch's own error", () => {
    const { root, env } = project()
    const before = omh(['--dry-run', 'claude'], { cwd: root, env: { ...env, AUDIT_THROW: 'beforeLaunch' } })
    expect(before.status).toBe(1)
    expect(before.stderr).toContain('omh-extension-audit failed in Kernel.hooks.beforeLaunch: audit store unreachable')
    expect(before.stderr).toContain('Code: PLUGIN_ERROR')
    const failed = omh(['claud'], { cwd: root, env: { ...env, AUDIT_THROW: 'failed' } })
    expect(failed.status).toBe(2)
    expect(failed.stderr).toContain('Code: ADAPTER_NOT_FOUND')
    expect(failed.stderr).toContain('omh-extension-audit failed in Kernel.hooks.failed: audit store unreachable')
  })
})
