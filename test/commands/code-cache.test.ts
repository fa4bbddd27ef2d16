import { execFileSync } from 'node:child_process'
import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { testdir } from '@omh/test-utils'
import { ROOT, omh } from '../helpers/run.js'

const uid = process.getuid!()
/** No answer can be kept (packages/fast-path/src/answers.ts), so every run loads omh. */
const NO_ANSWERS = '/proc/omh-test-no-answers'

/** The code cache files in `dir` of the script `of` (by default omh's bundle), each with the kinds of command its header names. */
function caches(dir: string, of = path.join(ROOT, 'dist/omh.cjs')): { name: string; kinds: string[]; ino: number; mtimeMs: number }[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.v8'))
    .flatMap((name) => {
      const bytes = readFileSync(path.join(dir, name))
      const header = JSON.parse(bytes.subarray(4, 4 + bytes.readUInt32LE(0)).toString('utf8')) as { identity: string; kinds: string[] }
      const { ino, mtimeMs } = statSync(path.join(dir, name))
      return header.identity.startsWith(JSON.stringify([of]).slice(0, -1)) ? [{ name, kinds: header.kinds, ino, mtimeMs }] : []
    })
}

function adaptersLs(tmp: string) {
  const ran = omh(['adapters', 'ls'], { env: { TMPDIR: tmp, XDG_CACHE_HOME: NO_ANSWERS, OMH_HOME: testdir() } })
  expect(ran.status, ran.stderr).toBe(0)
  return ran.stdout
}

