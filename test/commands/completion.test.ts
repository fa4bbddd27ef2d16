import { spawnSync } from 'node:child_process'
import { symlinkSync } from 'node:fs'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { repository } from '@omh/sandbox'
import { BIN, omh, stateOf } from '../helpers/run.js'
import { gitRepo, testdir, write } from '@omh/test-utils'

/** A profile with a harness of its own, and a repository with two sessions. */
function setup() {
  const home = testdir({
    'adapters/mine.toml': 'name = "mine"\nbin = "mine"\ninstall = "true"\n[capabilities.rules]\npath = "/work/AGENTS.md"\nrender = "concat"\n',
  })
  const repo = gitRepo()
  write(stateOf(home), { [`worktrees/${repository(repo).id}/s01/.keep`]: '', [`worktrees/${repository(repo).id}/s02/.keep`]: '' })
  // `omh` on PATH, as an installed omh is.
  const bin = testdir()
  symlinkSync(BIN, path.join(bin, 'omh'))
  const env = { ...process.env, OMH_HOME: home, OMH_STATE: stateOf(home), HOME: testdir(), PATH: `${bin}:${process.env['PATH']}`, NO_COLOR: '1' }
  const scripts = new Map<string, string>()
  const script = (shell: string) => {
    if (!scripts.has(shell)) scripts.set(shell, omh(['completion', shell], { env }).stdout)
    return scripts.get(shell)!
  }
  return { repo, env, script }
}

const run = (cmd: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; input?: string }) => {
  const r = spawnSync(cmd, args, { ...options, encoding: 'utf8', timeout: 60_000 })
  if (r.status !== 0) throw new Error(`${cmd} exited ${r.status}: ${r.error?.message ?? r.stderr}`)
  return r.stdout
}
const words = (out: string) => out.split('\n').filter(Boolean).map((l) => l.split('\t')[0]!)

