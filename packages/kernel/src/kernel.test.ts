import { failure } from '@omh/test-utils'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { testdir } from '@omh/test-utils'
import { Kernel } from './kernel.js'
import * as z from 'zod/mini'
import { emptyProfile, type RuntimeContext } from '@omh/plugin-api'

const renderer = (name: string, format: string, body = `return { files: [{ kind: 'file', guest: input.binding.path, content: '${name}' }], dropped: [] }`) =>
  `export default { kind: 'renderer', apiVersion: 1, meta: { name: '${name}', version: '0.0.1' }, formats: ['${format}'], classes: ['rules'], render(input) { ${body} } }\n`

const adapter = (render: string) =>
  `name = "h"\nbin = "h"\ninstall = "true"\n[capabilities.rules]\npath = "/work/AGENTS.md"\nrender = "${render}"\n`

async function kernelIn(files: Record<string, string>): Promise<Kernel> {
  const dir = testdir({ 'adapters/.keep': '', ...files })
  return Kernel.create({
    cwd: path.join(dir, 'repo'),
    env: { OMH_HOME: path.join(dir, 'home'), HOME: dir },
    defaultsFile: path.join(dir, 'defaults.toml'),
    bundledAdapters: path.join(dir, 'adapters'),
  })
}

describe('Kernel plugin loading', () => {
  it('resolves plugins from the directory of the file that names them', async () => {
    const kernel = await kernelIn({
      'defaults.toml': 'plugins = ["./r1.mjs"]\n',
      'r1.mjs': renderer('one', 'one'),
      'home/settings.toml': 'plugins = ["./r2.mjs"]\n',
      'home/r2.mjs': renderer('two', 'two'),
    })
    expect(kernel.plugins.map((p) => [p.plugin.meta.name, p.namedBy.layer])).toEqual([
      ['one', 'defaults'],
      ['two', 'personal'],
    ])
    expect(kernel.formats()).toEqual(['one', 'two'])
  })

  it('asks the most specific layer first, so a user can override a built-in format', async () => {
    const kernel = await kernelIn({
      'defaults.toml': 'plugins = ["./builtin.mjs"]\n',
      'builtin.mjs': renderer('builtin', 'fmt'),
      'home/settings.toml': 'plugins = ["./mine.mjs"]\n',
      'home/mine.mjs': renderer('mine', 'fmt'),
      'adapters/h.toml': adapter('fmt'),
    })
    expect(kernel.rendererFor('fmt')?.plugin.meta.name).toBe('mine')
    const report = await kernel.render(await kernel.adapter('h'), emptyProfile())
    expect(report.files).toEqual([{ kind: 'file', guest: '/work/AGENTS.md', content: 'mine' }])
  })

  it('names a settings file that is a folder, exit 2', async () => {
    const error = await failure(() => kernelIn({ 'home/settings.toml/x': '' }))
    expect([error.code, error.exit]).toEqual(['FILE_NOT_REGULAR', 2])
    expect(error.message).toMatch(/home\/settings\.toml is a directory, not a regular file/)
  })

  it('names the file and the package when a plugin is not installed', async () => {
    const error = await failure(() => kernelIn({ 'home/settings.toml': 'plugins = ["omh-renderer-missing"]\n' }))
    expect(error.code).toBe('PLUGIN_NOT_FOUND')
    expect(error.exit).toBe(2)
    expect(error.message).toMatch(/home\/settings\.toml names the plugin "omh-renderer-missing", which is not installed\.$/)
    expect(error.hint).toMatch(/npm install omh-renderer-missing/)
  })

  it('refuses a module that is not a plugin, listing what is wrong', async () => {
    const error = await failure(() =>
      kernelIn({ 'defaults.toml': 'plugins = ["./x.mjs"]\n', 'x.mjs': 'export default { kind: "renderer", apiVersion: 1, meta: { name: "x" } }\n' }),
    )
    expect(error.code).toBe('PLUGIN_INVALID')
    expect(error.problems.map((p) => p.path)).toEqual(['meta.version', 'formats', 'classes', 'render'])
  })

  it('refuses an API version it does not support, naming the package and both versions', async () => {
    const error = await failure(() =>
      kernelIn({ 'defaults.toml': 'plugins = ["./x.mjs"]\n', 'x.mjs': renderer('omh-renderer-future', 'f').replace('apiVersion: 1', 'apiVersion: 2') }),
    )
    expect(error.code).toBe('PLUGIN_API_UNSUPPORTED')
    expect(error.message).toBe('omh-renderer-future speaks plugin API 2; this omh supports 1.')
  })

  it('reports a module that throws on import with the file that named it', async () => {
    const error = await failure(() => kernelIn({ 'defaults.toml': 'plugins = ["./x.mjs"]\n', 'x.mjs': 'throw new Error("boom")\n' }))
    expect(error.code).toBe('PLUGIN_LOAD_FAILED')
    expect(error.message).toMatch(/x\.mjs \(named in .*defaults\.toml\) could not be loaded: boom$/)
  })

  it('wraps an error thrown inside a renderer with the plugin and hook names', async () => {
    const kernel = await kernelIn({
      'defaults.toml': 'plugins = ["./x.mjs"]\n',
      'x.mjs': renderer('omh-renderer-bad', 'bad', 'throw new TypeError("nope")'),
      'adapters/h.toml': adapter('bad'),
    })
    const error = await failure(async () => kernel.render(await kernel.adapter('h'), emptyProfile()))
    expect(error.code).toBe('PLUGIN_ERROR')
    expect(error.message).toBe('omh-renderer-bad failed in Kernel.hooks.render[bad]: nope')
    expect((error.cause as Error).name).toBe('TypeError')
  })
})

