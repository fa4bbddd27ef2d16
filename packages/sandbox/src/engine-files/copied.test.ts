import { lstat, mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { copyPlan, linkCommand, mirror, packInside, withLinks } from './copied.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'omh-copied-'))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const files = async (tree: Record<string, string>) => {
  for (const [rel, text] of Object.entries(tree)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true })
    await writeFile(path.join(dir, rel), text)
  }
}

/** A copied plan for a session container with these mounts. */
const planOf = (mounts: Parameters<typeof copyPlan>[0]['mounts']) =>
  copyPlan({ image: 'img', name: 'omh-r-s01', mounts, env: {}, labels: {}, workdir: '/work', user: '1000:1000', argv: ['sleep', 'infinity'] }, 'omh-r-s01', { uid: 1000, gid: 1000 })

describe('copyPlan', () => {
  it('gives each writable directory a volume, and links read-only entries and writable files into two more', async () => {
    await files({ 'work/a': '', 'staged/rules.md': 'r', 'skills/x/SKILL.md': 's', 'creds/.json': '{}' })
    const plan = await planOf([
      { host: path.join(dir, 'work'), guest: '/work', readOnly: false },
      { host: path.join(dir, 'staged/rules.md'), guest: '/work/AGENTS.md', readOnly: true },
      { host: path.join(dir, 'skills/x'), guest: '/home/agent/.skills/x', readOnly: true },
      { host: path.join(dir, 'creds/.json'), guest: '/home/agent/.probe.json', readOnly: false },
    ])
    expect(plan.spec.mounts).toEqual([])
    expect(plan.spec.volumes).toEqual([
      { volume: 'omh-r-s01-work', guest: '/work', readOnly: false },
      { volume: 'omh-r-s01-staged', guest: '/omh/copied/staged', readOnly: true },
      { volume: 'omh-r-s01-files', guest: '/omh/copied/files', readOnly: false },
    ])
    expect(plan.links).toEqual([
      ['/work/AGENTS.md', '/omh/copied/staged/0'],
      ['/home/agent/.skills/x', '/omh/copied/staged/1'],
      ['/home/agent/.probe.json', '/omh/copied/files/0'],
    ])
    expect(linkCommand(plan).slice(3)).toEqual(['omh-links', '/work/AGENTS.md', '/omh/copied/staged/0', '/home/agent/.skills/x', '/omh/copied/staged/1', '/home/agent/.probe.json', '/omh/copied/files/0'])
    expect(withLinks(plan).argv.slice(-3)).toEqual(['--', 'sleep', 'infinity'])
  })
})

describe('a tree whose entries are mounted', () => {
  it('copies each entry into the tree in its place, linking none into the read-only volume', async () => {
    await files({ 'tree/cmd/SKILL.md': 'c', 'tree/x/.keep': '', 'catalogue/x/SKILL.md': 'x' })
    await rm(path.join(dir, 'tree/x/.keep'))
    const plan = await planOf([
      { host: path.join(dir, 'tree'), guest: '/home/agent/.skills', readOnly: true },
      { host: path.join(dir, 'catalogue/x'), guest: '/home/agent/.skills/x', readOnly: true },
    ])
    expect(plan.links).toEqual([['/home/agent/.skills', '/omh/copied/staged/0']])
    expect(plan.volumes[0]!.entries).toEqual([{ name: '0', host: path.join(dir, 'tree'), inside: [{ rel: 'x', host: path.join(dir, 'catalogue/x') }] }])
    const pack = path.join(dir, 'pack')
    await packInside(pack, path.join(dir, 'tree'), plan.volumes[0]!.entries![0]!.inside!)
    expect(await readlink(path.join(pack, 'cmd'))).toBe(path.join(dir, 'tree/cmd'))
    expect(await readlink(path.join(pack, 'x'))).toBe(path.join(dir, 'catalogue/x'))
    expect(await readFile(path.join(pack, 'x/SKILL.md'), 'utf8')).toBe('x')
  })
})

describe('mirror', () => {
  it("makes the host directory hold what came back, keeping omh's paths and never following a link", async () => {
    await files({ 'from/new.txt': 'new', 'from/sub/changed.txt': 'after', 'to/gone.txt': 'x', 'to/sub/changed.txt': 'before', 'to/.git': 'gitdir: elsewhere', 'outside/secret': 'keep' })
    // The agent made a link in the volume; on the host a link stands where a directory comes back.
    await symlink('/omh/copied/staged/0', path.join(dir, 'from/.git'))
    await symlink('../outside', path.join(dir, 'from/agent-link'))
    await mkdir(path.join(dir, 'from/dir'))
    await writeFile(path.join(dir, 'from/dir/file'), 'in a directory')
    await symlink('../outside', path.join(dir, 'to/dir'))
    await mirror(path.join(dir, 'from'), path.join(dir, 'to'), new Set(['.git']))
    const to = (rel: string) => path.join(dir, 'to', rel)
    expect(await readFile(to('new.txt'), 'utf8')).toBe('new')
    expect(await readFile(to('sub/changed.txt'), 'utf8')).toBe('after')
    await expect(lstat(to('gone.txt'))).rejects.toThrow()
    expect(await readFile(to('.git'), 'utf8')).toBe('gitdir: elsewhere')
    expect(await readlink(to('agent-link'))).toBe('../outside')
    expect((await lstat(to('dir'))).isDirectory()).toBe(true)
    expect(await readFile(to('dir/file'), 'utf8')).toBe('in a directory')
    await expect(lstat(path.join(dir, 'outside/file'))).rejects.toThrow()
    expect(await readFile(path.join(dir, 'outside/secret'), 'utf8')).toBe('keep')
  })
})
