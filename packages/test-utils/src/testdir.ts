import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach } from 'vitest'

const made: string[] = []

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A temporary directory holding `files` (path → content), removed after the test. */
export function testdir(files: Record<string, string> = {}): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-test-')))
  made.push(dir)
  write(dir, files)
  return dir
}

export function write(dir: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name)
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, content)
  }
}

/** A git repository with one commit holding `files`. */
export function gitRepo(files: Record<string, string> = { 'README.md': '# test\n' }): string {
  const dir = testdir(files)
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' })
  git('init', '-q', '-b', 'main')
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '-A')
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'init')
  return dir
}