describe('Kernel adapters', () => {
  it('names installed formats when a render string matches none', async () => {
    const kernel = await kernelIn({
      'defaults.toml': 'plugins = ["./r.mjs"]\n',
      'r.mjs': renderer('r', 'concat'),
      'adapters/h.toml': adapter('conact'),
    })
    const error = await failure(() => kernel.adapter('h'))
    expect(error.code).toBe('ADAPTER_INVALID')
    expect(error.problems).toEqual([
      expect.objectContaining({
        line: 6,
        path: 'capabilities.rules.render',
        message: '"conact" matches no installed renderer (installed: concat)',
        suggestion: 'concat',
      }),
    ])
  })

  it('refuses a renderer bound to a class it does not render', async () => {
    const kernel = await kernelIn({
      'defaults.toml': 'plugins = ["./r.mjs"]\n',
      'r.mjs': renderer('r', 'concat'),
      'adapters/h.toml': adapter('concat').replace('capabilities.rules', 'capabilities.mcp'),
    })
    const error = await failure(() => kernel.adapter('h'))
    expect(error.problems[0]!.message).toBe('"concat" (r) renders rules, not mcp')
  })

  it('lets a personal adapter override a bundled one, and suggests near names', async () => {
    const kernel = await kernelIn({
      'defaults.toml': 'plugins = ["./r.mjs"]\n',
      'r.mjs': renderer('r', 'concat'),
      'adapters/h.toml': adapter('concat'),
      'home/adapters/h.toml': adapter('concat').replace('bin = "h"', 'bin = "mine"'),
    })
    expect((await kernel.adapter('h')).bin).toBe('mine')
    const error = await failure(() => kernel.adapter('g'))
    expect(error.code).toBe('ADAPTER_NOT_FOUND')
    expect(error.hint).toMatch(/^Did you mean "h"\?/)
  })
})

