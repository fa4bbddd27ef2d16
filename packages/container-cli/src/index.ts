/**
 * `defineCliRuntime(dialect)`: a complete RuntimePlugin over a Docker-compatible
 * command-line client. The dialect says what differs between clients; the
 * flags, the error handling and the process plumbing are shared here.
  *
 * Longer than 400 lines: one client dialect covers every operation of the runtime contract, and they share the same plumbing.
 */
import { mkdir, mkdtemp, open, rm, writeFile, type FileHandle } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { CONTAINER_FAILED, IMAGE_BUILD_FAILED, OmhError, PLUGIN_API_VERSION, defineRuntime, type ContainerInfo, type ContainerSpec, type HostUser, type ImageInfo, type ImageRecipe, type PluginMeta, type PublishedPort, type ResourceLimits, type RunResult, type RuntimeClient, type RuntimeContext, type RuntimeInfo, type RuntimePlugin, type RuntimeUnavailable } from '@omh/plugin-api'
import type { ExecaError } from 'execa'
import { buildArgs, containerArgs, execArgs, labelFilters, listArgs, numericUser, unmountable, type ClientCall } from './args.js'
import { clientFailure, runClient, type ClientResult } from './client.js'
import { classifyDetect, type DetectAdvice } from './detect.js'
import { cliVolumes } from './volumes.js'

export { buildArgs, containerArgs, envFlags, execArgs, listArgs, numericUser, unmountable } from './args.js'
export { runClient, type ClientOptions, type ClientResult } from './client.js'
export { classifyDetect, type DetectAdvice, type DetectOutcome } from './detect.js'

/** How a build is invoked: extra flags and client environment, e.g. to choose a builder. */
export interface BuildSetup {
  readonly args: readonly string[]
  readonly env: Readonly<Record<string, string>>
}

/** What one client does differently. Everything else is shared. */
export interface EngineDialect {
  readonly meta: PluginMeta
  /** The engine name, as `runtime = "…"` spells it. */
  readonly engine: string
  /** The client program on PATH. */
  readonly program: string
  /** From `<program> version --format '{{json .}}'`, the engine's version and, when not the local default, where it is. */
  version(report: unknown, env: Readonly<Record<string, string | undefined>>): { version: string; endpoint?: string } | undefined
  /** Where the client would connect, for a reason that names it; absent for the local default. */
  target(env: Readonly<Record<string, string | undefined>>): string | undefined
  readonly advice: DetectAdvice
  /** Flags and client environment for `build`; may ask the client what it supports. */
  buildSetup(context: RuntimeContext, call: CallClient): Promise<BuildSetup>
  /** Flags `rm -f` needs to remove a running container without waiting for it. */
  readonly removeNow: readonly string[]
  /** Whether a failed exec (output captured) failed in the engine rather than in the process. */
  execFailed(exitCode: number, stderr: string): boolean
  /**
   * Flags that map `host` (the user running the client) onto the container
   * user `guest`, when this engine, as `env` reaches it, maps users per
   * container; undefined when it gives containers the host's IDs as they are.
   * Absent: the engine never maps.
   */
  mapUser?(host: HostUser, guest: HostUser, env: Readonly<Record<string, string | undefined>>): readonly string[] | undefined
  /** Flags `network create --internal` needs so no route leads out, not even through the host. */
  readonly internalNetwork?: readonly string[]
  /** The network a container joins when `run` names none. */
  readonly defaultNetwork?: string
  /**
   * Flags for `limits` where this engine, as `env` reaches it, cannot put them
   * on a container's control group, with the limits left unenforced (named as
   * settings); undefined where it can. Absent: it always can.
   */
  limitFlags?(limits: ResourceLimits, env: Readonly<Record<string, string | undefined>>): { readonly flags: readonly string[]; readonly unenforced: readonly string[] } | undefined
}

/** Runs the client once with output captured; never rejects. */
export type CallClient = (args: readonly string[], options?: { timeout?: number; env?: Record<string, string> }) => Promise<ClientResult>

// How long `detect` and `inspect` (which stands in for it on a launch) wait for an engine.
const ANSWER_TIMEOUT_MS = 10_000
const NO_SUCH_IMAGE = /no such image|image not known/i
const NO_SUCH_CONTAINER = /no such container|no container with name or id/i
// Docker and Podman both exit 125 when the engine, not the container's process, failed a `run`.
const ENGINE_FAILED_RUN = 125

