import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { testdir } from '@omh/test-utils'
import { digestBytes, digestOf, measure, runProbe } from './runner.js'

const node = process.execPath

describe('doctor runner', () => {
  it('digests a file as its bytes, and a tree by paths, kinds, executable bits and contents', async () => {
    const dir = testdir({ 'a.txt': 'hello', 'skill/SKILL.md': '---\nname: s\n---\n', 'skill/tools/run.sh': 'echo hi' })
    expect(digestOf(path.join(dir, 'a.txt'))).toEqual({ sha256: digestBytes('hello'), kind: 'file' })
    const before = digestOf(path.join(dir, 'skill'))
    expect(before).toMatchObject({ kind: 'directory' })
    const copy = testdir({ 'skill/SKILL.md': '---\nname: s\n---\n', 'skill/tools/run.sh': 'echo hi' })
    expect(digestOf(path.join(copy, 'skill'))).toEqual(before)
    chmodSync(path.join(copy, 'skill/tools/run.sh'), 0o755)
    expect(digestOf(path.join(copy, 'skill'))).not.toEqual(before)
  })

  it('follows a link at the top, as a staged tree entry is one, and says why a path has no digest', async () => {
    const dir = testdir({ 'src/skill/SKILL.md': 'x' })
    mkdirSync(path.join(dir, 'tree'))
    symlinkSync(path.join(dir, 'src/skill'), path.join(dir, 'tree/skill'))
    symlinkSync(path.join(dir, 'nowhere'), path.join(dir, 'tree/dangling'))
    expect(digestOf(path.join(dir, 'tree/skill'))).toEqual(digestOf(path.join(dir, 'src/skill')))
    expect(digestOf(path.join(dir, 'tree/dangling'))).toEqual({ error: expect.stringMatching(/^ENOENT: /) })
  })

  it('checks syntax with the given command, finds executables on PATH, and renames over a login file', async () => {
    const dir = testdir({ 'good.js': 'export const a = 1\n', 'bad.js': 'export const a = {\n', 'creds/token.json': '{"t":1}' })
    const report = await measure({
      syntax: [
        { path: path.join(dir, 'good.js'), argv: [node, '--check'] },
        { path: path.join(dir, 'bad.js'), argv: [node, '--check'] },
      ],
      bins: ['node', 'omh-no-such-binary'],
      renames: [path.join(dir, 'creds/token.json'), path.join(dir, 'creds/absent.json'), path.join(dir, 'missing/token.json')],
    })
    expect(report.syntax[path.join(dir, 'good.js')]).toEqual({ ok: true, output: '' })
    expect(report.syntax[path.join(dir, 'bad.js')]).toMatchObject({ ok: false, output: expect.stringContaining('SyntaxError') })
    expect(report.bins['node']?.path).toBeTruthy()
    expect(report.bins['omh-no-such-binary']).toEqual({})
    expect(report.renames[path.join(dir, 'creds/token.json')]).toEqual({ ok: true, detail: 'replaced by a renamed copy of itself' })
    expect(readFileSync(path.join(dir, 'creds/token.json'), 'utf8')).toBe('{"t":1}')
    expect(report.renames[path.join(dir, 'creds/absent.json')]).toEqual({ ok: true, detail: 'created by rename, then removed' })
    expect(report.renames[path.join(dir, 'missing/token.json')]).toMatchObject({ ok: false, detail: expect.stringMatching(/^ENOENT/) })
  })

  it('speaks a protocol: each line waits for its reply, and stdin closes after the last', async () => {
    const dir = testdir({
      'server.js': `
        const rl = require('node:readline').createInterface({ input: process.stdin })
        rl.on('line', (l) => { const m = JSON.parse(l); if (m.id) setTimeout(() => console.log(JSON.stringify({ id: m.id, result: m.method })), 50) })
        rl.on('close', () => console.log('bye'))
      `,
    })
    const out = await runProbe({
      run: `${node} ${path.join(dir, 'server.js')}`,
      send: [
        { line: '{"id":1,"method":"initialize"}', until: '"id":1,' },
        { line: '{"method":"initialized"}' },
        { line: '{"id":2,"method":"hooks/list"}', until: '"id":2,' },
      ],
      timeout: 10,
    })
    expect(out).toEqual({
      exit: 0,
      stdout: '{"id":1,"result":"initialize"}\n{"id":2,"result":"hooks/list"}\nbye\n',
      stderr: '',
    })
  })

  it('kills a probe that runs past its timeout, with everything it started', async () => {
    const started = Date.now()
    const out = await runProbe({ run: 'echo started; sleep 30 & sleep 30', timeout: 1 })
    expect(out).toMatchObject({ exit: null, timedOut: true, stdout: 'started\n' })
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it('reports the exit status and both streams, and environment additions', async () => {
    expect(await runProbe({ run: 'echo "$OMH_X"; echo oops >&2; exit 3', env: { OMH_X: 'x1' }, timeout: 5 })).toEqual({
      exit: 3,
      stdout: 'x1\n',
      stderr: 'oops\n',
    })
  })

  it("gives a probe's arguments to its command as positional parameters, each one word", async () => {
    const out = await runProbe({ run: `printf '<%s>' "$@"; echo " $#"`, args: ['--allowedTools=Grep(./**),Glob(./**)', 'two words', '$HOME'], timeout: 5 })
    expect(out.stdout).toBe('<--allowedTools=Grep(./**),Glob(./**)><two words><$HOME> 3\n')
    expect((await runProbe({ run: 'echo "$#"', timeout: 5 })).stdout).toBe('0\n')
  })

  it('runs as a script: a plan file in, a report on stdout', () => {
    const dir = testdir({ 'plan.json': JSON.stringify({ bins: ['sh'], probes: { p: { run: 'echo hi', timeout: 5 } } }) })
    const script = path.join(dir, 'runner.mjs')
    writeFileSync(script, readFileSync(new URL('../dist/runner.js', import.meta.url)))
    const report = JSON.parse(execFileSync(node, [script, path.join(dir, 'plan.json')], { encoding: 'utf8' }))
    expect(report.probes).toEqual({ p: { exit: 0, stdout: 'hi\n', stderr: '' } })
    expect(report.bins.sh.path).toBeTruthy()
  })
})