describe('Kernel render', () => {
  it('drops every item of a class the adapter does not bind, as unsupported', async () => {
    const kernel = await kernelIn({
      'defaults.toml': 'plugins = ["./r.mjs"]\n',
      'r.mjs': renderer('r', 'concat'),
      'adapters/h.toml': adapter('concat'),
    })
    const profile = { ...emptyProfile(), skills: [{ name: 's', description: 'd', source: '/x/s' }] }
    const report = await kernel.render(await kernel.adapter('h'), profile)
    expect(report.dropped).toEqual([{ capability: 'skills', name: 's', reason: 'unsupported' }])
  })

  it('shows a renderer the whole profile, so one document can agree with another binding', async () => {
    const body = `return { files: [{ kind: 'file', guest: input.binding.path, content: input.profile.skills.map((s) => s.name).join() }], dropped: [] }`
    const kernel = await kernelIn({ 'defaults.toml': 'plugins = ["./r.mjs"]\n', 'r.mjs': renderer('r', 'r', body), 'adapters/h.toml': adapter('r') })
    const profile = { ...emptyProfile(), skills: [{ name: 'a', description: 'd', source: '/x/a' }] }
    const report = await kernel.render(await kernel.adapter('h'), profile)
    expect(report.files).toEqual([{ kind: 'file', guest: '/work/AGENTS.md', content: 'a' }])
  })

  it('refuses two bindings writing one path when nothing combines them', async () => {
    const twice = `${adapter('concat')}[capabilities.skills]\npath = "/work/AGENTS.md"\nrender = "concat"\n`
    const kernel = await kernelIn({
      'defaults.toml': 'plugins = ["./r.mjs"]\n',
      'r.mjs': renderer('r', 'concat').replace("classes: ['rules']", "classes: ['rules', 'skills']"),
      'adapters/h.toml': twice,
    })
    const error = await failure(async () => kernel.render(await kernel.adapter('h'), emptyProfile()))
    expect(error.code).toBe('RENDER_COLLISION')
    expect(error.message).toBe(
      'capabilities.rules and capabilities.skills both write /work/AGENTS.md, and no installed plugin can combine them.',
    )
  })

  it('combines two documents of one syntax through a plugin that offers it', async () => {
    const body = `return { files: [{ kind: 'file', guest: '/x.txt', content: input.capability, syntax: 'lines' }], dropped: [] }`
    const kernel = await kernelIn({
      'defaults.toml': 'plugins = ["./r.mjs"]\n',
      'r.mjs': renderer('r', 'concat', body)
        .replace("classes: ['rules']", "classes: ['rules', 'skills']")
        .replace('render(input)', "combine: { lines: (parts) => ({ ok: true, content: parts.map((p) => p.content).join('+') }) }, render(input)"),
      'adapters/h.toml': `${adapter('concat')}[capabilities.skills]\npath = "/work/y"\nrender = "concat"\n`,
    })
    const report = await kernel.render(await kernel.adapter('h'), emptyProfile())
    expect(report.files).toEqual([{ kind: 'file', guest: '/x.txt', content: 'rules+skills', syntax: 'lines' }])
  })
})

/** A runtime plugin module whose detect answers as told, and records that it was asked. */
const runtime = (engine: string, answer: { version: string } | { reason: string; hint?: string }) =>
  `globalThis.asked ??= []
export default { kind: 'runtime', apiVersion: 1, meta: { name: 'rt-${engine}', version: '0.0.1' }, engine: '${engine}',
  async detect() { globalThis.asked.push('${engine}'); return { engine: '${engine}', ...${JSON.stringify(answer)} } },
  hasImage() {}, build() {}, up() {}, exec() {}, run() {}, list() {}, down() {} }\n`

const runtimeContext: RuntimeContext = { env: {}, progress: () => {}, verbose: false }
const asked = () => (globalThis as { asked?: string[] }).asked ?? []

const two = {
  'defaults.toml': 'runtime = "auto"\nplugins = ["./a.mjs", "./b.mjs"]\n',
  'a.mjs': runtime('alpha', { reason: 'not installed (no `alpha` on PATH)', hint: 'Install alpha' }),
  'b.mjs': runtime('beta', { version: '2.0' }),
}

