import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from '../helpers/run.js'

/**
 * A run recorded by the fast path's recorder in a process of its own: it reads `file`, then does `between`
 * with `node:fs` as it was before recording wrapped it (as another process would), then prints
 * what it read. Then a second process asks the fast path whether it would replay that run.
 */
function recordThenReplay(where: string, file: string, between: string): { printed: string; replayed: string } {
  const kept = path.join(where, 'kept')
  const script = `
    import fs from 'node:fs'
    const untouched = { ...fs }
    const { record } = await import(${JSON.stringify(path.join(ROOT, 'packages/fast-path/dist/record.js'))})
    await record('the-key', ${JSON.stringify(kept)})
    const text = fs.readFileSync(${JSON.stringify(file)}, 'utf8')
    ;(function (fs, recorded) { ${between} })(untouched, fs)
    process.stdout.write(text)
  `
  const replay = `
    const { replay } = await import(${JSON.stringify(path.join(ROOT, 'packages/fast-path/dist/answers.js'))})
    if (!replay('the-key', ${JSON.stringify(kept)})) process.stdout.write('<not kept>')
  `
  const env = { ...process.env, OMH_STATE: path.join(where, 'state') }
  const printed = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, env, encoding: 'utf8' })
  const replayed = execFileSync(process.execPath, ['--input-type=module', '-e', replay], { cwd: ROOT, env, encoding: 'utf8' })
  return { printed, replayed }
}

describe('a recorded answer', () => {
  let dir: string
  // A file changed in the last two seconds may change again unseen, so nothing that recent is kept:
  // the files are made once, and the tests wait that long once.
  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'omh-record-')))
    for (const side of ['a', 'b']) {
      mkdirSync(path.join(dir, side))
      writeFileSync(path.join(dir, side, 'file'), `from ${side.toUpperCase()}\n`)
    }
    symlinkSync(path.join(dir, 'a'), path.join(dir, 'current'))
    await new Promise((r) => setTimeout(r, 2100))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('is kept when nothing it read changed, and replayed as printed', () => {
    expect(recordThenReplay(path.join(dir, 'plain'), path.join(dir, 'a/file'), '')).toEqual({ printed: 'from A\n', replayed: 'from A\n' })
  })

  it('is kept a moment after an edit on a file system with fine times, not two seconds after', async () => {
    mkdirSync(path.join(dir, 'fresh'))
    writeFileSync(path.join(dir, 'fresh/file'), 'just written\n')
    await new Promise((r) => setTimeout(r, 300))
    expect(recordThenReplay(path.join(dir, 'fresh-run'), path.join(dir, 'fresh/file'), '')).toEqual({ printed: 'just written\n', replayed: 'just written\n' })
  })

  it('is not kept when the run read a device or a view of a process', () => {
    expect(recordThenReplay(path.join(dir, 'proc'), `/proc/self/root${path.join(dir, 'a/file')}`, '')).toEqual({ printed: 'from A\n', replayed: '<not kept>' })
  })

  it('is not kept when the run called a function of node:fs it does not know, such as glob', () => {
    expect(recordThenReplay(path.join(dir, 'glob'), path.join(dir, 'a/file'), `recorded.globSync('*', { cwd: ${JSON.stringify(path.join(dir, 'a'))} })`)).toEqual({ printed: 'from A\n', replayed: '<not kept>' })
  })

  // Last: it leaves the link switched.
  it('is not kept when a parent link is switched while the run reads through it', () => {
    const next = path.join(dir, 'next')
    const switchLink = `fs.symlinkSync(${JSON.stringify(path.join(dir, 'b'))}, ${JSON.stringify(next)}); fs.renameSync(${JSON.stringify(next)}, ${JSON.stringify(path.join(dir, 'current'))})`
    expect(recordThenReplay(path.join(dir, 'switch'), path.join(dir, 'current/file'), switchLink)).toEqual({ printed: 'from A\n', replayed: '<not kept>' })
  })
})
