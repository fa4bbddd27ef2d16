/**
 * Containers beside a session: its services (`[services.<name>]`, a database
 * the project's tests need), reached by name on the session's network, and its
 * port forwarder, which publishes the ports the project serves on 127.0.0.1.
 *
 * A session behind the egress proxy lives on an internal network, where an
 * engine publishes nothing: the forwarder starts on the outside network with
 * the ports published there, then joins the session's, and passes each
 * connection on to the session's container. It only ever connects to that
 * container, so it is a way in from this machine, never a way out.
 *
 * Services join the session's network alone: out only through the egress
 * proxy, like the agent. They start with the session, under its limits, stop
 * with `down` and go with `rm`, with the proxies (`dropEgress`).
 */
import { createHash } from 'node:crypto'
import { OmhError, SERVICE_UNHEALTHY, isOmhError, type ContainerInfo, type ContainerSpec, type ImageRecipe, type ResourceLimits, type RuntimeContext, type RuntimePlugin } from '@omh/plugin-api'
import { IMAGE_LABELS, type ImageOptions, recipe, TOOLSET_NODE } from '@omh/image'

export const portsName = (container: string) => `${container}-ports`
/** The label every container beside a session carries: the session container's name. */
export const BESIDE_LABEL = 'omh.beside'
export const serviceContainer = (container: string, service: string) => `${container}-svc-${service}`
/** The label a container beside a session carries with the digest of its spec, so a changed one is replaced. */
const PLAN = 'omh.beside.plan'
export const SERVICE_LABEL = 'omh.service'

/** A service as the settings give it. */
export interface Service {
  readonly image: string
  readonly env?: Readonly<Record<string, string>>
  readonly command?: readonly string[]
  readonly health?: string
}

/** How long a service may take to answer its health check. */
const HEALTHY_WITHIN_MS = 120_000

/** Connections on each port passed on to the session's container, on the same port. */
const FORWARD = `const net=require('net');const{target,ports}=JSON.parse(process.argv[1]);for(const p of ports)net.createServer(c=>{const u=net.connect(p,target);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy());c.pipe(u).pipe(c)}).listen(p,'0.0.0.0')`

const digestOf = (spec: Omit<ContainerSpec, 'labels'>) => createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 16)

/** The recipe a service's image is had by: its image as it is, pulled by the engine when absent, under omh's labels. */
export function serviceRecipe(service: Service, options: ImageOptions): ImageRecipe {
  return recipe('omh-service', `# omh service image: ${service.image}\nFROM ${service.image}\n`, { [IMAGE_LABELS.kind]: 'service', [IMAGE_LABELS.from]: service.image }, options)
}

/** A container that runs beside a session's, between its internal network and the outside. */
export interface BesideSession {
  readonly runtime: RuntimePlugin
  readonly context: RuntimeContext
  /** The session's container name; what runs beside it is named after it. */
  readonly container: string
  /** Labels every container beside it carries, by which `dropEgress` finds and stops them. */
  readonly labels: Readonly<Record<string, string>>
  /** The session's internal network. */
  readonly network: string
  /** The outside network (`[session] network`); absent: the engine's default. */
  readonly outside?: string
}

export interface Beside extends BesideSession {
  readonly limits?: ResourceLimits
}

/** Starts what is missing or changed of `want`; keeps what already runs as planned. */
async function ensure(at: Beside, want: ContainerSpec, joins: readonly { network: string; aliases: readonly string[] }[], present: readonly ContainerInfo[]): Promise<'kept' | 'started'> {
  const found = present.find((c) => c.name === want.name)
  if (found?.running && found.labels[PLAN] === want.labels[PLAN]) return 'kept'
  await at.runtime.down(want.name!, at.context).catch(() => undefined)
  await at.runtime.up(want, at.context)
  try {
    for (const join of joins) await at.runtime.networks!.connect(join.network, want.name!, join.aliases, at.context)
  } catch (error) {
    await at.runtime.down(want.name!, at.context).catch(() => undefined)
    throw error
  }
  return 'started'
}

/**
 * Publishes `ports` of the session's container on 127.0.0.1 through a
 * forwarder from `image` (the session's, which carries omh's Node). Resolves
 * what could not be done, in words, rather than failing the launch: a port
 * that cannot be published is no reason to keep the harness from starting.
 */