describe('choosing a runtime', () => {
  beforeEach(() => {
    ;(globalThis as { asked?: string[] }).asked = []
  })

  it('auto asks runtimes in the order the defaults name them and takes the first that answers', async () => {
    const kernel = await kernelIn(two)
    const found = await kernel.resolveRuntime(undefined, runtimeContext)
    expect(found.runtime.engine).toBe('beta')
    expect(found.info).toEqual({ engine: 'beta', version: '2.0' })
    expect(asked()).toEqual(['alpha', 'beta'])
  })

  it('auto asks a runtime named by a more specific layer first', async () => {
    const kernel = await kernelIn({
      ...two,
      'a.mjs': runtime('alpha', { version: '1.0' }),
      'home/settings.toml': 'plugins = ["./c.mjs"]\n',
      'home/c.mjs': runtime('gamma', { version: '3.0' }),
    })
    expect((await kernel.resolveRuntime('auto', runtimeContext)).runtime.engine).toBe('gamma')
    expect(asked()).toEqual(['gamma'])
  })

  it('an engine named in settings is the only one asked', async () => {
    const kernel = await kernelIn({ ...two, 'home/settings.toml': 'runtime = "alpha"\n' })
    const error = await failure(() => kernel.resolveRuntime(undefined, runtimeContext))
    expect(asked()).toEqual(['alpha'])
    expect(error.code).toBe('RUNTIME_NOT_FOUND')
    expect(error.exit).toBe(1)
    expect(error.message).toBe('The container engine "alpha" is not usable here:')
    expect(error.problems).toEqual([{ path: 'alpha', message: 'not installed (no `alpha` on PATH). Install alpha.' }])
    expect(error.hint).toContain('choose another engine (beta)')
  })

  it('the flag wins over settings', async () => {
    const kernel = await kernelIn({ ...two, 'home/settings.toml': 'runtime = "alpha"\n' })
    expect((await kernel.resolveRuntime('beta', runtimeContext, '--runtime')).runtime.engine).toBe('beta')
  })

  it('when nothing answers, says what each engine answered and what to do', async () => {
    const kernel = await kernelIn({ ...two, 'b.mjs': runtime('beta', { reason: 'installed, but the engine does not answer' }) })
    const error = await failure(() => kernel.resolveRuntime('auto', runtimeContext))
    expect(error.code).toBe('RUNTIME_NOT_FOUND')
    expect(error.message).toBe('No container engine answers here (tried alpha, beta):')
    expect(error.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'alpha: not installed (no `alpha` on PATH). Install alpha.',
      'beta: installed, but the engine does not answer.',
    ])
    expect(error.hint).toContain('they are asked in this order: alpha, beta')
  })

  it('an engine no plugin drives is a usage error naming where it was asked for, with a near miss', async () => {
    const kernel = await kernelIn({ ...two, 'home/settings.toml': 'runtime = "betta"\n' })
    const error = await failure(() => kernel.resolveRuntime(undefined, runtimeContext))
    expect(error.code).toBe('RUNTIME_UNKNOWN')
    expect(error.exit).toBe(2)
    expect(error.message).toContain(`${path.join('home', 'settings.toml')} (runtime) asks for the container engine "betta"`)
    expect(error.hint).toMatch(/^Did you mean "beta"\? Installed runtimes: alpha, beta/)
    const flag = await failure(() => kernel.resolveRuntime('alhpa', runtimeContext, '--runtime'))
    expect(flag.message).toMatch(/^--runtime asks for the container engine "alhpa"/)
    expect(asked()).toEqual([])
  })
})

