// The `copied` way in: whether the engine sees this machine's disk, and volumes
// filled and read back with tar through a one-shot helper container, so only
// the archive crosses to an engine elsewhere.
import { open, type FileHandle } from 'node:fs/promises'
import { CONTAINER_FAILED, OmhError, type FileProbe, type FileWays, type RuntimeContext, type VolumeHelper, type VolumeOps } from '@omh/plugin-api'
import { labelFilters } from './args.js'
import { clientFailure, type ClientOptions, type ClientResult } from './client.js'
import { complaint } from './detect.js'

/** Runs the client with the runtime's environment; never rejects. */
export type VolumeClient = (args: readonly string[], context: RuntimeContext, options?: Partial<ClientOptions>) => Promise<ClientResult>

const NO_SUCH_VOLUME = /no such volume|no volume with name/i
const PROBE_TARGET = '/omh-probe'
// How long the probe waits for an engine before calling it unanswering.
const PROBE_TIMEOUT_MS = 60_000

/** The `run` arguments of a one-shot helper as root (to own what it writes as the container user), on no network. */
const helperArgs = (volume: string, helper: VolumeHelper, interactive: boolean, script: string): string[] => [
  '--rm',
  '--pull=never',
  ...(interactive ? ['-i'] : []),
  '--network',
  'none',
  '--user',
  '0:0',
  '--mount',
  `type=volume,source=${volume},target=/v`,
  '--entrypoint',
  'sh',
  helper.image,
  '-c',
  script,
]

export function cliVolumes(engine: string, call: VolumeClient): { fileWays: (probe: FileProbe, context: RuntimeContext) => Promise<FileWays>; volumes: VolumeOps } {
  const failed = (what: string, result: ClientResult) =>
    OmhError.of(CONTAINER_FAILED, { args: [engine, what, complaint(result.stderr) || result.shortMessage], hintArgs: [], cause: clientFailure(result), details: { why: result.shortMessage } })
  /**
   * A `run --rm` under a name of its own. A client stopped before its container ended (a launch
   * given up, a timeout) can leave it created and never started, which `--rm` never removes: it
   * is removed by name, on a context that is not the stopped one.
   */
  const oneShot = async (args: readonly string[], context: RuntimeContext, options?: Partial<ClientOptions>) => {
    // Taken here, not imported: every runtime plugin imports this module, and node:crypto costs
    // about 9 ms to load for commands that never run a one-shot container.
    const name = `omh-oneshot-${process.getBuiltinModule('node:crypto').randomBytes(6).toString('hex')}`
    const result = await call(['run', '--name', name, ...args], context, options)
    if (result.exitCode === undefined) {
      const { signal: _stopped, ...unstopped } = context
      await call(['rm', '-f', name], unstopped)
    }
    return result
  }
  const passed = (what: string, result: ClientResult) => {
    if (result.failed) throw failed(what, result)
    return result
  }
  const check = async (what: string, args: readonly string[], context: RuntimeContext, options?: Partial<ClientOptions>) => passed(what, await call(args, context, options))

  return {
    async fileWays(probe, context) {
      // A bind mount the engine resolves on its own disk: the token comes back only if that disk is this one.
      const result = await oneShot(
        ['--rm', '--pull=never', '--network', 'none', '--mount', `type=bind,source=${probe.dir},target=${PROBE_TARGET},readonly`, '--entrypoint', 'cat', probe.image, `${PROBE_TARGET}/${probe.file}`],
        context,
        { timeout: PROBE_TIMEOUT_MS },
      )
      if (result.exitCode === undefined) throw failed(`check whether it sees ${probe.dir}`, result)
      if (!result.failed && result.stdout.trim() === probe.token) return { ways: ['mounted', 'copied'] }
      const said = complaint(result.stderr)
      return { ways: ['copied'], why: `the engine does not see ${probe.dir}/${probe.file} through a bind mount${said ? ` (${said})` : ''}` }
    },

    volumes: {
      async create(volume, labels, context) {
        if (!(await call(['volume', 'inspect', volume], context)).failed) return false
        const labelArgs = Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`])
        await check(`create the volume ${volume}`, ['volume', 'create', ...labelArgs, volume], context)
        return true
      },
      async list(labels, context) {
        const out = await check('list volumes', ['volume', 'ls', '-q', ...labelFilters(labels)], context)
        return out.stdout.split('\n').map((l) => l.trim()).filter(Boolean)
      },
      async remove(volume, context) {
        const result = await call(['volume', 'rm', volume], context)
        if (result.failed && !NO_SUCH_VOLUME.test(result.stderr)) throw failed(`remove the volume ${volume}`, result)
      },
      async put(volume, archive, helper, context) {
        const file = await open(archive, 'r')
        try {
          const { uid, gid } = helper.owner
          // Emptied first, so what the archive no longer holds is gone; owned by the container user after.
          const script = `set -e; find /v -mindepth 1 -maxdepth 1 -exec rm -rf {} +; tar -x -f - -C /v --no-same-owner; chown -R ${uid}:${gid} /v`
          passed(`copy files into the volume ${volume}`, await oneShot(helperArgs(volume, helper, true, script), context, { stdin: file.fd }))
        } finally {
          await file.close()
        }
      },
      async get(volume, archive, helper, context) {
        const file = await open(archive, 'w+')
        try {
          if (helper.via) {
            const { uid, gid } = helper.owner
            const through = await call(['exec', '-u', `${uid}:${gid}`, helper.via.container, 'tar', '-c', '-f', '-', '-C', helper.via.guest, '.'], context, { stdoutTo: file.fd })
            if (!through.failed && (await whole(file))) return
            await file.truncate(0)
          }
          const what = `copy files out of the volume ${volume}`
          const result = passed(what, await oneShot(helperArgs(volume, helper, false, 'tar -c -f - -C /v .'), context, { stdoutTo: file.fd }))
          if (!(await whole(file))) throw failed(what, { ...result, stderr: 'the archive came back cut short' })
        } finally {
          await file.close()
        }
      },
    },
  }
}

/**
 * Whether an archive arrived whole: tar ends every archive with two zero
 * blocks and pads it to whole blocks, so one cut short by the client (some
 * remote clients lose output) shows it. A cut archive is never read back:
 * mirrored, it would remove files the agent still has.
 */
async function whole(file: FileHandle): Promise<boolean> {
  const { size } = await file.stat()
  if (size < 1024 || size % 512 !== 0) return false
  const tail = Buffer.alloc(1024)
  await file.read(tail, 0, 1024, size - 1024)
  return tail.every((b) => b === 0)
}
