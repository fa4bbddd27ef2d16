// Global setup of an e2e project: its engines must answer before any test
// runs, and nothing labelled for tests is left in them afterwards. Each engine
// has a project of its own (vitest.config.ts), so this sees one engine, and
// never cleans up after the other project while it runs.
import type { TestProject } from 'vitest/node'
import { TEST_BASE, cleanupEngine, client, enginesNamed, leftovers, removeRunImages, requireEngine } from '../helpers/engines.js'

export default async function setup(project: TestProject): Promise<() => void> {
  const engines = enginesNamed(project.config.env['OMH_TEST_ENGINES'])
  // Workers start after this and inherit it: every file of this run shares one run id.
  process.env['OMH_TEST_RUN'] ??= `${Date.now().toString(36)}${process.pid}`
  for (const engine of engines) {
    await requireEngine(engine)
    if (client(engine, ['image', 'inspect', TEST_BASE]).status !== 0) {
      throw new Error(
        `${engine} has no ${TEST_BASE}, the image the end-to-end tests build from. Build it with ` +
          `\`OMH_FLAVOR=debian OMH_IMAGE=${TEST_BASE} ../shared/runtimes/provision.sh image\`, or name another Debian-based image in OMH_TEST_BASE.`,
      )
    }
  }
  return () => {
    for (const engine of engines) {
      removeRunImages(engine)
      cleanupEngine(engine)
    }
    const left = engines.flatMap((engine) => leftovers(engine).map((what) => `${engine}: ${what}`))
    if (left.length) throw new Error(`the end-to-end tests left behind: ${left.join(', ')}`)
  }
}