describe('reaching a runtime through a question asked anyway', () => {
  beforeEach(() => {
    ;(globalThis as { asked?: string[] }).asked = []
  })

  /** A probe that answers for the engines named, fails for the others, and records whom it asked. */
  const probeAnswering = (...engines: string[]) => {
    const probed: string[] = []
    const probe = (runtime: { engine: string }) => {
      probed.push(runtime.engine)
      return engines.includes(runtime.engine) ? Promise.resolve(`${runtime.engine} answered`) : Promise.reject(new Error('no answer'))
    }
    return { probe, probed }
  }

  it('takes the first runtime whose probe answers, without detecting it', async () => {
    const kernel = await kernelIn({ ...two, 'a.mjs': runtime('alpha', { version: '1.0' }) })
    const { probe, probed } = probeAnswering('alpha', 'beta')
    const reached = await kernel.resolveRuntime(undefined, runtimeContext, { probe })
    expect(reached).toMatchObject({ probed: true, answer: 'alpha answered' })
    expect(reached.runtime.engine).toBe('alpha')
    expect(probed).toEqual(['alpha'])
    expect(asked()).toEqual([])
  })

  it('detects a runtime whose probe fails, and takes it when the engine answers after all', async () => {
    const kernel = await kernelIn({ ...two, 'a.mjs': runtime('alpha', { version: '1.0' }) })
    const { probe } = probeAnswering('beta')
    const reached = await kernel.resolveRuntime(undefined, runtimeContext, { probe })
    expect(reached).toMatchObject({ probed: false, info: { engine: 'alpha', version: '1.0' } })
    expect(reached.runtime.engine).toBe('alpha')
    expect(asked()).toEqual(['alpha'])
  })

  it('passes over what resolveRuntime passes over, in the same order, and picks the same runtime', async () => {
    const kernel = await kernelIn(two)
    const { probe, probed } = probeAnswering('beta')
    const reached = await kernel.resolveRuntime('auto', runtimeContext, { probe })
    expect(reached.runtime).toBe((await kernel.resolveRuntime('auto', runtimeContext)).runtime)
    expect(probed).toEqual(['alpha', 'beta'])
  })

  it('detects a runtime that cannot be probed', async () => {
    const kernel = await kernelIn(two)
    const reached = await kernel.resolveRuntime(undefined, runtimeContext, { probe: () => undefined })
    expect(reached).toMatchObject({ probed: false, info: { engine: 'beta', version: '2.0' } })
    expect(asked()).toEqual(['alpha', 'beta'])
  })

  it('asks only the engine settings or the flag name', async () => {
    const kernel = await kernelIn({ ...two, 'home/settings.toml': 'runtime = "beta"\n', 'a.mjs': runtime('alpha', { version: '1.0' }) })
    const { probe, probed } = probeAnswering('alpha', 'beta')
    expect((await kernel.resolveRuntime(undefined, runtimeContext, { probe })).runtime.engine).toBe('beta')
    expect((await kernel.resolveRuntime('alpha', runtimeContext, { probe })).runtime.engine).toBe('alpha')
    expect(probed).toEqual(['beta', 'alpha'])
  })

  it('fails as resolveRuntime does when nothing answers', async () => {
    const kernel = await kernelIn({ ...two, 'b.mjs': runtime('beta', { reason: 'installed, but the engine does not answer' }) })
    const { probe } = probeAnswering()
    const reached = await failure(() => kernel.resolveRuntime(undefined, runtimeContext, { probe }))
    const resolved = await failure(() => kernel.resolveRuntime(undefined, runtimeContext))
    expect(reached.code).toBe('RUNTIME_NOT_FOUND')
    expect({ message: reached.message, problems: reached.problems, hint: reached.hint }).toEqual({
      message: resolved.message,
      problems: resolved.problems,
      hint: resolved.hint,
    })
    const unknown = await failure(() => kernel.resolveRuntime('betta', runtimeContext, { probe }))
    expect(unknown.code).toBe('RUNTIME_UNKNOWN')
  })

  it('asks a runtime a more specific layer names first, as resolveRuntime does', async () => {
    const kernel = await kernelIn({
      ...two,
      'home/settings.toml': 'plugins = ["../g.mjs"]\n',
      'g.mjs': runtime('gamma', { version: '3.0' }),
    })
    expect(kernel.runtimes.map((r) => r.plugin.engine)).toEqual(['gamma', 'alpha', 'beta'])
    expect((await kernel.resolveRuntime('auto', runtimeContext)).runtime.engine).toBe('gamma')
    const { probe, probed } = probeAnswering('gamma', 'beta')
    expect((await kernel.resolveRuntime('auto', runtimeContext, { probe })).runtime.engine).toBe('gamma')
    expect(probed).toEqual(['gamma'])
  })
})