const stdinIsTerminal = () => Boolean(process.stdin.isTTY)

export function defineCliRuntime(dialect: EngineDialect): RuntimePlugin {
  const { engine, program } = dialect
  // Only a build loads execa, for its streaming of the client's output line by line.
  const execa = async () => (await import('./execa.js')).execa

  const clientEnv = (context: RuntimeContext, env: Record<string, string> = {}) => ({ ...context.env, ...env })

  const callWith =
    (context: RuntimeContext): CallClient =>
    (args, options = {}) =>
      runClient(program, args, {
        env: clientEnv(context, options.env),
        stripFinalNewline: true,
        ...(options.timeout ? { timeout: options.timeout } : {}),
        ...(context.signal ? { signal: context.signal } : {}),
      })

  const failed = (what: string, result: ClientResult): OmhError =>
    OmhError.of(CONTAINER_FAILED, {
      args: [engine, what, result.shortMessage],
      hintArgs: [],
      cause: clientFailure(result),
      details: { why: result.shortMessage },
    })

  const check = async (context: RuntimeContext, what: string, args: readonly string[], env?: Record<string, string>) => {
    const result = await callWith(context)(args, env ? { env } : {})
    if (result.failed) throw failed(what, result)
    return result
  }

  const refuseUnmountable = (spec: ContainerSpec) => {
    for (const mount of spec.mounts) {
      const why = unmountable(mount)
      if (why) {
        throw OmhError.of(CONTAINER_FAILED, {
          args: [engine, `mount ${mount.host} at ${mount.guest}`, why],
          hintArgs: ['A mount names an absolute path without commas or line breaks: move or rename it.'],
        })
      }
    }
  }

  /** The flags that show the host user's files as the container user's, or a failure saying why they cannot be. */
  const userFlags = (spec: ContainerSpec, env: RuntimeContext['env']): readonly string[] => {
    const host = spec.hostUser
    if (!host) return []
    const refuse = (why: string, advice: string) =>
      OmhError.of(CONTAINER_FAILED, { args: [engine, `start a container as ${spec.user} for the host user ${host.uid}:${host.gid}`, why], hintArgs: [advice] })
    const guest = numericUser(spec.user)
    if (!guest) throw refuse('a user given by name cannot be mapped', 'Give the container user as uid:gid.')
    const mapped = dialect.mapUser?.(host, guest, env)
    if (mapped) return mapped
    if (guest.uid === host.uid && guest.gid === host.gid) return []
    throw refuse(
      `${engine} gives containers the host's user IDs, so files of ${host.uid}:${host.gid} cannot appear as ${guest.uid}:${guest.gid}'s`,
      'Run the container as the host user, or use an engine that maps users, such as rootless Podman.',
    )
  }

  /** The spec's flags: its limits as the engine can hold them, said aloud where it cannot. */
  const specArgs = (spec: ContainerSpec, context: RuntimeContext, attachedTTY: boolean): ClientCall => {
    const user = userFlags(spec, context.env)
    const instead = spec.limits && dialect.limitFlags?.(spec.limits, context.env)
    if (!instead) return containerArgs(spec, context.env, attachedTTY, user)
    if (instead.unenforced.length) context.progress(`${engine} cannot limit ${instead.unenforced.join(' or ')} here (rootless on cgroups v1): the session runs without that ceiling`)
    const { limits: _limits, ...rest } = spec
    return containerArgs(rest, context.env, attachedTTY, [...user, ...instead.flags])
  }

  /** The client as data: `exec` with the user's terminal runs exactly the process `client.exec` gives. */
  const client: RuntimeClient = {
    exec(container, argv, options, context) {
      const call = execArgs(container, argv, options, context.env, stdinIsTerminal())
      const env = Object.fromEntries(Object.entries(clientEnv(context, call.env)).filter((entry): entry is [string, string] => entry[1] !== undefined))
      return { file: program, args: ['exec', ...call.args], env, stdio: ['inherit', 'inherit', 'inherit'] }
    },
    containerState: (containers) => ['inspect', '--type', 'container', '--format', '{{.Id}} {{.State.Running}}', ...containers],
  }

  /** Runs an attached client: the user's terminal when asked for, output captured otherwise. */
  const attached = (call: ClientCall, context: RuntimeContext, terminal: boolean, interactive: boolean) =>
    runClient(program, call.args, {
      env: clientEnv(context, call.env),
      stdin: interactive || terminal ? 'inherit' : 'ignore',
      output: terminal ? 'inherit' : 'pipe',
      ...(context.signal ? { signal: context.signal } : {}),
    })

  const output = (result: ClientResult, terminal: boolean): RunResult => ({
    exitCode: result.exitCode ?? 1,
    stdout: terminal ? '' : result.stdout,
    stderr: terminal ? '' : result.stderr,
  })

  /** Parses `inspect` output; the containers it names, whatever else it said. */
  const inspected = (result: ClientResult): ContainerInfo[] => {
    let raw: InspectedContainer[]
    try {
      raw = JSON.parse(result.stdout || '[]') as InspectedContainer[]
    } catch {
      throw failed('inspect containers', result)
    }
    if (result.failed && !raw.length && !NO_SUCH_CONTAINER.test(result.stderr)) throw failed('inspect containers', result)
    return raw.map((c) => ({
      id: c.Id,
      name: c.Name.replace(/^\//, ''),
      running: Boolean(c.State?.Running),
      image: c.Config?.Image ?? '',
      labels: c.Config?.Labels ?? {},
      ports: publishedPorts(c.NetworkSettings?.Ports),
    }))
  }

  const copying = cliVolumes(engine, (args, context, options = {}) =>
    runClient(program, args, {
      env: clientEnv(context),
      stripFinalNewline: true,
      ...(context.signal ? { signal: context.signal } : {}),
      ...options,
    }),
  )

  return defineRuntime({
    kind: 'runtime',
    apiVersion: PLUGIN_API_VERSION,
    meta: dialect.meta,
    engine,

    async detect(context): Promise<RuntimeInfo | RuntimeUnavailable> {
      const result = await callWith(context)(['version', '--format', '{{json .}}'], { timeout: ANSWER_TIMEOUT_MS })
      let report: unknown
      try {
        report = result.exitCode === 0 ? JSON.parse(result.stdout) : undefined
      } catch {}
      const found = report === undefined ? undefined : dialect.version(report, context.env)
      if (found) return { engine, ...found }
      return {
        engine,
        ...classifyDetect(
          {
            program,
            missing: result.code === 'ENOENT',
            timedOut: result.timedOut,
            timeoutSeconds: ANSWER_TIMEOUT_MS / 1000,
            stderr: result.stderr,
            target: dialect.target(context.env),
          },
          dialect.advice,
        ),
      }
    },

    async hasImage(tag, context) {
      const result = await callWith(context)(['image', 'inspect', '--format', '{{.Id}}', tag])
      if (!result.failed) return true
      if (NO_SUCH_IMAGE.test(result.stderr)) return false
      throw failed(`look up the image ${tag}`, result)
    },

    async build(recipe: ImageRecipe, context) {
      const setup = await dialect.buildSetup(context, callWith(context))
      // stdin is an open file: a client that opens /dev/stdin (podman) cannot
      // open the socket Node would otherwise hand it. The context stays empty.
      const work = await mkdtemp(path.join(os.tmpdir(), 'omh-build-'))
      let recipeHandle: FileHandle | undefined
      try {
        const contextDir = path.join(work, 'context')
        const recipeFile = path.join(work, 'recipe')
        await mkdir(contextDir)
        await writeFile(recipeFile, recipe.containerfile)
        recipeHandle = await open(recipeFile, 'r')
        const subprocess = (await execa())(program, ['build', ...buildArgs(recipe, contextDir, setup.args)], {
          env: clientEnv(context, setup.env),
          extendEnv: false,
          ...(context.signal ? { cancelSignal: context.signal } : {}),
          // A descriptor is passed to the child as is (execa's types list only 0-9).
          stdin: recipeHandle.fd as 0,
          all: true,
          buffer: false,
          reject: false,
        })
        for await (const line of subprocess.iterable({ from: 'all' })) context.progress(String(line))
        const result = await subprocess
        if (result.failed) {
          const error = result as unknown as ExecaError
          throw OmhError.of(IMAGE_BUILD_FAILED, {
            args: [engine, recipe.tag, error.shortMessage],
            cause: error,
            details: { why: error.shortMessage },
          })
        }
      } finally {
        await recipeHandle?.close()
        await rm(work, { recursive: true, force: true })
      }
    },

    async up(spec, context) {
      refuseUnmountable(spec)
      const call = specArgs(spec, context, true)
      const result = await check(context, `start the container ${spec.name ?? `from ${spec.image}`}`, ['run', '-d', ...call.args], call.env)
      return result.stdout.trim().split('\n').at(-1) ?? ''
    },

    async exec(container, argv, options, context) {
      const terminal = !options.capture
      if (terminal) {
        // The very process `client.exec` describes, which a kept launch starts without omh.
        const own = client.exec(container, argv, options, context)
        const result = await runClient(own.file, own.args, { env: own.env, stdin: own.stdio[0], output: 'inherit', ...(context.signal ? { signal: context.signal } : {}) })
        if (result.exitCode === undefined) throw failed(`run ${argv[0] ?? 'a command'} in ${container}`, result)
        return output(result, terminal)
      }
      const call = execArgs(container, argv, options, context.env, stdinIsTerminal())
      if (options.stream) {
        const subprocess = (await execa())(program, ['exec', ...call.args], {
          env: clientEnv(context, call.env),
          extendEnv: false,
          stdin: 'ignore',
          ...(context.signal ? { cancelSignal: context.signal } : {}),
          all: true,
          buffer: false,
          reject: false,
        })
        const lines: string[] = []
        for await (const line of subprocess.iterable({ from: 'all' })) {
          lines.push(String(line))
          context.progress(String(line))
        }
        const done = await subprocess
        const all = lines.join('\n')
        if (done.exitCode === undefined || (done.exitCode !== 0 && dialect.execFailed(done.exitCode, all))) {
          const command = `${program} exec ${call.args.join(' ')}`
          throw failed(`run ${argv[0] ?? 'a command'} in ${container}`, { command, exitCode: done.exitCode, stdout: '', stderr: all, failed: true, timedOut: false, shortMessage: done.shortMessage ?? `${command} failed` })
        }
        return { exitCode: done.exitCode, stdout: all, stderr: '' }
      }
      const result = await attached({ args: ['exec', ...call.args], env: call.env }, context, terminal, Boolean(options.interactive))
      if (result.exitCode === undefined || (result.exitCode !== 0 && dialect.execFailed(result.exitCode, result.stderr))) {
        throw failed(`run ${argv[0] ?? 'a command'} in ${container}`, result)
      }
      return output(result, terminal)
    },

    async run(spec, context) {
      refuseUnmountable(spec)
      const terminal = Boolean(spec.tty) && stdinIsTerminal()
      const call = specArgs(spec, context, terminal)
      const result = await attached({ args: ['run', '--rm', ...call.args], env: call.env }, context, terminal, Boolean(spec.interactive))
      if (result.exitCode === undefined || result.exitCode === ENGINE_FAILED_RUN) {
        throw failed(`run a container from ${spec.image}`, result)
      }
      return output(result, terminal)
    },

    async list(labels, context): Promise<ContainerInfo[]> {
      const ids = (await check(context, 'list containers', listArgs(labels))).stdout
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
      if (!ids.length) return []
      // A container removed between the two calls makes inspect fail for it alone; the rest still print.
      return inspected(await callWith(context)(['inspect', '--type', 'container', ...ids]))
    },

    async inspect(container, context): Promise<ContainerInfo | undefined> {
      const result = await callWith(context)(['inspect', '--type', 'container', container], { timeout: ANSWER_TIMEOUT_MS })
      if (result.failed && !NO_SUCH_CONTAINER.test(result.stderr)) throw failed(`inspect the container ${container}`, result)
      return inspected(result)[0]
    },

    client,

    async down(container, context) {
      const result = await callWith(context)(['rm', '-f', ...dialect.removeNow, container])
      if (result.failed && !NO_SUCH_CONTAINER.test(result.stderr)) throw failed(`remove the container ${container}`, result)
    },

    async images(labels, context): Promise<ImageInfo[]> {
      const ids = [...new Set((await check(context, 'list images', ['images', '-q', '--no-trunc', ...labelFilters(labels)])).stdout.split('\n').map((l) => l.trim()).filter(Boolean))]
      if (!ids.length) return []
      // An image removed between the two calls makes inspect fail for it alone; the rest still print.
      const result = await callWith(context)(['image', 'inspect', ...ids])
      let raw: InspectedImage[]
      try {
        raw = JSON.parse(result.stdout || '[]') as InspectedImage[]
      } catch {
        throw failed('inspect images', result)
      }
      const images = raw.map((i) => ({
        id: i.Id,
        tags: (i.RepoTags ?? []).filter((t) => !t.endsWith('<none>')),
        created: i.Created ?? '',
        size: i.Size ?? 0,
        labels: i.Config?.Labels ?? i.Labels ?? {},
      }))
      // Podman joins several label filters of `images` with "or": every label is checked here again.
      return images.filter((i) => Object.entries(labels).every(([key, value]) => key in i.labels && (value === '' || i.labels[key] === value)))
    },

    fileWays: copying.fileWays,
    volumes: copying.volumes,

    async removeImage(image, context) {
      // Never --force: Podman's would remove the containers using the image.
      const result = await callWith(context)(['image', 'rm', image])
      if (result.failed && !NO_SUCH_IMAGE.test(result.stderr)) throw failed(`remove the image ${image}`, result)
    },

    networks: {
      ...(dialect.defaultNetwork ? { defaultNetwork: dialect.defaultNetwork } : {}),
      async create(name, options, context) {
        const labels = Object.entries(options.labels).flatMap(([k, v]) => ['--label', `${k}=${v}`])
        const internal = options.internal ? ['--internal', ...(dialect.internalNetwork ?? [])] : []
        const result = await callWith(context)(['network', 'create', ...internal, ...labels, name])
        if (result.failed && !/already exists/i.test(result.stderr)) throw failed(`create the network ${name}`, result)
      },
      async exists(name, context) {
        const result = await callWith(context)(['network', 'inspect', name])
        if (!result.failed) return true
        if (/no such network|not found|unable to find/i.test(result.stderr)) return false
        throw failed(`inspect the network ${name}`, result)
      },
      async connect(network, container, aliases, context) {
        const result = await callWith(context)(['network', 'connect', ...aliases.flatMap((a) => ['--alias', a]), network, container])
        if (result.failed && !/already (exists|connected)/i.test(result.stderr)) throw failed(`join ${container} to the network ${network}`, result)
      },
      async disconnect(network, container, context) {
        const result = await callWith(context)(['network', 'disconnect', '-f', network, container])
        if (result.failed && !/no such|not found|unable to find|not connected|is not connected/i.test(result.stderr)) throw failed(`take ${container} off the network ${network}`, result)
      },
      async remove(name, context) {
        const result = await callWith(context)(['network', 'rm', name])
        if (result.failed && !/no such network|not found|unable to find/i.test(result.stderr)) throw failed(`remove the network ${name}`, result)
      },
    },
    async pushImage(tag, context) {
      await check(context, `push ${tag}`, ['push', tag])
    },
  })
}

/** The part of `image inspect` output `images` reads; both clients print these keys. */
interface InspectedImage {
  Id: string
  RepoTags?: string[] | null
  Created?: string
  Size?: number
  Config?: { Labels?: Record<string, string> | null }
  Labels?: Record<string, string> | null
}

/** The part of `inspect` output `list` reads; both clients print these keys. */
interface InspectedContainer {
  Id: string
  Name: string
  State?: { Running?: boolean }
  Config?: { Image?: string; Labels?: Record<string, string> | null }
  /** By `<port>/<protocol>`; an exposed port that is not published maps to null. */
  NetworkSettings?: { Ports?: Record<string, { HostIp?: string; HostPort?: string }[] | null> | null }
}

function publishedPorts(ports: NonNullable<InspectedContainer['NetworkSettings']>['Ports']): PublishedPort[] {
  const out: PublishedPort[] = []
  for (const [key, bindings] of Object.entries(ports ?? {})) {
    const [guest, protocol] = key.split('/')
    if (protocol !== 'tcp') continue
    for (const b of bindings ?? []) {
      const host = Number(b.HostPort)
      if (Number.isInteger(host) && host > 0) out.push({ guest: Number(guest), host, hostIp: b.HostIp ?? '' })
    }
  }
  return out
}
