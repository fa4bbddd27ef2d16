// Global setup of the e2e project: both engines must answer before any test
// runs, and nothing labelled for tests is left in either afterwards.
import { ENGINES, TEST_BASE, cleanupEngine, client, leftovers, requireEngine } from '../helpers/engines.js'

export async function setup(): Promise<void> {
  // Workers start after this and inherit it: every file of this run shares one run id.
  process.env['OMH_TEST_RUN'] ??= `${Date.now().toString(36)}${process.pid}`
  for (const engine of ENGINES) {
    await requireEngine(engine)
    if (client(engine, ['image', 'inspect', TEST_BASE]).status !== 0) {
      throw new Error(
        `${engine} has no ${TEST_BASE}, the image the end-to-end tests build from. Build it with ` +
          `\`OMH_FLAVOR=debian OMH_IMAGE=${TEST_BASE} ../shared/runtimes/provision.sh image\`, or name another Debian-based image in OMH_TEST_BASE.`,
      )
    }
  }
}

export async function teardown(): Promise<void> {
  for (const engine of ENGINES) cleanupEngine(engine)
  const left = ENGINES.flatMap((engine) => leftovers(engine).map((what) => `${engine}: ${what}`))
  if (left.length) throw new Error(`the end-to-end tests left behind: ${left.join(', ')}`)
}