describe('omh completion', () => {
  // Test folders go at the end of each test.
  let t: ReturnType<typeof setup>
  beforeEach(() => {
    t = setup()
  })

  /** What bash completes for `line`, the cursor at its end: the real script, compgen and COMP_WORDS. */
  function bash(line: string): string[] {
    const program = `${t.script('bash')}
COMP_LINE=${JSON.stringify(line)}; COMP_POINT=\${#COMP_LINE}
read -ra COMP_WORDS <<< "$COMP_LINE"
[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')
COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
complete -p omh >/dev/null
_omh_complete omh
printf '%s\\n' "\${COMPREPLY[@]}"`
    return words(run('bash', ['--norc', '-c', program], { cwd: t.repo, env: t.env }))
  }

  it('prints a script for bash, zsh and fish, and asks which when $SHELL names none of them', () => {
    expect(t.script('bash')).toContain('complete -o default')
    expect(t.script('zsh')).toMatch(/^#compdef omh/)
    expect(t.script('fish')).toContain("complete -c omh -f -a '(__omh_complete)'")
    expect(omh(['completion'], { env: { ...t.env, SHELL: '/bin/zsh' } }).stdout).toBe(t.script('zsh'))
    const none = omh(['completion'], { env: { ...t.env, SHELL: undefined } })
    expect(none.status).toBe(2)
    expect(none.stderr).toContain('name the shell to complete in: bash, zsh, fish ($SHELL is not set)')
    expect(omh(['completion', 'tcsh'], { env: t.env }).status).toBe(2)
  })

  describe('bash', () => {
    it('completes commands and the harnesses omh finds, the personal one included', () => {
      expect(bash('omh ')).toEqual(expect.arrayContaining(['adapters', 'sessions', 'doctor', 'completion', 'claude', 'codex', 'opencode', 'mine']))
      expect(bash('omh ')).not.toContain('launch')
      expect(bash('omh d')).toEqual(['doctor', 'droid'])
      expect(bash('omh doctor ').sort()).toEqual(['amp', 'claude', 'codex', 'continue', 'copilot', 'droid', 'gemini', 'kilo', 'mine', 'opencode', 'pi', 'qwen'])
      expect(bash('omh doctor m')).toEqual(['mine'])
      expect(bash('omh adapters show c')).toEqual(['claude', 'codex', 'continue', 'copilot'])
    })

    it('completes subcommands, and session ids after omh sessions …', () => {
      expect(bash('omh sessions ')).toEqual(['allow', 'attach', 'commit', 'diff', 'down', 'egress', 'exec', 'logs', 'ls', 'ports', 'push', 'rm', 'show', 'test', 'watch'])
      expect(bash('omh sessions rm ')).toEqual(['s01', 's02'])
      expect(bash('omh sessions diff --stat s0')).toEqual(['s01', 's02'])
      expect(bash('omh attach --session ')).toEqual(['s01', 's02'])
      expect(bash('omh --session ')).toEqual(['s01', 's02'])
      expect(bash('omh config mcp ')).toEqual(['add', 'import', 'ls', 'rm'])
    })

    it("completes each command's flags, a flag's choices, and nothing of the harness's own words", () => {
      expect(bash('omh sessions rm --')).toEqual(expect.arrayContaining(['--force', '--runtime', '--json']))
      expect(bash('omh --n')).toEqual(['--new', '--name'])
      expect(bash('omh render --color ')).toEqual(expect.arrayContaining(['auto', 'always', 'never']))
      expect(bash('omh claude --')).toEqual([])
      expect(bash('omh claude -- ')).toEqual([])
    })

    it('leaves a file argument to the shell', () => {
      write(t.repo, { 'adapter-x.toml': '' })
      expect(bash('omh adapters validate adapter-')).toEqual(['adapter-x.toml'])
    })
  })

  describe('fish', () => {
    /** What fish completes for `line`: the real script, fish's own `complete -C`. */
    const fish = (line: string) => words(run('fish', ['--no-config', '-c', `${t.script('fish')}\ncomplete -C ${JSON.stringify(line)}`], { cwd: t.repo, env: t.env }))

    it('completes commands, harnesses, subcommands, session ids and flags', () => {
      expect(fish('omh ')).toEqual(expect.arrayContaining(['adapters', 'sessions', 'claude', 'mine']))
      expect(fish('omh sessions ')).toEqual(['allow', 'attach', 'commit', 'diff', 'down', 'egress', 'exec', 'logs', 'ls', 'ports', 'push', 'rm', 'show', 'test', 'watch'])
      expect(fish('omh sessions commit ')).toEqual(['s01', 's02'])
      expect(fish('omh doctor --r')).toEqual(['--runtime'])
    })
  })

  describe('zsh', () => {
    /**
     * What zsh completes for `line`. zsh's completion system runs only inside
     * its line editor, so compadd and _describe are replaced by functions that
     * print what they are given; the script's own code runs unchanged.
     */
    const zsh = (line: string) => {
      const program = `compdef() { : }
compadd() { [[ $1 == -a ]] && print -l -- \${(P)2} }
_describe() { local w; for w in \${(P)4}; do print -r -- "\${\${w%%:*}//\\\\\\\\/}"; done }
_files() { print -- ':files' }
${t.script('zsh')}
words=(\${(z)\${:-${JSON.stringify(line)}}}); [[ ${JSON.stringify(line)} == *' ' ]] && words+=('')
CURRENT=\${#words}
_omh`
      return words(run('zsh', ['-f', '-c', program], { cwd: t.repo, env: t.env }))
    }

    it('passes zsh -n, and completes commands, harnesses, subcommands, session ids and flags', () => {
      run('zsh', ['-n', '-c', t.script('zsh')], { cwd: t.repo, env: t.env })
      expect(zsh('omh ')).toEqual(expect.arrayContaining(['adapters', 'sessions', 'claude', 'mine']))
      expect(zsh('omh sessions ')).toEqual(['allow', 'attach', 'commit', 'diff', 'down', 'egress', 'exec', 'logs', 'ls', 'ports', 'push', 'rm', 'show', 'test', 'watch'])
      expect(zsh('omh sessions down ')).toEqual(['s01', 's02'])
      expect(zsh('omh trust --')).toEqual(expect.arrayContaining(['--show', '--revoke']))
    })
  })
})
