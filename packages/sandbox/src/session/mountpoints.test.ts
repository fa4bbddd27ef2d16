import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { failure } from '@omh/test-utils'
import { testdir } from '@omh/test-utils'
import { clearMountpoints, prepareMountpoints } from './mountpoints.js'

describe('mountpoints and links', () => {
  it('a link the repository committed (docs -> elsewhere) gets nothing made through it, and the launch stops saying why', async () => {
    const dir = testdir({ 'elsewhere/.keep': '' })
    const work = path.join(dir, 'work')
    mkdirSync(work)
    symlinkSync(path.join(dir, 'elsewhere'), path.join(work, 'docs'))
    const run = path.join(dir, 'run')
    const error = await failure(() =>
      prepareMountpoints(run, [
        { root: work, host: path.join(work, 'RULES.md'), kind: 'file' },
        { root: work, host: path.join(work, 'docs/deep/x.md'), kind: 'file' },
      ]),
    )
    expect(error.code).toBe('MOUNTPOINT_LINK')
    expect(error.exit).toBe(1)
    expect(error.message).toBe(
      `${path.join(work, 'docs')} is a symbolic link (to ${path.join(dir, 'elsewhere')}); omh creates no mountpoint through a link, so it did not make ${path.join(work, 'docs/deep/x.md')}.`,
    )
    expect(readdirSync(path.join(dir, 'elsewhere'))).toEqual(['.keep'])
    // What was made before the link was met is recorded, and goes with the container.
    expect(existsSync(path.join(work, 'RULES.md'))).toBe(true)
    await clearMountpoints(run)
    expect(readdirSync(work)).toEqual(['docs'])
  })

  it("an agent that swapped a login's folder for a link has the link taken away, nothing made at its target, and the launch goes on", async () => {
    const dir = testdir({ 'host/.keep': '' })
    const creds = path.join(dir, 'state/creds/h/default/.h')
    mkdirSync(creds, { recursive: true })
    const run = path.join(dir, 'state/run/r/s01')
    for (const target of [path.join(dir, 'host'), path.join(dir, 'host/missing')]) {
      symlinkSync(target, path.join(creds, 'agents'))
      await prepareMountpoints(run, [
        { root: creds, host: path.join(creds, 'agents'), kind: 'directory' as const },
        { root: creds, host: path.join(creds, 'agents/a.md'), kind: 'file' as const },
      ])
      expect(lstatSync(path.join(creds, 'agents')).isDirectory()).toBe(true)
      expect(readFileSync(path.join(creds, 'agents/a.md'), 'utf8')).toBe('')
      await clearMountpoints(run)
      expect(existsSync(path.join(creds, 'agents'))).toBe(false)
    }
    expect(readdirSync(path.join(dir, 'host'))).toEqual(['.keep'])
  })

  it('a link in a folder outside omh\'s logins (a worktree) is still refused', async () => {
    const dir = testdir({ 'host/.keep': '' })
    const work = path.join(dir, 'state/worktrees/r/s01')
    mkdirSync(work, { recursive: true })
    symlinkSync(path.join(dir, 'host'), path.join(work, 'agents'))
    const error = await failure(() => prepareMountpoints(path.join(dir, 'state/run/r/s01'), [{ root: work, host: path.join(work, 'agents/a.md'), kind: 'file' }]))
    expect(error.code).toBe('MOUNTPOINT_LINK')
    expect(readdirSync(path.join(dir, 'host'))).toEqual(['.keep'])
  })

  it('removes nothing through a link made after the mountpoint was', async () => {
    const dir = testdir({ 'work/docs/.keep': '', 'elsewhere/x.md': '' })
    const work = path.join(dir, 'work')
    const run = path.join(dir, 'run')
    await prepareMountpoints(run, [{ root: work, host: path.join(work, 'docs/x.md'), kind: 'file' }])
    expect(readFileSync(path.join(work, 'docs/x.md'), 'utf8')).toBe('')
    rmSync(path.join(work, 'docs'), { recursive: true })
    symlinkSync(path.join(dir, 'elsewhere'), path.join(work, 'docs'))
    await clearMountpoints(run)
    expect(existsSync(path.join(dir, 'elsewhere/x.md'))).toBe(true)
  })

  it("removes nothing a corrupt record names outside omh's state or outside its own root, and does not fail on it", async () => {
    const dir = testdir({ 'home/empty.txt': '', 'state/worktrees/r/s01/made.md': '', 'state/worktrees/r/s01/.keep': '' })
    const run = path.join(dir, 'state/run/r/s01')
    const work = path.join(dir, 'state/worktrees/r/s01')
    mkdirSync(run, { recursive: true })
    writeFileSync(
      path.join(run, 'mountpoints.json'),
      JSON.stringify([
        { path: path.join(dir, 'home/empty.txt'), root: path.join(dir, 'home') },
        { path: path.join(work, '../../../../home/empty.txt'), root: work },
        { path: path.join(dir, 'home/empty.txt'), root: work },
        path.join(dir, 'home/empty.txt'),
        { path: path.join(work, 'made.md'), root: work },
      ]),
    )
    await clearMountpoints(run)
    expect(existsSync(path.join(dir, 'home/empty.txt'))).toBe(true)
    expect(readdirSync(work)).toEqual(['.keep'])
  })

  it('still makes missing folders and files where no link is', async () => {
    const dir = testdir({ 'work/docs/.keep': '' })
    const work = path.join(dir, 'work')
    const run = path.join(dir, 'run')
    await prepareMountpoints(run, [
      { root: work, host: path.join(work, 'docs/a/b/x.md'), kind: 'file' },
      { root: work, host: path.join(work, 'skills'), kind: 'directory' },
    ])
    expect(readFileSync(path.join(work, 'docs/a/b/x.md'), 'utf8')).toBe('')
    await clearMountpoints(run)
    expect(readdirSync(work)).toEqual(['docs'])
    expect(readdirSync(path.join(work, 'docs'))).toEqual(['.keep'])
  })
})