describe("a runtime's own settings", () => {
  /** A runtime that takes `[runtimes.opt]`, recording what it was configured with. */
  const optRuntime = () => {
    const got: unknown[] = []
    const plugin = {
      kind: 'runtime',
      apiVersion: 1,
      meta: { name: 'rt-opt', version: '0.0.1' },
      engine: 'opt',
      options: z.strictObject({ claim: z.optional(z.string().check(z.regex(/^\d+Gi$/, 'a size such as "10Gi"'))), namespace: z.optional(z.string()), retries: z._default(z.int(), 3) }),
      configure: (options: unknown) => got.push(options),
      detect: () => undefined, hasImage() {}, build() {}, up() {}, exec() {}, run() {}, list() {}, down() {},
    }
    ;(globalThis as { __omhOptRuntime?: unknown }).__omhOptRuntime = plugin
    return got
  }
  const files = (personal: string, defaults = '') => ({
    'defaults.toml': `plugins = ["./opt.mjs", "./b.mjs"]\n${defaults}`,
    'opt.mjs': 'export default globalThis.__omhOptRuntime\n',
    'b.mjs': runtime('beta', { version: '2.0' }),
    'home/settings.toml': personal,
  })

  it('hands the runtime its table merged key by key, as its own schema parsed it, once at load', async () => {
    const got = optRuntime()
    await kernelIn(files('[runtimes.opt]\nnamespace = "mine"\n', '[runtimes.opt]\nclaim = "5Gi"\nnamespace = "shipped"\n'))
    expect(got).toEqual([{ claim: '5Gi', namespace: 'mine', retries: 3 }])
  })

  it('configures a runtime with its defaults when no layer has its table', async () => {
    const got = optRuntime()
    await kernelIn(files(''))
    expect(got).toEqual([{ retries: 3 }])
  })

  it("refuses what the runtime's schema refuses, each key at the file and line it came from", async () => {
    const got = optRuntime()
    const error = await failure(() => kernelIn(files('runtime = "opt"\n\n[runtimes.opt]\nclam = "10Gi"\n', '[runtimes.opt]\nclaim = "10 GB"\n')))
    expect(error).toMatchObject({ code: 'SETTINGS_INVALID', exit: 2 })
    expect(error.problems.map(({ file, line, path: key, message, suggestion }) => ({ file: path.basename(file!), line, key, message, suggestion }))).toEqual([
      { file: 'defaults.toml', line: 3, key: 'runtimes.opt.claim', message: 'a size such as "10Gi"', suggestion: undefined },
      { file: 'settings.toml', line: 4, key: 'runtimes.opt.clam', message: 'unknown key', suggestion: 'claim' },
    ])
    expect(got).toEqual([])
  })

  it('refuses a table no loaded runtime drives, and one for a runtime that takes no settings', async () => {
    optRuntime()
    const error = await failure(() => kernelIn(files('[runtimes.opz]\nclaim = "1Gi"\n\n[runtimes.beta]\nx = 1\n')))
    expect(error).toMatchObject({ code: 'SETTINGS_INVALID', exit: 2 })
    expect(error.problems).toEqual([
      { file: expect.stringMatching(/home\/settings\.toml$/), line: 1, column: 1, path: 'runtimes.opz', message: 'no runtime plugin drives "opz" (installed: opt, beta)', suggestion: 'opt' },
      { file: expect.stringMatching(/home\/settings\.toml$/), line: 4, column: 1, path: 'runtimes.beta', message: 'the beta runtime (rt-beta) takes no settings' },
    ])
  })

  it("takes the keys every engine has in any engine's table, and keeps them from the plugin's schema", async () => {
    const got = optRuntime()
    const kernel = await kernelIn(files('[session]\nnetwork = "shared"\n\n[runtimes.beta]\nnetwork = "beta-net"\n\n[runtimes.opt]\nnetwork = "opt-net"\nnamespace = "mine"\n'))
    expect(got).toEqual([{ namespace: 'mine', retries: 3 }])
    expect(kernel.settings.networkOn('beta')?.value).toBe('beta-net')
    expect(kernel.settings.networkOn('opt')?.value).toBe('opt-net')
    expect(kernel.settings.networkOn('other')?.value).toBe('shared')
  })

  it("refuses an engine's network that is no network name, at its line", async () => {
    optRuntime()
    const error = await failure(() => kernelIn(files('[runtimes.beta]\nnetwork = "a b"\n')))
    expect(error.problems).toEqual([expect.objectContaining({ line: 2, path: 'runtimes.beta.network', message: expect.stringContaining('a network name') })])
  })
})

