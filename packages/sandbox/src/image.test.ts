import { describe, expect, it } from 'vitest'
import { IMAGE_BUILD_FAILED, OmhError, isOmhError, type ImageRecipe, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import { baseRecipe, ensureImage, harnessRecipe, homeMountParents, imageOptions, planImages, type ImageAdapter } from './image.js'
import { merge } from '@omh/kernel'

const adapter: ImageAdapter = {
  name: 'probe',
  install: 'npm install -g probe@1',
  bindings: [
    { capability: 'rules', path: '/work/PROBE.md', also: ['/home/agent/.probe/PROBE.md'], render: 'x', options: undefined },
    { capability: 'skills', path: '/home/agent/.config/probe/skills', also: [], render: 'y', options: undefined },
  ],
  creds: ['/home/agent/.probe-auth/', '/home/agent/.probe.json'],
  token: [],
}
const options = { from: 'example.org/debian-node:1', network: 'host' }

describe('image recipes', () => {
  it('tags are digests of the recipe under localhost, never latest, and stable', () => {
    const plan = planImages(adapter, options)
    expect(plan.base.tag).toMatch(/^localhost\/omh-base:[0-9a-f]{16}$/)
    expect(plan.harness.tag).toMatch(/^localhost\/omh-probe:[0-9a-f]{16}$/)
    expect(planImages(adapter, options)).toEqual(plan)
  })

  it('keeps the tags of unchanged recipes from one release to the next, so upgrading omh rebuilds nothing', () => {
    const plan = planImages(
      { name: 'probe', install: 'true', bindings: [], creds: [], token: [] },
      { from: 'docker.io/library/node:24-bookworm-slim', network: 'host', labels: { 'omh.test': 'e2e', 'omh.test.run': 'x' } },
    )
    expect([plan.base.tag, plan.harness.tag]).toEqual(['localhost/omh-base:0f5fb6d165af09aa', 'localhost/omh-probe:3ab2466cf3796dbb'])
  })

  it('a changed base image changes both tags; the harness recipe starts from the base tag', () => {
    const one = planImages(adapter, options)
    const two = planImages(adapter, { ...options, from: 'example.org/debian-node:2' })
    expect(two.base.tag).not.toBe(one.base.tag)
    expect(two.harness.tag).not.toBe(one.harness.tag)
    expect(one.harness.containerfile).toContain(`FROM ${one.base.tag}\n`)
  })

  it('a changed install changes the harness tag only', () => {
    const one = planImages(adapter, options)
    const two = planImages({ ...adapter, install: 'npm install -g probe@2' }, options)
    expect(two.base.tag).toBe(one.base.tag)
    expect(two.harness.tag).not.toBe(one.harness.tag)
  })

  it('extra labels are part of the digest, so labelled images never share a tag with plain ones', () => {
    const plain = planImages(adapter, options)
    const labelled = planImages(adapter, { ...options, labels: { 'omh.test': 'x' } })
    expect(labelled.base.tag).not.toBe(plain.base.tag)
    expect(labelled.harness.labels).toMatchObject({ 'omh.test': 'x', 'omh.kind': 'harness', 'omh.adapter': 'probe' })
  })

  it('labels say kind, adapter and what each image starts from; the build network travels with the recipe', () => {
    const plan = planImages(adapter, options)
    expect(plan.base.labels).toEqual({ 'omh.kind': 'base', 'omh.from': options.from })
    expect(plan.harness.labels).toEqual({ 'omh.kind': 'harness', 'omh.adapter': 'probe', 'omh.from': plan.base.tag })
    expect(plan.base.network).toBe('host')
    expect(planImages(adapter, { from: options.from }).base.network).toBeUndefined()
  })

  it('the base asserts user agent with UID 1000 and home /home/agent at build time, and ends unprivileged', () => {
    const text = baseRecipe(options).containerfile
    expect(text).toMatch(/^FROM example\.org\/debian-node:1$/m)
    expect(text).toContain('test "$(id -u agent)" = 1000')
    expect(text).toContain('test "$(getent passwd agent | cut -d: -f6)" = /home/agent')
    for (const pkg of ['git', 'jq', 'openssh-server', 'dtach']) expect(text).toMatch(new RegExp(`install -y .*\\b${pkg}\\b`))
    expect(text.trimEnd().split('\n').slice(-2)).toEqual(['USER agent', 'WORKDIR /work'])
    expect(text).not.toMatch(/NODE_EXTRA_CA_CERTS|latest/)
  })

  it('a base for another agent gives agent those IDs and asserts them, without a lastlog entry a large UID would blow up', () => {
    const text = baseRecipe({ ...options, agent: { uid: 123456789, gid: 1200 } }).containerfile
    expect(text).toContain('useradd -l -m -d /home/agent -u 123456789 -g 1200 -s /bin/bash agent')
    expect(text).toContain('getent group 1200 >/dev/null || groupadd -g 1200 agent')
    expect(text).toContain('test "$(id -u agent)" = 123456789')
    expect(text).toContain('test "$(id -g agent)" = 1200')
    expect(baseRecipe({ ...options, agent: { uid: 1000, gid: 1000 } })).toEqual(baseRecipe(options))
    expect(planImages(adapter, { ...options, agent: { uid: 1100, gid: 1100 } }).harness.tag).not.toBe(planImages(adapter, options).harness.tag)
  })

  it('the harness layer runs install as root in a shell that stops at the first failure, then ends as agent', () => {
    const text = harnessRecipe({ ...adapter, install: 'echo "a b"\nfalse\necho never' }, baseRecipe(options), options).containerfile
    const lines = text.trimEnd().split('\n')
    expect(lines.slice(2, 4)).toEqual(['USER root', 'RUN ["/bin/sh","-ec","echo \\"a b\\"\\nfalse\\necho never"]'])
    expect(lines.slice(-2)).toEqual(['USER agent', 'WORKDIR /work'])
  })

  it('pre-creates every parent of a mount target under the home, owned by agent', () => {
    expect(homeMountParents(adapter)).toEqual(['/home/agent/.config', '/home/agent/.config/probe', '/home/agent/.probe'])
    expect(harnessRecipe(adapter, baseRecipe(options), options).containerfile).toContain(
      'RUN ["install","-d","-o","agent","-g","agent","/home/agent/.config","/home/agent/.config/probe","/home/agent/.probe"]\n',
    )
    const none = { ...adapter, bindings: [adapter.bindings[0]!].map((b) => ({ ...b, also: [] })), creds: [] }
    expect(homeMountParents(none)).toEqual([])
    expect(harnessRecipe(none, baseRecipe(options), options).containerfile).not.toContain('install -d')
  })

  it('options come from [image] in settings', () => {
    const layer = (name: 'defaults' | 'personal', image: object) => ({ name, file: `/${name}.toml`, settings: { image } })
    const settings = merge([layer('defaults', { base: 'a:1', network: 'host' }), layer('personal', { base: 'b:2' })])
    expect(imageOptions(settings)).toEqual({ from: 'b:2', network: 'host' })
    expect(imageOptions(merge([layer('defaults', { base: 'a:1' }), layer('personal', { registry: 'registry.example.com/team' })]))).toEqual({ from: 'a:1', registry: 'registry.example.com/team' })
  })

  it('names both images under [image] registry when set, so an engine that pulls can find them', () => {
    const plan = planImages(adapter, { ...options, registry: 'registry.example.com:5000/team' })
    expect(plan.base.tag).toMatch(/^registry\.example\.com:5000\/team\/omh-base:[0-9a-f]{16}$/)
    expect(plan.harness.tag).toMatch(/^registry\.example\.com:5000\/team\/omh-probe:[0-9a-f]{16}$/)
    expect(plan.harness.containerfile).toContain(`FROM ${plan.base.tag}\n`)
    expect(plan.base.tag.split(':').at(-1)).toBe(planImages(adapter, options).base.tag.split(':').at(-1))
  })
})

/** A runtime that holds images in a set and records builds. */
function fakeRuntime(present: string[], fail?: string): RuntimePlugin & { built: ImageRecipe[] } {
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

  it('builds the base and then the harness when neither exists, with progress', async () => {
    const runtime = fakeRuntime([])
    const { lines, context } = recording()
    expect(await ensureImage(runtime, plan, context)).toEqual({ tag: plan.harness.tag, built: [plan.base.tag, plan.harness.tag] })
    expect(runtime.built).toEqual([plan.base, plan.harness])
    expect(lines[0]).toMatch(/^Building the base image localhost\/omh-base:\w+ from example\.org\/debian-node:1/)
    expect(lines).toContain(`Building the probe image ${plan.harness.tag}`)
  })

  it('builds only the harness layer when the base exists, and nothing when the harness exists', async () => {
    const runtime = fakeRuntime([plan.base.tag])
    expect((await ensureImage(runtime, plan, recording().context)).built).toEqual([plan.harness.tag])
    expect((await ensureImage(runtime, plan, recording().context)).built).toEqual([])
  })

  it('a failed harness build says which adapter install to check', async () => {
    const runtime = fakeRuntime([plan.base.tag], plan.harness.tag)
    const error = await ensureImage(runtime, plan, recording().context, '/adapters/probe.toml').catch((e: unknown) => e)
    expect(isOmhError(error)).toBe(true)
    expect((error as OmhError).code).toBe('IMAGE_BUILD_FAILED')
    expect((error as OmhError).exit).toBe(1)
    expect((error as OmhError).message).toBe(`fake could not build the image ${plan.harness.tag}: exit 100`)
    expect((error as OmhError).hint).toContain('runs `install` from /adapters/probe.toml')
  })

  it('a failed base build says the base must be Debian-based', async () => {
    const error = (await ensureImage(fakeRuntime([], plan.base.tag), plan, recording().context).catch((e: unknown) => e)) as OmhError
    expect(error.hint).toContain('must be a Debian-based image')
  })
})
