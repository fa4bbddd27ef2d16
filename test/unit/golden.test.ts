import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { Kernel, projectRulesOf, resolveProfile } from '@omh/kernel'
import { stage, stateHooks } from '@omh/sandbox'
import { ROOT } from '../helpers/run.js'
import { testdir } from '@omh/test-utils'

// The exact bytes each bundled adapter stages for one profile that uses every class. Regenerate
// with OMH_UPDATE_GOLDEN=1 after a deliberate change, and read the diff: it is what harnesses get.
const GOLDEN = path.join(ROOT, 'test/fixtures/golden')
const update = process.env['OMH_UPDATE_GOLDEN'] === '1'

function walk(dir: string, base = dir): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name)
    const info = lstatSync(file)
    if (info.isSymbolicLink()) out[path.relative(base, file)] = `-> ${path.basename(readlinkSync(file))}`
    else if (info.isDirectory()) Object.assign(out, walk(file, base))
    else out[path.relative(base, file)] = readFileSync(file, 'utf8')
  }
  return out
}

describe('golden staging for every bundled adapter', () => {
  for (const harness of readdirSync(path.join(ROOT, 'adapters')).filter((f) => f.endsWith('.toml')).map((f) => f.slice(0, -'.toml'.length))) {
    it(`${harness} stages exactly the recorded bytes`, async () => {
      const kernel = await Kernel.create({
        cwd: path.join(GOLDEN, 'project'),
        env: { OMH_HOME: path.join(GOLDEN, 'profile'), HOME: testdir() },
        defaultsFile: path.join(ROOT, 'defaults/settings.toml'),
        bundledAdapters: path.join(ROOT, 'adapters'),
        fallbackDirs: [ROOT],
      })
      const adapter = await kernel.adapter(harness)
      const profile = await resolveProfile({
        omhHome: kernel.omhHome,
        projectDir: path.join(GOLDEN, 'project'),
        projectRules: projectRulesOf(adapter),
        use: kernel.settings.use,
      })
      // With the state hooks every launch adds: each harness whose adapter binds hooks writes them.
      const report = await kernel.render(adapter, profile, stateHooks(adapter))
      const dir = testdir()
      await stage(report, dir)
      const staged = walk(dir)
      const facts = { dropped: report.dropped, translated: report.translated, env: report.env, notices: profile.notices }
      const expectedDir = path.join(GOLDEN, harness)
      if (update) {
        rmSync(expectedDir, { recursive: true, force: true })
        for (const [rel, content] of Object.entries(staged)) {
          mkdirSync(path.dirname(path.join(expectedDir, 'staged', rel)), { recursive: true })
          writeFileSync(path.join(expectedDir, 'staged', rel), content)
        }
        writeFileSync(path.join(expectedDir, 'facts.json'), `${JSON.stringify(facts, null, 2)}\n`)
      }
      expect(staged).toEqual(walk(path.join(expectedDir, 'staged')))
      expect(facts).toEqual(JSON.parse(readFileSync(path.join(expectedDir, 'facts.json'), 'utf8')))
    })
  }
})