export async function ensureForwarder(at: Beside, image: string, ports: readonly number[], present: readonly ContainerInfo[]): Promise<string | undefined> {
  if (!ports.length) {
    await at.runtime.down(portsName(at.container), at.context).catch(() => undefined)
    return undefined
  }
  const outside = at.outside ?? at.runtime.networks?.defaultNetwork
  const spec: Omit<ContainerSpec, 'labels'> = {
    image,
    name: portsName(at.container),
    mounts: [],
    env: {},
    workdir: '/tmp',
    user: '65534:65534',
    argv: [TOOLSET_NODE, '-e', FORWARD, JSON.stringify({ target: at.container, ports })],
    ...(outside ? { network: outside } : {}),
    ports: ports.map((guest) => ({ guest })),
    capDrop: ['ALL'],
    noNewPrivileges: true,
    init: true,
    limits: { memory: 128 * 1024 * 1024, pids: 64 },
  }
  try {
    await ensure(at, { ...spec, labels: { ...at.labels, [PLAN]: digestOf(spec) } }, [{ network: at.network, aliases: [] }], present)
    return undefined
  } catch (error) {
    const why = isOmhError(error) ? String(error.details?.['why'] ?? error.message) : String(error)
    return `ports ${ports.join(', ')} are not published: ${at.runtime.engine} could not start their forwarder on ${outside ?? 'its default network'} (${why.split('\n')[0]}); set [session] network to a network that can publish a port`
  }
}

/** Starts each service on the session's network (answering to its name), and waits until each is healthy. */
export async function ensureServices(at: Beside, services: Readonly<Record<string, { readonly service: Service; readonly image: string }>>, present: readonly ContainerInfo[]): Promise<void> {
  const names = Object.keys(services).sort()
  // A service no longer in the settings stops.
  for (const c of present) if (c.labels[SERVICE_LABEL] && !names.includes(c.labels[SERVICE_LABEL])) await at.runtime.down(c.name, at.context).catch(() => undefined)
  await Promise.all(
    names.map(async (name) => {
      const { service, image } = services[name]!
      const spec: Omit<ContainerSpec, 'labels'> = {
        image,
        name: serviceContainer(at.container, name),
        mounts: [],
        env: { ...service.env },
        workdir: '',
        user: '',
        argv: [...(service.command ?? [])],
        network: at.network,
        aliases: [name],
        noNewPrivileges: true,
        init: true,
        ...(at.limits ? { limits: at.limits } : {}),
      }
      const started = await ensure(at, { ...spec, labels: { ...at.labels, [SERVICE_LABEL]: name, [PLAN]: digestOf(spec) } }, [], present)
      if (started === 'started' && service.health) {
        at.context.progress(`Waiting for the service ${name} to be ready (${service.health})`)
        await healthy(at, name, service.health)
      }
    }),
  )
}

async function healthy(at: Beside, name: string, check: string): Promise<void> {
  const until = Date.now() + HEALTHY_WITHIN_MS
  let last = { exitCode: -1, stdout: '', stderr: '' }
  while (Date.now() < until) {
    last = await at.runtime.exec(serviceContainer(at.container, name), ['/bin/sh', '-c', check], { tty: false, capture: true }, at.context).catch((error: unknown) => ({ exitCode: -1, stdout: '', stderr: isOmhError(error) ? error.message : String(error) }))
    if (last.exitCode === 0) return
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  throw OmhError.of(SERVICE_UNHEALTHY, {
    args: [name, check, HEALTHY_WITHIN_MS / 1000, `${last.stdout}${last.stderr}`.trim().split('\n').pop() ?? ''],
    hintArgs: [at.runtime.engine, serviceContainer(at.container, name), name],
  })
}

/** Stops every container beside the session's. */
export async function stopBeside(runtime: RuntimePlugin, container: string, context: RuntimeContext): Promise<string[]> {
  const present = await runtime.list({ [BESIDE_LABEL]: container }, context)
  for (const c of present) await runtime.down(c.name || c.id, context)
  return present.map((c) => c.name)
}

/** A port the session serves, and where this machine reaches it. */
export interface SessionPort {
  readonly guest: number
  readonly url: string
}

/** The session's published ports, as the engine bound them: through its forwarder, or on its own container. */
export async function publishedPorts(runtime: RuntimePlugin, container: string, context: RuntimeContext, exclude: readonly number[] = []): Promise<SessionPort[]> {
  const beside = await runtime.list({ [BESIDE_LABEL]: container }, context)
  const forwarder = beside.find((c) => c.name === portsName(container) && c.running)
  const own = forwarder ? undefined : await runtime.inspect?.(container, context)
  const ports = (forwarder ?? own)?.ports ?? []
  return ports
    .filter((p) => p.hostIp === '127.0.0.1' && !exclude.includes(p.guest))
    .map((p) => ({ guest: p.guest, url: `http://127.0.0.1:${p.host}` }))
    .sort((a, b) => a.guest - b.guest)
}
