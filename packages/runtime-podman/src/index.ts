import { createRequire } from 'node:module'
import { defineCliRuntime } from '@omh/container-cli'

const { name, version } = createRequire(import.meta.url)('../package.json') as { name: string; version: string }

interface VersionReport {
  Client?: { Version?: string }
  // Present only when the client talks to a service (a remote or machine connection).
  Server?: { Version?: string } | null
}

const target = (env: Readonly<Record<string, string | undefined>>) =>
  env['CONTAINER_HOST'] ?? (env['CONTAINER_CONNECTION'] ? `connection ${env['CONTAINER_CONNECTION']}` : undefined)

export default defineCliRuntime({
  meta: { name, version },
  engine: 'podman',
  program: 'podman',
  version(report, env) {
    const { Client, Server } = report as VersionReport
    const found = Server?.Version ?? Client?.Version
    if (!found) return undefined
    const endpoint = target(env)
    return { version: found, ...(endpoint ? { endpoint } : {}) }
  },
  target,
  advice: {
    notInstalled: 'Install Podman (https://podman.io/docs/installation), or use another engine',
    notAnswering:
      'Start the Podman machine or service it connects to (`podman machine start`, or `systemctl --user start podman.socket` on the remote host), or fix CONTAINER_HOST',
    permission:
      'Run Podman rootless as yourself (it needs ranges for your user in /etc/subuid and /etc/subgid), or fix the permissions of the socket it connects to',
  },
  // Removes the intermediate containers of a failed step too; no builder to choose.
  buildSetup: async () => ({ args: ['--force-rm'], env: {} }),
  // Without it `rm -f` waits up to 10 s for a process that ignores SIGTERM.
  removeNow: ['--time', '0'],
  execFailed: (exitCode, stderr) => (exitCode === 125 || exitCode === 255) && /^Error: /m.test(stderr),
})
