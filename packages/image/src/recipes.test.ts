import { describe, expect, it } from 'vitest'
import { IMAGE_BUILD_FAILED, OmhError, isOmhError, type ImageRecipe, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import { ensureImage } from './ensure.js'
import { envValue, homeMountParents, imageOptions, packagesRecipe, planImages as plan_, type EnvironmentImage, type ImageAdapter, type ImageOptions } from './recipes.js'
import { merge } from '@omh/kernel'

const adapter: ImageAdapter = {
  name: 'probe',
  bin: 'probe',
  install: 'npm install -g probe@1',
  bindings: [
    { capability: 'rules', path: '/work/PROBE.md', also: ['/home/agent/.probe/PROBE.md'], render: 'x', options: undefined },
    { capability: 'skills', path: '/home/agent/.config/probe/skills', also: [], render: 'y', options: undefined },
  ],
  creds: ['/home/agent/.probe-auth/', '/home/agent/.probe.json'],
  token: [],
}
const options = { from: 'example.org/debian-node:1', network: 'host' }
// The preparation script as a fixed text: its bytes are part of the toolset's tag.
const planImages = (a: ImageAdapter, o: ImageOptions, e?: EnvironmentImage) => plan_(a, o, e, 'prepare()')

describe('image recipes', () => {
  it('tags are digests of the recipe under localhost, never latest, and stable', () => {
    const plan = planImages(adapter, options)
    expect(plan.toolset.tag).toMatch(/^localhost\/omh-toolset:[0-9a-f]{16}$/)
    expect(plan.tools.tag).toMatch(/^localhost\/omh-tools-probe:[0-9a-f]{16}$/)
    expect(plan.environment.recipes.map((r) => r.tag)).toEqual([expect.stringMatching(/^localhost\/omh-environment:[0-9a-f]{16}$/)])
    expect(plan.harness.tag).toMatch(/^localhost\/omh-probe:[0-9a-f]{16}$/)
    expect(planImages(adapter, options)).toEqual(plan)
  })

  it('a changed base changes every image; the session image starts from the environment and copies the harness tools', () => {
    const one = planImages(adapter, options)
    const two = planImages(adapter, { ...options, from: 'example.org/debian-node:2' })
    for (const key of ['toolset', 'tools', 'harness'] as const) expect(two[key].tag).not.toBe(one[key].tag)
    expect(one.harness.containerfile).toContain(`FROM ${one.environment.from}\nCOPY --from=${one.tools.tag} /opt/omh /opt/omh\n`)
    expect(one.tools.containerfile).toContain(`FROM ${one.toolset.tag}\n`)
  })

  it('a changed install changes the harness tools and the session image, never the toolset or the environment', () => {
    const one = planImages(adapter, options)
    const two = planImages({ ...adapter, install: 'npm install -g probe@2' }, options)
    expect(two.toolset.tag).toBe(one.toolset.tag)
    expect(two.environment).toEqual(one.environment)
    expect(two.tools.tag).not.toBe(one.tools.tag)
    expect(two.harness.tag).not.toBe(one.harness.tag)
  })

  it('a changed environment changes the session image alone', () => {
    const one = planImages(adapter, options)
    const python = packagesRecipe(options.from, ['python3'], [], options, true)
    const two = planImages(adapter, options, { from: python.tag, recipes: [python], env: {}, describe: "omh's base" })
    expect(two.toolset.tag).toBe(one.toolset.tag)
    expect(two.tools.tag).toBe(one.tools.tag)
    expect(two.harness.tag).not.toBe(one.harness.tag)
  })

  it('extra labels are part of the digest, so labelled images never share a tag with plain ones', () => {
    const plain = planImages(adapter, options)
    const labelled = planImages(adapter, { ...options, labels: { 'omh.test': 'x' } })
    expect(labelled.toolset.tag).not.toBe(plain.toolset.tag)
    expect(labelled.harness.labels).toMatchObject({ 'omh.test': 'x', 'omh.kind': 'harness', 'omh.adapter': 'probe' })
  })

  it('labels say kind, adapter and what each image starts from; the build network travels with every recipe', () => {
    const plan = planImages(adapter, options)
    expect(plan.toolset.labels).toEqual({ 'omh.kind': 'toolset', 'omh.from': options.from })
    expect(plan.tools.labels).toEqual({ 'omh.kind': 'tools', 'omh.adapter': 'probe', 'omh.from': plan.toolset.tag })
    expect(plan.environment.recipes[0]!.labels).toEqual({ 'omh.kind': 'environment', 'omh.from': options.from })
    expect(plan.harness.labels).toEqual({ 'omh.kind': 'harness', 'omh.adapter': 'probe', 'omh.from': plan.environment.from, 'omh.tools': plan.tools.tag })
    for (const r of [plan.toolset, plan.tools, plan.harness]) expect(r.network).toBe('host')
    expect(planImages(adapter, { from: options.from }).toolset.network).toBeUndefined()
  })

  it("the default environment is omh's base with what the agent expects of a Debian shell, and packages add to it", () => {
    const plan = planImages(adapter, options)
    const text = plan.environment.recipes[0]!.containerfile
    expect(text).toMatch(/^FROM example\.org\/debian-node:1$/m)
    for (const pkg of ['git', 'jq', 'procps', 'less', 'ca-certificates']) expect(text).toMatch(new RegExp(`install -y .*\\b${pkg}\\b`))
    expect(packagesRecipe(options.from, ['python3', 'golang'], ['echo hi'], options, true).containerfile).toMatch(/install -y --no-install-recommends ca-certificates git jq procps less python3 golang/)
    expect(packagesRecipe(options.from, [], ['echo "a b"'], options, true).containerfile).toContain('RUN ["/bin/sh","-ec","echo \\"a b\\""]')
    // On an image of the project's, only the packages asked for, and a clear word where apt-get is missing.
    const theirs = packagesRecipe('example.org/app:1', ['python3'], [], options, false).containerfile
    expect(theirs).toContain('install -y --no-install-recommends python3\\n')
    expect(theirs).toContain('has no apt-get')
  })

  it('the toolset bundles every program with its libraries and loader, and carries the preparation script', () => {
    const text = planImages(adapter, options).toolset.containerfile
    expect(text).toContain('patchelf --set-interpreter $P/lib/ld.so --force-rpath --set-rpath $P/lib')
    expect(text).toContain(Buffer.from('prepare()').toString('base64'))
    expect(plan_(adapter, options, undefined, 'prepare(2)').toolset.tag).not.toBe(planImages(adapter, options).toolset.tag)
  })

  it('the harness tools run install as root with OMH_PREFIX, then check that the adapter\'s bin is there', () => {
    const text = planImages({ ...adapter, install: 'echo "a b"\nfalse\necho never' }, options).tools.containerfile
    const lines = text.trimEnd().split('\n')
    expect(lines.slice(2, 6)).toEqual([
      'USER root',
      'ENV OMH_PREFIX=/opt/omh/harness NPM_CONFIG_PREFIX=/opt/omh/harness PATH=/opt/omh/harness/bin:$PATH',
      'RUN mkdir -p /opt/omh/harness/bin',
      'RUN ["/bin/sh","-ec","echo \\"a b\\"\\nfalse\\necho never"]',
    ])
    expect(lines.at(-1)).toMatch(/^RUN \["\/bin\/sh","-ec",".*","probe"\]$/)
  })

  it('the session image makes the agent with the toolset\'s Node, puts the toolset on PATH around the image\'s own, and ends as the agent', () => {
    const text = planImages(adapter, options).harness.containerfile
    const prepare = /^RUN \["\/opt\/omh\/libexec\/node","\/opt\/omh\/share\/prepare-image\.mjs",(".*")\]$/m.exec(text)
    expect(prepare).not.toBeNull()
    expect(JSON.parse(JSON.parse(prepare![1]!))).toEqual({
      uid: 1000,
      gid: 1000,
      user: 'agent',
      home: '/home/agent',
      owned: ['/home/agent', '/home/agent/.config', '/home/agent/.config/probe', '/home/agent/.probe', '/omh', '/work'],
      private: ['/omh/sock'],
      toolset: '/opt/omh',
    })
    expect(text).toContain('ENV PATH=/opt/omh/bin:${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}:/opt/omh/fallback\n')
    expect(text.trimEnd().split('\n').slice(-2)).toEqual(['USER 1000:1000', 'WORKDIR /work'])
    expect(planImages(adapter, { ...options, agent: { uid: 1100, gid: 1100 } }).harness.tag).not.toBe(planImages(adapter, options).harness.tag)
    expect(planImages(adapter, { ...options, agent: { uid: 1100, gid: 1100 } }).tools.tag).toBe(planImages(adapter, options).tools.tag)
  })

  it("the environment's variables reach the image with the image's own variables live and everything else literal", () => {
    expect(envValue('plain')).toBe('"plain"')
    expect(envValue('${PATH}:/x/bin')).toBe('"${PATH}:/x/bin"')
    expect(envValue('a "q" \\ $HOME ${1} $')).toBe('"a \\"q\\" \\\\ \\$HOME \\${1} \\$"')
    const environment: EnvironmentImage = { from: 'example.org/app:1', recipes: [], env: { PATH: '${PATH}:/x', B: 'b' }, become: 'vscode', describe: 'the devcontainer' }
    const text = planImages(adapter, options, environment).harness.containerfile
    expect(text).toContain('ENV B="b"\nENV PATH="${PATH}:/x"\n')
    expect(text).toContain('\\"become\\":\\"vscode\\"')
  })

  it('pre-creates every parent of a mount target under the home, owned by agent', () => {
    expect(homeMountParents(adapter)).toEqual(['/home/agent/.config', '/home/agent/.config/probe', '/home/agent/.probe'])
    const none = { ...adapter, bindings: [adapter.bindings[0]!].map((b) => ({ ...b, also: [] })), creds: [] }
    expect(homeMountParents(none)).toEqual([])
  })

  it('options come from [image] in settings', () => {
    const layer = (name: 'defaults' | 'personal', image: object) => ({ name, file: `/${name}.toml`, settings: { image } })
    const settings = merge([layer('defaults', { base: 'a:1', network: 'host' }), layer('personal', { base: 'b:2' })])
    expect(imageOptions(settings)).toEqual({ from: 'b:2', network: 'host' })
    expect(imageOptions(merge([layer('defaults', { base: 'a:1' }), layer('personal', { registry: 'registry.example.com/team' })]))).toEqual({ from: 'a:1', registry: 'registry.example.com/team' })
  })

  it('names every image under [image] registry when set, so an engine that pulls can find them', () => {
    const plan = planImages(adapter, { ...options, registry: 'registry.example.com:5000/team' })
    expect(plan.toolset.tag).toMatch(/^registry\.example\.com:5000\/team\/omh-toolset:[0-9a-f]{16}$/)
    expect(plan.harness.tag).toMatch(/^registry\.example\.com:5000\/team\/omh-probe:[0-9a-f]{16}$/)
    expect(plan.harness.containerfile).toContain(`COPY --from=${plan.tools.tag} `)
    expect(plan.toolset.tag.split(':').at(-1)).toBe(planImages(adapter, options).toolset.tag.split(':').at(-1))
  })
})

/** A runtime that holds images in a set and records builds. */
function fakeRuntime(present: string[], fail?: string, said?: string): RuntimePlugin & { built: ImageRecipe[] } {
  const images = new Set(present)
  const built: ImageRecipe[] = []
  const never = async (): Promise<never> => {
    throw new Error('not used')
  }
  return {
    kind: 'runtime',
    apiVersion: 1,
    meta: { name: 'fake', version: '0' },
    engine: 'fake',
    built,
    detect: never,
    hasImage: async (tag) => images.has(tag),
    async build(recipe, context) {
      context.progress(`building ${recipe.tag}`)
      if (recipe.tag === fail) {
        if (said) context.progress(said)
        throw OmhError.of(IMAGE_BUILD_FAILED, { args: ['fake', recipe.tag, 'exit 100'], details: { why: 'exit 100' } })
      }
      built.push(recipe)
      images.add(recipe.tag)
    },
    up: never,
    exec: never,
    run: never,
    list: never,
    down: never,
  }
}

const recording = () => {
  const lines: string[] = []
  const context: RuntimeContext = { env: {}, progress: (l) => lines.push(l), verbose: false }
  return { lines, context }
}

describe('ensureImage', () => {
  const plan = planImages(adapter, options)
  const order = [plan.toolset, plan.tools, ...plan.environment.recipes, plan.harness]

  it('builds the toolset, the harness tools, the environment and the session image when none exists, with progress', async () => {
    const runtime = fakeRuntime([])
    const { lines, context } = recording()
    expect(await ensureImage(runtime, plan, context)).toEqual({ tag: plan.harness.tag, built: order.map((r) => r.tag) })
    expect(runtime.built).toEqual(order)
    expect(lines[0]).toMatch(/^Building omh's toolset localhost\/omh-toolset:\w+ on example\.org\/debian-node:1/)
    expect(lines).toContain(`Building the probe session image ${plan.harness.tag} on omh's base`)
  })

  it('builds only what is missing, and nothing when the session image exists', async () => {
    const runtime = fakeRuntime([plan.toolset.tag, ...plan.environment.recipes.map((r) => r.tag)])
    expect((await ensureImage(runtime, plan, recording().context)).built).toEqual([plan.tools.tag, plan.harness.tag])
    expect((await ensureImage(runtime, plan, recording().context)).built).toEqual([])
  })

  it('a failed harness build says which adapter install to check', async () => {
    const runtime = fakeRuntime([plan.toolset.tag], plan.tools.tag)
    const error = await ensureImage(runtime, plan, recording().context, '/adapters/probe.toml').catch((e: unknown) => e)
    expect(isOmhError(error)).toBe(true)
    expect((error as OmhError).code).toBe('IMAGE_BUILD_FAILED')
    expect((error as OmhError).exit).toBe(1)
    expect((error as OmhError).message).toBe(`fake could not build the image ${plan.tools.tag}: exit 100`)
    expect((error as OmhError).hint).toContain('runs `install` from /adapters/probe.toml')
  })

  it('a failed toolset build says the base must be Debian-based with Node', async () => {
    const error = (await ensureImage(fakeRuntime([], plan.toolset.tag), plan, recording().context).catch((e: unknown) => e)) as OmhError
    expect(error.hint).toContain('must be a Debian-based image with Node')
  })

  it('a session image the preparation refuses is IMAGE_UNSUPPORTED, with its reason', async () => {
    const runtime = fakeRuntime([plan.toolset.tag, plan.tools.tag, ...plan.environment.recipes.map((r) => r.tag)], plan.harness.tag, 'omh-image-unsupported: it has no /bin/sh')
    const error = (await ensureImage(runtime, plan, recording().context).catch((e: unknown) => e)) as OmhError
    expect(error.code).toBe('IMAGE_UNSUPPORTED')
    expect(error.exit).toBe(2)
    expect(error.message).toBe(`omh cannot run a session on ${plan.environment.from}: it has no /bin/sh`)
  })
})
