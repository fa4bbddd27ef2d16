import { fork, type ChildProcess } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { build, type Plugin } from 'esbuild'
import type { FromDriver, FuzzInput, ToDriver, Verdict } from './input.js'

const ROOT = path.resolve(import.meta.dirname, '../..')

// The packages under test are bundled from source, so the suite fuzzes the
// code as it is now; npm packages, the sandbox (which reads its own files
// beside it) and the renderer plugins the kernel discovers load from their
// builds, as they would for the CLI.
const BUNDLED = ['@omh/plugin-api', '@omh/plugin-kit', '@omh/kernel']
const sourcesOnly: Plugin = {
  name: 'omh-sources-only',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (BUNDLED.includes(args.path) ? undefined : { external: true }))
  },
}

let bundled: Promise<string> | undefined

/** The driver as one module beside the repository's node_modules, so that its npm imports resolve. */
async function bundleDriver(): Promise<string> {
  const outfile = path.join(ROOT, 'node_modules/.cache/omh-fuzz/driver.mjs')
  mkdirSync(path.dirname(outfile), { recursive: true })
  await build({
    entryPoints: [path.join(ROOT, 'test/fuzz/driver.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    conditions: ['source'],
    plugins: [sourcesOnly],
    logLevel: 'error',
    banner: { js: "import { createRequire as __fuzzRequire } from 'node:module'; const require = __fuzzRequire(import.meta.url);" },
  })
  return outfile
}

/**
 * One fuzz process that takes inputs one at a time. An input that takes
 * longer than its time is a hang: the process is killed and a fresh one
 * takes the next input.
 */
export class FuzzProcess {
  #child: ChildProcess | undefined
  #stderr = ''
  #next = 1
  #pending: { id: number; resolve(v: Verdict): void } | undefined

  private constructor(readonly driver: string) {}

  static async start(): Promise<FuzzProcess> {
    createRequire(import.meta.url).resolve('@omh/renderer-concat')
    bundled ??= bundleDriver()
    const pool = new FuzzProcess(await bundled)
    await pool.#spawn()
    return pool
  }

  #spawn(): Promise<void> {
    return new Promise((ready, fail) => {
      const child = fork(this.driver, [], {
        cwd: ROOT,
        env: { ...process.env, OMH_FUZZ_ROOT: ROOT },
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      })
      this.#child = child
      this.#stderr = ''
      child.stderr!.on('data', (d) => (this.#stderr = (this.#stderr + d).slice(-4000)))
      child.on('message', (m: FromDriver) => {
        if ('ready' in m) return ready()
        if (this.#pending?.id === m.id) this.#settle(m.verdict)
      })
      child.on('exit', (code, signal) => {
        if (this.#child !== child) return
        this.#child = undefined
        const why = `the fuzz process ended (${signal ?? code}): ${this.#stderr}`
        if (this.#pending) this.#settle({ kind: 'internal', detail: why })
        else fail(new Error(why))
      })
    })
  }

  #settle(verdict: Verdict): void {
    const pending = this.#pending!
    this.#pending = undefined
    pending.resolve(verdict)
  }

  /** How `input` ends, or `hang` after `timeout` ms. */
  async check(input: FuzzInput, timeout: number): Promise<Verdict> {
    if (!this.#child) await this.#spawn()
    const id = this.#next++
    const started = performance.now()
    const verdict = await new Promise<Verdict>((resolve) => {
      this.#pending = { id, resolve }
      const timer = setTimeout(() => this.#settle({ kind: 'hang', detail: `no answer in ${timeout} ms` }), timeout)
      this.#pending.resolve = (v) => {
        clearTimeout(timer)
        resolve(v)
      }
      this.#child!.send({ id, input } satisfies ToDriver)
    })
    if (verdict.kind === 'hang') this.stop()
    return { ...verdict, ms: performance.now() - started }
  }

  stop(): void {
    const child = this.#child
    this.#child = undefined
    child?.kill('SIGKILL')
  }
}
