import { describe, expect, it } from 'vitest'
import type { RuntimeContext, RuntimePlugin } from '@omh/plugin-api'
import { CACHE_LABELS, cacheDirs, cacheVolumes, listCaches } from './caches.js'
import { commandsOf } from './setup.js'

describe('setup commands', () => {
  it('runs a string through the shell, an array as it is, and an object\'s commands side by side', () => {
    expect(commandsOf('npm ci && npm run build')).toEqual([[{ argv: ['/bin/sh', '-c', 'npm ci && npm run build'], shown: 'npm ci && npm run build' }]])
    expect(commandsOf(['pip', 'install', '-e', '.'])).toEqual([[{ argv: ['pip', 'install', '-e', '.'], shown: 'pip install -e .' }]])
    expect(commandsOf({ deps: 'make deps', db: ['make', 'db'] })).toEqual([
      [
        { argv: ['/bin/sh', '-c', 'make deps'], shown: 'make deps' },
        { argv: ['make', 'db'], shown: 'make db' },
      ],
    ])
  })
})

describe('dependency caches', () => {
  it('gives each tool directory a volume of the repository, named so it reads back', async () => {
    const volumes = cacheVolumes('app-1a2b3c4d')
    expect(volumes.find((v) => v.tool === 'npm')).toEqual({ tool: 'npm', volume: expect.stringMatching(/^omh-cache-app-1a2b3c4d-npm-[0-9a-f]{6}$/), guest: '/home/agent/.npm', readOnly: false })
    expect(new Set(volumes.map((v) => v.volume)).size).toBe(volumes.length)
    expect(cacheDirs()).toEqual(volumes.map((v) => v.guest))
    const asked: Record<string, string>[] = []
    const runtime = {
      volumes: {
        list: async (labels: Record<string, string>) => {
          asked.push(labels)
          return [...volumes.map((v) => v.volume), 'omh-cache-other-thing', 'omh-cache-my-app-2-pip-abcdef']
        },
      },
    } as unknown as RuntimePlugin
    const listed = await listCaches(runtime, {} as RuntimeContext, 'app-1a2b3c4d')
    expect(asked).toEqual([{ [CACHE_LABELS.repo]: 'app-1a2b3c4d' }])
    expect(listed.find((c) => c.tool === 'cargo')).toMatchObject({ repo: 'app-1a2b3c4d' })
    expect(listed.find((c) => c.repo === 'my-app-2')).toMatchObject({ tool: 'pip' })
    expect(listed.some((c) => c.volume === 'omh-cache-other-thing')).toBe(false)
  })
})
