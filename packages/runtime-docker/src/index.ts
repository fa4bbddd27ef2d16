import { createRequire } from 'node:module'
import { PLUGIN_API_VERSION, defineRuntime, type RuntimeContext } from '@omh/kernel/plugin'

const { name, version } = createRequire(import.meta.url)('../package.json') as { name: string; version: string }

const later = (what: string) => async (): Promise<never> => {
  throw new Error(`${what} is not available in this release of ${name}`)
}

export default defineRuntime({
  kind: 'runtime',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  engine: 'docker',
  async detect(context: RuntimeContext) {
    const { execa } = await import('execa')
    const result = await execa('docker', ['version', '--format', '{{.Server.Version}}'], {
      env: context.env,
      extendEnv: false,
      reject: false,
      timeout: 15_000,
    })
    if (result.exitCode === 0 && result.stdout.trim()) return { engine: 'docker', version: result.stdout.trim() }
    const reason = result.failed && 'code' in result && result.code === 'ENOENT' ? 'not installed' : result.stderr.trim().split('\n')[0] || 'not answering'
    return { engine: 'docker', reason }
  },
  hasImage: later('hasImage'),
  build: later('build'),
  up: later('up'),
  exec: later('exec'),
  run: later('run'),
  list: later('list'),
  down: later('down'),
})
