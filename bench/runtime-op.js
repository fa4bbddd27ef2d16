// Runtime operations as omh does them, for bench/runtimes.js:
//   node bench/runtime-op.js <engine> run <image>
//       one process: load the plugin, run `true` in a one-shot container, exit
//   node bench/runtime-op.js <engine> steps <image> <runs> <label>
//       in one process, the median ms of each step a launch asks of a runtime,
//       printed as JSON: detect, ensureImage with every image present, list by labels
import { performance } from 'node:perf_hooks'
import { median } from './lib.js'

const [engine, op, image, runs = '15', label = 'bench'] = process.argv.slice(2)
const runtime = (await import(`@omh/runtime-${engine}`)).default
const context = { env: process.env, progress: () => {}, verbose: false }

async function timed(step) {
  await step()
  const times = []
  for (let n = 0; n < Number(runs); n++) {
    const start = performance.now()
    await step()
    times.push(performance.now() - start)
  }
  return median(times)
}

if (op === 'run') {
  const result = await runtime.run({ image, mounts: [], env: {}, labels: {}, workdir: '/', user: '0', argv: ['true'] }, context)
  process.exitCode = result.exitCode
} else if (op === 'steps') {
  const { ensureImage, planImages } = await import('@omh/sandbox')
  // A harness whose layer installs nothing: building it measures the engine, not an install.
  const plan = planImages({ name: 'bench', bin: 'true', install: 'true', bindings: [], creds: [], token: [] }, { from: image, network: 'host', labels: { 'omh.bench': label } })
  const built = await ensureImage(runtime, plan, context)
  const figures = {
    detect: await timed(() => runtime.detect(context)),
    ensure: await timed(() => ensureImage(runtime, plan, context)),
    list: await timed(() => runtime.list({ 'omh.bench': label }, context)),
    harness: plan.harness.tag,
    built: built.built,
  }
  console.log(JSON.stringify(figures))
} else {
  throw new Error(`unknown operation ${op}`)
}