describe("omh's code cache", () => {
  it("is made by a first run in a directory of the user's alone, grows by each new kind of command, then is left as it is", () => {
    const tmp = testdir()
    const dir = path.join(tmp, `omh-code-${uid}`)
    const listed = adaptersLs(tmp)
    expect(lstatSync(dir).mode & 0o777).toBe(0o700)
    expect(caches(dir).map((c) => c.kinds)).toEqual([['adapters ls']])
    // zod/mini, whole, for the renderers that check the adapters' options.
    expect(caches(dir, path.join(ROOT, 'dist/zod-mini.cjs')).map((c) => c.kinds)).toEqual([['adapters ls']])

    expect(omh(['--help'], { env: { TMPDIR: tmp, XDG_CACHE_HOME: NO_ANSWERS } }).status).toBe(0)
    const [grown] = caches(dir)
    expect(grown!.kinds).toEqual(['adapters ls', '--help'])

    expect(adaptersLs(tmp)).toBe(listed)
    expect(caches(dir)).toEqual([grown])
  })

  it("is neither read nor written where the directory is not the user's alone: open to others, or a link", () => {
    const open = testdir()
    mkdirSync(path.join(open, `omh-code-${uid}`), { mode: 0o755 })
    chmodSync(path.join(open, `omh-code-${uid}`), 0o755)
    const listed = adaptersLs(open)
    expect(readdirSync(path.join(open, `omh-code-${uid}`))).toEqual([])

    const linked = testdir()
    const elsewhere = testdir()
    chmodSync(elsewhere, 0o700)
    symlinkSync(elsewhere, path.join(linked, `omh-code-${uid}`))
    expect(adaptersLs(linked)).toBe(listed)
    expect(readdirSync(elsewhere)).toEqual([])
  })

  it('is no input of a kept answer, and making it spoils none', async () => {
    const tmp = testdir()
    const answers = testdir()
    const env = { TMPDIR: tmp, XDG_CACHE_HOME: answers, OMH_HOME: testdir() }
    // A first run makes omh's state, which keeps nothing; its code cache is made elsewhere.
    expect(omh(['adapters', 'ls'], { env: { ...env, TMPDIR: testdir(), XDG_CACHE_HOME: NO_ANSWERS } }).status).toBe(0)
    // Nothing changed in the last two seconds is trusted, so nothing is kept until then.
    await new Promise((resolve) => setTimeout(resolve, 2100))
    const first = omh(['adapters', 'ls'], { env })
    expect(first.status, first.stderr).toBe(0)
    expect(caches(path.join(tmp, `omh-code-${uid}`))).toHaveLength(1)
    expect(readdirSync(path.join(answers, 'omh/answers')).length).toBeGreaterThan(0)
  })

  it('is made again when V8 refuses it or its header cannot be read, and the command runs as without it', () => {
    const tmp = testdir()
    const dir = path.join(tmp, `omh-code-${uid}`)
    const listed = adaptersLs(tmp)
    const [made] = caches(dir)
    const file = path.join(dir, made!.name)
    const bytes = readFileSync(file)
    const headerEnd = 4 + bytes.readUInt32LE(0)
    writeFileSync(file, Buffer.concat([bytes.subarray(0, headerEnd), Buffer.alloc(bytes.length - headerEnd, 0x5a)]))
    expect(adaptersLs(tmp)).toBe(listed)
    expect(readFileSync(file).subarray(headerEnd, headerEnd + 64).every((byte) => byte === 0x5a)).toBe(false)

    writeFileSync(file, bytes.subarray(0, 6))
    expect(adaptersLs(tmp)).toBe(listed)
    expect(caches(dir).map((c) => c.kinds)).toEqual([['adapters ls']])
  })

  it('is never taken for another build of the same length, and runs the bundle strict, with its imports and URL from the module standing for it', () => {
    const tmp = testdir()
    chmodSync(tmp, 0o700)
    const bundle = path.join(testdir(), 'bundle.cjs')
    const built = (word: string) =>
      writeFileSync(
        bundle,
        `exports.word = function () { return '${word}' }\nexports.strict = (function () { return this === undefined })()\nexports.url = __omhMetaUrl\nexports.join = () => __omhImport('node:path').then((m) => typeof m.join)\n`,
      )
    const driver = path.join(path.dirname(bundle), 'driver.mjs')
    writeFileSync(
      driver,
      [
        `import { codeCacheDir, runScript } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'packages/fast-path/dist/script.js')).href)}`,
        `const e = runScript(${JSON.stringify(bundle)}, { url: import.meta.url, importer: (s) => import(s), kind: 'test', cacheDir: codeCacheDir() })`,
        'console.log(JSON.stringify({ word: e.word(), strict: e.strict, url: e.url, join: await e.join() }))',
      ].join('\n'),
    )
    const run = () => JSON.parse(execFileSync(process.execPath, [driver], { env: { ...process.env, TMPDIR: tmp }, encoding: 'utf8' })) as Record<string, unknown>
    const dir = path.join(tmp, `omh-code-${uid}`)

    built('one')
    expect(run()).toEqual({ word: 'one', strict: true, url: pathToFileURL(driver).href, join: 'function' })
    const [first] = caches(dir, bundle)
    built('two')
    utimesSync(bundle, new Date(), new Date(Date.now() + 5000))
    expect(run().word).toBe('two')
    const [second, ...more] = caches(dir, bundle)
    expect(more).toEqual([])
    expect(second!.name).not.toBe(first!.name)
  })
})

describe('what a short command loads of Node', () => {
  it('takes no builtin it does not use: --help and adapters ls hash nothing, start no program and read no line', () => {
    const marks = path.join(testdir(), 'builtins.json')
    const recorder = path.join(path.dirname(marks), 'builtins.mjs')
    writeFileSync(recorder, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(marks)}, JSON.stringify(process.moduleLoadList)))\n`.replace("require('node:fs')", 'process.getBuiltinModule("node:fs")'))
    for (const args of [['--help'], ['adapters', 'ls']]) {
      const ran = omh(args, { env: { XDG_CACHE_HOME: NO_ANSWERS, OMH_HOME: testdir(), NODE_OPTIONS: `--import=${recorder}` } })
      expect(ran.status, ran.stderr).toBe(0)
      const loaded = (JSON.parse(readFileSync(marks, 'utf8')) as string[]).filter((name) => name.startsWith('NativeModule ')).map((name) => name.slice('NativeModule '.length))
      expect(loaded.filter((name) => ['crypto', 'child_process', 'readline', 'perf_hooks'].includes(name)), args.join(' ')).toEqual([])
    }
  })
})
