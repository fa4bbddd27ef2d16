import { describe, expect, it } from 'vitest'
import type { RuntimePlugin } from '@omh/plugin-api'
import { omhImages, unused, type OmhImage } from './image-inventory.js'

const DAY = 86_400_000
const now = Date.parse('2026-12-05T00:00:00Z')
const image = (tag: string, kind: string, more: Partial<OmhImage> = {}): OmhImage => ({ id: tag, tags: [tag], kind, created: new Date(now - 2 * DAY).toISOString(), size: 1, sessions: [], ...more })

describe('which images no session needs', () => {
  const env = image('env:1', 'environment', { from: 'base:1' })
  const toolset = image('toolset:1', 'toolset')
  const tools = image('tools:1', 'tools', { harness: 'claude', from: 'toolset:1' })
  const used = image('claude:1', 'harness', { harness: 'claude', from: 'env:1', tools: 'tools:1', sessions: ['app/s01'] })
  const idle = image('claude:2', 'harness', { harness: 'claude', from: 'env:2', tools: 'tools:2' })
  const env2 = image('env:2', 'environment')
  const tools2 = image('tools:2', 'tools', { from: 'toolset:1' })

  it('keeps a session image in use and every layer it was built from or copies, and the toolset those were made on', () => {
    expect(unused([env, toolset, tools, used], 0, now)).toEqual([])
  })

  it('removes an unused session image, then the layers nothing that stays needs', () => {
    expect(unused([env, toolset, tools, used, idle, env2, tools2], 0, now).map((i) => i.tags[0])).toEqual(['claude:2', 'env:2', 'tools:2'])
  })

  it('removes the toolset too once no harness tools are left on it', () => {
    expect(unused([toolset, tools2, idle, env2], 0, now).map((i) => i.tags[0]).sort()).toEqual(['claude:2', 'env:2', 'tools:2', 'toolset:1'])
  })

  it('never removes an image younger than asked, nor a layer such an image needs', () => {
    const young = image('claude:3', 'harness', { from: 'env:2', tools: 'tools:2', created: new Date(now - 1000).toISOString() })
    expect(unused([young, env2, tools2, toolset], DAY, now)).toEqual([])
  })
})

describe("omh's images on an engine", () => {
  it("counts the image a session's proxy runs as in use, so prune offers it to no one", async () => {
    const runtime = {
      engine: 'fake',
      images: async () => [{ id: 'sha256:e', tags: ['localhost/omh-egress:1'], created: new Date(now - 2 * DAY).toISOString(), size: 1, labels: { 'omh.kind': 'egress' } }],
      list: async (labels: Record<string, string>) =>
        'omh.egress' in labels ? [{ id: 'c1', name: 'omh-app-s01-egress', running: true, image: 'localhost/omh-egress:1', labels: { 'omh.egress': 'app-s01' } }] : [],
    } as unknown as RuntimePlugin
    const images = await omhImages(runtime, { env: {}, progress: () => undefined, verbose: false })
    expect(images.map((i) => i.sessions)).toEqual([['app-s01 (omh-app-s01-egress)']])
    expect(unused(images, 0, now)).toEqual([])
  })
})
