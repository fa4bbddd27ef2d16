import { readFileSync } from 'node:fs'
import { defineCliRuntime, type BuildSetup, type CallClient } from '@omh/container-cli'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

interface VersionReport {
  Client?: { Context?: string }
  Server?: { Version?: string } | null
}

const buildx = new Map<string | undefined, Promise<boolean>>()

// A client without the buildx component cannot use BuildKit (`DOCKER_BUILDKIT=1`
// fails with "buildx component is missing"), but its legacy builder still works.
// Asked once per PATH, at the first build.
function hasBuildx(call: CallClient, env: Readonly<Record<string, string | undefined>>): Promise<boolean> {
  const key = env['PATH']
  let answer = buildx.get(key)
  if (!answer) buildx.set(key, (answer = call(['buildx', 'version']).then((r) => r.exitCode === 0)))
  return answer
}

export default defineCliRuntime({
  meta: { name, version },
  engine: 'docker',
  program: 'docker',
  version(report, env) {
    const { Client, Server } = report as VersionReport
    if (!Server?.Version) return undefined
    const context = env['DOCKER_HOST'] ? undefined : Client?.Context
    const endpoint = env['DOCKER_HOST'] ?? (context && context !== 'default' ? `context ${context}` : undefined)
    return { version: Server.Version, ...(endpoint ? { endpoint } : {}) }
  },
  target: (env) => env['DOCKER_HOST'] ?? (env['DOCKER_CONTEXT'] ? `context ${env['DOCKER_CONTEXT']}` : undefined),
  advice: {
    notInstalled: 'Install Docker (https://docs.docker.com/engine/install/), or use another engine',
    notAnswering:
      'Start the Docker daemon (`sudo systemctl start docker`, or open Docker Desktop), or point DOCKER_HOST or DOCKER_CONTEXT at one that runs',
    permission:
      'Add your user to the `docker` group (`sudo usermod -aG docker $USER`, then log in again), or use rootless Docker or Podman',
  },
  async buildSetup(context, call): Promise<BuildSetup> {
    const chosen = context.env['DOCKER_BUILDKIT']
    const buildkit = chosen === undefined ? await hasBuildx(call, context.env) : !['0', 'false'].includes(chosen.toLowerCase())
    return buildkit ? { args: ['--progress=plain'], env: {} } : { args: ['--force-rm'], env: { DOCKER_BUILDKIT: '0' } }
  },
  removeNow: [],
  // Docker's internal bridge still gives containers a route through the host, blocked only by its
  // iptables rules, which a daemon run with --iptables=false lacks. A bridge without a host address
  // routes nowhere, with or without them.
  internalNetwork: ['-o', 'com.docker.network.bridge.inhibit_ipv4=true'],
  defaultNetwork: 'bridge',
  execFailed: (exitCode, stderr) => exitCode === 1 && /^Error response from daemon: /m.test(stderr),
})