/** A plugin package in the defaults' node_modules, its module noting that it was imported. */
function pkg(name: string, module: string, declaration?: unknown): Record<string, string> {
  return {
    [`node_modules/${name}/package.json`]: JSON.stringify({ name, type: 'module', main: 'index.mjs', ...(declaration === undefined ? {} : { omh: declaration }) }),
    [`node_modules/${name}/index.mjs`]: `globalThis.imported ??= []; globalThis.imported.push('${name}')\n${module}`,
  }
}
const imported = () => (globalThis as { imported?: string[] }).imported ?? []
const extension = (name: string, hook: string) =>
  `export default { kind: 'extension', apiVersion: 1, meta: { name: '${name}', version: '0.0.1' }, apply(hooks) { hooks.${hook}.tap('', () => { globalThis.told = true }) } }\n`

describe('plugins imported on demand', () => {
  beforeEach(() => {
    ;(globalThis as { imported?: string[]; asked?: string[] }).imported = []
    ;(globalThis as { asked?: string[] }).asked = []
  })

  const declared = {
    'defaults.toml': 'plugins = ["r-a", "r-b", "rt-x", "rt-y", "plain"]\n',
    ...pkg('r-a', renderer('r-a', 'fa'), { renderer: { formats: ['fa'] } }),
    ...pkg('r-b', renderer('r-b', 'fb'), { renderer: { formats: ['fb'] } }),
    ...pkg('rt-x', runtime('x', { version: '1' }), { runtime: { engine: 'x' } }),
    ...pkg('rt-y', runtime('y', { version: '2' }), { runtime: { engine: 'y' } }),
    ...pkg('plain', renderer('plain', 'fp')),
    'adapters/h.toml': adapter('fa'),
  }

  it('imports a package that declares what it provides only when a command needs it, and one that declares nothing at once', async () => {
    const kernel = await kernelIn(declared)
    expect(imported()).toEqual(['plain'])
    expect(kernel.formats()).toEqual(['fa', 'fb', 'fp'])
    const report = await kernel.render(await kernel.adapter('h'), emptyProfile())
    expect(report.files).toEqual([{ kind: 'file', guest: '/work/AGENTS.md', content: 'r-a' }])
    expect(imported()).toEqual(['plain', 'r-a'])
    expect((await kernel.resolveRuntime('y', runtimeContext)).runtime.engine).toBe('y')
    expect(imported()).toEqual(['plain', 'r-a', 'rt-y'])
    expect((await kernel.resolveRuntime('auto', runtimeContext)).runtime.engine).toBe('x')
    expect((await kernel.allPlugins()).map((p) => p.plugin.meta.name)).toEqual(['r-a', 'r-b', 'rt-x', 'rt-y', 'plain'])
  })

  it('an unknown engine is named with the declared ones, before any is imported', async () => {
    const kernel = await kernelIn(declared)
    const error = await failure(() => kernel.resolveRuntime('z', runtimeContext))
    expect(error.code).toBe('RUNTIME_UNKNOWN')
    expect(imported()).toEqual(['plain'])
  })

  it('a runtime whose table the settings hold is imported at once, so its settings are checked by every command', async () => {
    const error = await failure(() => kernelIn({ ...declared, 'home/settings.toml': '[runtimes.x]\nsize = 1\n' }))
    expect(error.code).toBe('SETTINGS_INVALID')
    expect(error.problems[0]?.message).toBe('the x runtime (rt-x) takes no settings')
  })

  it('asks in the settings\' order whatever was imported first: most specific layer, then as named', async () => {
    const kernel = await kernelIn({
      'defaults.toml': 'plugins = ["first", "./second.mjs"]\n',
      ...pkg('first', renderer('first', 'fa'), { renderer: { formats: ['fa'] } }),
      'second.mjs': renderer('second', 'fa'),
      'adapters/h.toml': adapter('fa'),
    })
    const report = await kernel.render(await kernel.adapter('h'), emptyProfile())
    expect(report.files).toEqual([{ kind: 'file', guest: '/work/AGENTS.md', content: 'first' }])
    expect(kernel.rendererFor('fa')?.plugin.meta.name).toBe('first')
  })

  it('refuses a declaration with a key it does not know, at the package.json', async () => {
    const error = await failure(() => kernelIn({ 'defaults.toml': 'plugins = ["r-a"]\n', ...pkg('r-a', renderer('r-a', 'fa'), { renderer: { format: ['fa'] } }) }))
    expect([error.code, error.exit]).toEqual(['PLUGIN_INVALID', 2])
    expect(error.problems[0]?.file).toMatch(/node_modules\/r-a\/package\.json$/)
    expect(error.problems[0]?.path).toMatch(/^omh/)
  })

  it('refuses a module that answers other formats than its package declares, when it is imported', async () => {
    const kernel = await kernelIn({ 'defaults.toml': 'plugins = ["r-a"]\n', ...pkg('r-a', renderer('r-a', 'other'), { renderer: { formats: ['fa'] } }), 'adapters/h.toml': adapter('fa') })
    const error = await failure(() => kernel.adapter('h'))
    expect(error.code).toBe('PLUGIN_INVALID')
    expect(error.problems).toEqual([{ file: expect.stringMatching(/r-a\/package\.json$/), path: 'omh.renderer.formats', message: 'declares fa, but the renderer answers other' }])
  })

  it('imports an extension that declares failed when a failure is told, and refuses a tap it did not declare', async () => {
    const kernel = await kernelIn({ 'defaults.toml': 'plugins = ["ext"]\n', ...pkg('ext', extension('ext', 'failed'), { extension: { hooks: ['failed'] } }) })
    expect(imported()).toEqual([])
    expect(await kernel.launchTaps()).toEqual({ beforeLaunch: [], launched: [] })
    expect(imported()).toEqual([])
    expect(await kernel.notifyFailed(await failure(() => kernel.adapter('none')))).toEqual([])
    expect([imported(), (globalThis as { told?: boolean }).told]).toEqual([['ext'], true])

    const lying = await kernelIn({ 'defaults.toml': 'plugins = ["ext2"]\n', ...pkg('ext2', extension('ext2', 'launched'), { extension: { hooks: ['failed'] } }) })
    const [fault] = await lying.notifyFailed(await failure(() => lying.adapter('none')))
    expect(fault?.code).toBe('PLUGIN_INVALID')
    expect(fault?.problems[0]?.message).toBe('the extension taps launched, which the package does not declare')
  })
})
