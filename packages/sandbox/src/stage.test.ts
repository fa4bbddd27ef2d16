import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { testdir, write } from '@omh/test-utils'
import type { StagedEntry } from '@omh/plugin-api'
import { GUEST_SOURCES, stage } from './stage.js'

describe('stage', () => {
  const catalogue = testdir({ 'skills/a/SKILL.md': 'a', 'skills/b/SKILL.md': 'b' })
  const files = (text: string): StagedEntry[] => [
    { kind: 'file', guest: '/work/AGENTS.md', content: text },
    { kind: 'file', guest: '/home/agent/.x/hook.sh', content: '#!/bin/sh\n', mode: 0o755 },
    {
      kind: 'tree',
      guest: '/home/agent/.x/skills',
      entries: [
        { name: 'a', source: path.join(catalogue, 'skills/a') },
        { name: 'b', source: path.join(catalogue, 'skills/b') },
      ],
    },
  ]

  it('writes a document inside a tree into the tree, beside its entries, with no mount of its own', async () => {
    const dir = testdir()
    const skill = { kind: 'file' as const, guest: '/home/agent/.x/skills/cmd/SKILL.md', content: '---\nname: cmd\n---\n' }
    const result = await stage({ files: [skill, ...files('rules')] }, dir)
    expect(readFileSync(path.join(dir, 'trees/home/agent/.x/skills/cmd/SKILL.md'), 'utf8')).toBe(skill.content)
    expect(readdirSync(path.join(dir, 'trees/home/agent/.x/skills')).sort()).toEqual(['a', 'b', 'cmd'])
    expect(result.mounts.some((m) => m.guest.startsWith('/home/agent/.x/skills/'))).toBe(false)
    // Gone from the profile, gone from the tree.
    expect((await stage({ files: files('rules') }, dir)).removed).toBe(1)
    expect(existsSync(path.join(dir, 'trees/home/agent/.x/skills/cmd'))).toBe(false)
  })

  it('stages a mounted tree as empty mount points, each entry mounted read-only at its name, and back to links', async () => {
    const dir = testdir()
    // Mount points take their kind from the source, which must exist when staging runs.
    write(catalogue, { 'skills/a/SKILL.md': 'a', 'skills/b/SKILL.md': 'b' })
    const mounted = files('rules').map((f) => (f.kind === 'tree' ? { ...f, mounted: true } : f))
    const result = await stage({ files: mounted }, dir)
    const skills = path.join(dir, 'trees/home/agent/.x/skills')
    for (const name of ['a', 'b']) {
      expect(statSync(path.join(skills, name)).isDirectory()).toBe(true)
      expect(readdirSync(path.join(skills, name))).toEqual([])
      expect(result.mounts).toContainEqual({ host: path.join(catalogue, 'skills', name), guest: `/home/agent/.x/skills/${name}`, readOnly: true })
    }
    expect(result.mounts.some((m) => m.guest.startsWith(GUEST_SOURCES))).toBe(false)
    // Unchanged: nothing written, the mount points kept.
    expect((await stage({ files: mounted }, dir)).written).toBe(0)
    expect(readdirSync(skills).sort()).toEqual(['a', 'b'])
    // Links again: each mount point becomes a link.
    await stage({ files: files('rules') }, dir)
    expect(readlinkSync(path.join(skills, 'a'))).toMatch(new RegExp(`^${GUEST_SOURCES}/`))
  })

  it('writes documents and link farms, and describes read-only mounts for them', async () => {
    const dir = testdir()
    const result = await stage({ files: files('rules') }, dir)
    expect(result.written).toBe(4)
    expect(readFileSync(path.join(dir, 'files/work/AGENTS.md'), 'utf8')).toBe('rules')
    expect(statSync(path.join(dir, 'files/home/agent/.x/hook.sh')).mode & 0o777).toBe(0o700)
    const link = readlinkSync(path.join(dir, 'trees/home/agent/.x/skills/a'))
    expect(link).toMatch(new RegExp(`^${GUEST_SOURCES}/[0-9a-f]{12}/a$`))
    expect(result.mounts.every((m) => m.readOnly)).toBe(true)
    expect(result.mounts.map((m) => m.guest)).toEqual([
      '/home/agent/.x/hook.sh',
      '/home/agent/.x/skills',
      path.dirname(link),
      '/work/AGENTS.md',
    ])
    expect(result.mounts.find((m) => m.guest === path.dirname(link))!.host).toBe(path.join(catalogue, 'skills'))
  })

  it('writes nothing when the profile has not changed, and only what changed otherwise', async () => {
    const dir = testdir()
    await stage({ files: files('rules') }, dir)
    expect((await stage({ files: files('rules') }, dir)).written).toBe(0)
    expect((await stage({ files: files('changed') }, dir)).written).toBe(1)
  })

  it('removes what the profile no longer holds', async () => {
    const dir = testdir()
    await stage({ files: files('rules') }, dir)
    const result = await stage({ files: files('rules').filter((f) => f.kind !== 'tree') }, dir)
    expect(result.removed).toBe(2)
    expect(existsSync(path.join(dir, 'trees/home/agent/.x/skills'))).toBe(false)
  })

  it('refuses a guest path that is not absolute and normalised', async () => {
    await expect(stage({ files: [{ kind: 'file', guest: 'work/../x', content: '' }] }, testdir())).rejects.toThrow(/not an absolute/)
  })

  it('keeps what it stages to its owner: files 0600 (0700 when executable), directories 0700, those of an older stage too', async () => {
    const dir = path.join(testdir(), 'stage')
    mkdirSync(path.join(dir, 'files/work'), { recursive: true, mode: 0o755 })
    writeFileSync(path.join(dir, 'files/work/AGENTS.md'), 'rules', { mode: 0o644 })
    chmodSync(path.join(dir, 'files/work/AGENTS.md'), 0o644)
    await stage({ files: files('rules') }, dir)
    const modes: Record<string, number> = {}
    const walk = (at: string) => {
      const info = statSync(at)
      modes[path.relative(dir, at) || '.'] = info.mode & 0o777
      if (info.isDirectory()) for (const name of readdirSync(at)) if (name !== 'a' && name !== 'b') walk(path.join(at, name))
    }
    walk(dir)
    expect(modes).toEqual({
      '.': 0o700,
      files: 0o700,
      'files/work': 0o700,
      'files/work/AGENTS.md': 0o600,
      'files/home': 0o700,
      'files/home/agent': 0o700,
      'files/home/agent/.x': 0o700,
      'files/home/agent/.x/hook.sh': 0o700,
      trees: 0o700,
      'trees/home': 0o700,
      'trees/home/agent': 0o700,
      'trees/home/agent/.x': 0o700,
      'trees/home/agent/.x/skills': 0o700,
    })
  })
})
