import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { omhStateOf } from '@omh/kernel'
import { gitRepo, testdir, write } from '@omh/test-utils'
import { ensureStateDir, moveState } from './state-move.js'

const env = process.env
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: 'pipe' }).trim()

/** A profile as an older omh left it: the user's files, and state beside them, with a real worktree of `repo`. */
function oldProfile(home: string, repo: string): void {
  write(home, {
    'settings.toml': 'runtime = "docker"\n',
    'rules/style.md': 'Be brief.\n',
    'creds/claude/default/.claude/.credentials.json': '{"token":"t"}\n',
    'keys/r-1/id_ed25519': 'KEY\n',
    'run/r-1/s01/last-used': 'then\n',
    'shadow/r-1/s01.git/HEAD': 'ref: refs/heads/main\n',
    'trust.json': '{"version":1,"repositories":{}}\n',
  })
  chmodSync(path.join(home, 'creds/claude/default/.claude/.credentials.json'), 0o600)
  mkdirSync(path.join(home, 'worktrees/r-1'), { recursive: true })
  git(repo, 'worktree', 'add', '-q', '-b', 'omh/s01', path.join(home, 'worktrees/r-1/s01'))
}

const shm = existsSync('/dev/shm') ? '/dev/shm' : undefined
const elsewhere: string[] = []
afterEach(() => {
  for (const dir of elsewhere.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('where state lives', () => {
  it('is $OMH_STATE, else $XDG_STATE_HOME/omh when absolute, else ~/.local/state/omh; never the profile', () => {
    expect(omhStateOf({ HOME: '/h', OMH_HOME: '/p', OMH_STATE: '/s' })).toBe('/s')
    expect(omhStateOf({ HOME: '/h', OMH_HOME: '/p', XDG_STATE_HOME: '/x' })).toBe('/x/omh')
    expect(omhStateOf({ HOME: '/h', OMH_HOME: '/p', XDG_STATE_HOME: 'relative' })).toBe('/h/.local/state/omh')
    expect(omhStateOf({ HOME: '/h', OMH_HOME: '/p' })).toBe('/h/.local/state/omh')
  })

  it('is made readable by its owner only', async () => {
    const state = path.join(testdir(), 'deep', 'state')
    await ensureStateDir(state)
    expect(statSync(state).mode & 0o777).toBe(0o700)
  })
})

const onShm = (): string => {
  const dir = mkdtempSync(path.join(shm!, 'omh-test-'))
  elsewhere.push(dir)
  return dir
}
const places: [string, () => string][] = [['within a filesystem', () => testdir()], ...(shm ? [['across filesystems', onShm] as [string, () => string]] : [])]

describe.each(places)('moving state out of an old profile %s', (_, profileDir) => {
  it('moves every entry, keeps the profile, keeps modes, and relinks the worktree with git', async () => {
    const repo = gitRepo()
    const home = path.join(profileDir(), 'home')
    const state = path.join(testdir(), 'state')
    oldProfile(home, repo)
    const move = await moveState(home, state, env)
    expect(move.conflicts).toEqual([])
    expect([...move.moved].sort()).toEqual(['creds/claude/default', 'keys/r-1', 'run/r-1/s01', 'shadow/r-1/s01.git', 'trust.json', 'worktrees/r-1/s01'])
    expect(readdirSync(home).sort()).toEqual(['rules', 'settings.toml'])
    expect(readdirSync(state).sort()).toEqual(['creds', 'keys', 'run', 'shadow', 'trust.json', 'worktrees'])
    expect(statSync(path.join(state, 'creds/claude/default/.claude/.credentials.json')).mode & 0o777).toBe(0o600)
    const worktree = path.join(state, 'worktrees/r-1/s01')
    expect(git(worktree, 'branch', '--show-current')).toBe('omh/s01')
    expect(git(repo, 'worktree', 'list', '--porcelain')).toContain(`worktree ${worktree}`)
    git(repo, 'worktree', 'prune')
    expect(git(repo, 'worktree', 'list', '--porcelain')).toContain(`worktree ${worktree}`)
  })

  it('leaves a unit the state directory already holds where it is and reports it', async () => {
    const home = path.join(profileDir(), 'home')
    const state = testdir({ 'keys/r-1/id_ed25519': 'NEWER\n' })
    write(home, { 'keys/r-1/id_ed25519': 'OLDER\n', 'keys/r-2/id_ed25519': 'OTHER\n' })
    const move = await moveState(home, state, env)
    expect(move).toMatchObject({ moved: ['keys/r-2'], conflicts: ['keys/r-1'] })
    expect(readFileSync(path.join(state, 'keys/r-1/id_ed25519'), 'utf8')).toBe('NEWER\n')
    expect(readFileSync(path.join(home, 'keys/r-1/id_ed25519'), 'utf8')).toBe('OLDER\n')
  })

  it('finishes a move that was cut short, from the profile its journal names', async () => {
    const first = path.join(profileDir(), 'first')
    const state = testdir()
    write(first, { 'keys/r-1/id_ed25519': 'K1\n', 'keys/r-2/id_ed25519': 'K2\n', 'scratch/doctor-x/f': 'x\n' })
    // Cut short across filesystems: r-1 placed whole, its original not yet removed; a half copy of scratch left over.
    write(state, { 'keys/r-1/id_ed25519': 'K1\n', '.moving/.placing': 'keys/r-1', '.moving/scratch/doctor-x/partial': 'x' })
    writeFileSync(path.join(state, '.move-journal.json'), JSON.stringify({ from: first }))
    const move = await moveState(path.join(testdir(), 'other-profile'), state, env)
    expect(move.conflicts).toEqual([])
    expect([...move.moved].sort()).toEqual(['keys/r-2', 'scratch/doctor-x'])
    expect(existsSync(first)).toBe(true)
    expect(readdirSync(first)).toEqual([])
    expect(readdirSync(state).sort()).toEqual(['keys', 'scratch'])
    expect(readdirSync(path.join(state, 'scratch/doctor-x'))).toEqual(['f'])
  })
})
