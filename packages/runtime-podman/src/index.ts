import { existsSync, readFileSync, statSync } from 'node:fs'
import { defineCliRuntime } from '@omh/container-cli'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

interface VersionReport {
  Client?: { Version?: string }
  // Present only when the client talks to a service (a remote or machine connection).
  Server?: { Version?: string } | null
}

const target = (env: Readonly<Record<string, string | undefined>>) =>
  env['CONTAINER_HOST'] ?? (env['CONTAINER_CONNECTION'] ? `connection ${env['CONTAINER_CONNECTION']}` : undefined)

/**
 * Whether the client reaches a Podman of the user's own (rootless): run here
 * by someone other than root with no service named, or through a socket that
 * user owns. Root's socket, or a service elsewhere, gives containers its IDs.
 */
function rootless(uid: number, env: Readonly<Record<string, string | undefined>>): boolean {
  if (uid === 0) return false
  const host = env['CONTAINER_HOST']
  if (host === undefined) return env['CONTAINER_CONNECTION'] === undefined
  if (!host.startsWith('unix://')) return false
  try {
    return statSync(host.slice('unix://'.length)).uid === uid
  } catch {
    return false
  }
}

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
  defaultNetwork: 'podman',
  execFailed: (exitCode, stderr) => (exitCode === 125 || exitCode === 255) && /^Error: /m.test(stderr),
  // Rootless, the user is root inside unless told otherwise; keep-id makes them the container user.
  // Rootless on cgroups v1 nothing is delegated, and Podman would drop every limit with a
  // warning nobody sees; a per-user process ceiling still stops a fork bomb there.
  limitFlags: (limits, env) =>
    rootless(process.getuid?.() ?? 0, env) && !existsSync('/sys/fs/cgroup/cgroup.controllers')
      ? {
          flags: limits.pids ? ['--ulimit', `nproc=${limits.pids}:${limits.pids}`] : [],
          unenforced: [...(limits.memory ? ['[session] memory'] : []), ...(limits.cpus ? ['[session] cpus'] : [])],
        }
      : undefined,
  mapUser: (host, guest, env) => (rootless(host.uid, env) ? [`--userns=keep-id:uid=${guest.uid},gid=${guest.gid}`] : undefined),
})
