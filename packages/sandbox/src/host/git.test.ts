import { execFileSync } from 'node:child_process'
import { readdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { isOmhError } from '@omh/plugin-api'
import { gitRepo } from '@omh/test-utils'
import { git } from './git.js'

const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' }
const refusal = (p: Promise<unknown>) => p.then(() => 'no error', (e: unknown) => (isOmhError(e) ? `${e.code}: ${e.message}` : String(e)))

describe('host git over files the agent wrote', () => {
  it('names a FIFO at a .gitignore instead of waiting on it, and leaves no lock behind', async () => {
    const repo = gitRepo({ 'dir/a.txt': 'a\n' })
    execFileSync('mkfifo', [path.join(repo, 'dir/.gitignore')])
    const started = Date.now()
    expect(await refusal(git(['status', '--porcelain'], { cwd: repo, env, agentFiles: true }))).toBe(
      `FILE_NOT_REGULAR: ${path.join(repo, 'dir/.gitignore')} is a FIFO, not a regular file: omh reads only regular files, so it never waits on a pipe or reads a device without end.`,
    )
    expect(Date.now() - started).toBeLessThan(5000)
    rmSync(path.join(repo, 'dir/.gitignore'))
    expect(await git(['status', '--porcelain'], { cwd: repo, env })).toBe('')
  })

  it('names a FIFO in place of a loose object instead of waiting on it', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' })
    writeFileSync(path.join(repo, 'a.txt'), 'changed\n')
    await git(['add', 'a.txt'], { cwd: repo, env })
    const blob = (await git(['rev-parse', ':a.txt'], { cwd: repo, env })).trim()
    const object = path.join(repo, '.git/objects', blob.slice(0, 2), blob.slice(2))
    rmSync(object, { force: true })
    execFileSync('mkfifo', [object])
    const started = Date.now()
    expect(await refusal(git(['cat-file', '-p', blob], { cwd: repo, env }))).toMatch(/^FILE_NOT_REGULAR: .* is a FIFO/)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(readdirSync(path.join(repo, '.git')).filter((f) => f.endsWith('.lock'))).toEqual([])
  })
})
