/**
 * The cluster, through its API with the official client. Loaded only when a
 * command uses this runtime: the client is large, and every omh command loads
 * every plugin.
 */
import { PassThrough, Writable, type Readable } from 'node:stream'
import type { ContainerInfo, RunResult } from '@omh/plugin-api'
import type * as K8s from '@kubernetes/client-node'
import { CONTAINER, LABELS_ANNOTATION, MANAGED_BY, POD_LABEL, allObjects, selectable, type Manifests } from './manifests.js'

type Client = typeof K8s
type Obj = Record<string, unknown>

/** Which cluster and where in it, as settings or the kubeconfig name them. */
export interface ClusterOptions {
  /** A context of the kubeconfig; absent: its current context. */
  readonly context?: string
  /** Absent: the context's namespace, else `default`. */
  readonly namespace?: string
}

/** The reason of a refusal made here, before any request: the context asked for is not in the kubeconfig. */
export const NO_CONTEXT = 'NoContext'

/** A refusal of the API server, in its own words. */
export class ApiRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly reason?: string,
  ) {
    super(message)
  }
}


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The API server's message for a failed call: its Status object when it sent one. */
function refusal(error: unknown): ApiRefused {
  const e = error as { code?: number; body?: unknown; message?: string }
  if (typeof e.code === 'number') {
    let body = e.body
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body)
      } catch {
        // A proxy in between may answer in HTML: keep its text.
      }
    }
    const status = body as { message?: string; reason?: string } | undefined
    return new ApiRefused(e.code, status?.message ?? String(body ?? e.message), status?.reason)
  }
  return new ApiRefused(0, e.message ?? String(error))
}

/** Loads the kubeconfig as kubectl would, from `env` rather than this process's. */
export async function loadConfig(env: Readonly<Record<string, string | undefined>>, options: ClusterOptions): Promise<{ k8s: Client; config: K8s.KubeConfig; namespace: string; server: string; context: string }> {
  const k8s = await import('@kubernetes/client-node')
  const config = new k8s.KubeConfig()
  const files = (env['KUBECONFIG'] ?? '').split(':').filter(Boolean)
  if (files.length) {
    config.loadFromFile(files[0]!)
    for (const file of files.slice(1)) mergeFile(k8s, config, file)
  } else config.loadFromDefault()
  if (options.context) {
    if (!config.getContextObject(options.context)) throw new ApiRefused(0, `the kubeconfig has no context ${options.context}`, NO_CONTEXT)
    config.setCurrentContext(options.context)
  }
  const context = config.getCurrentContext()
  const namespace = options.namespace ?? config.getContextObject(context)?.namespace ?? 'default'
  return { k8s, config, namespace, server: config.getCurrentCluster()?.server ?? '', context }
}

function mergeFile(k8s: Client, into: K8s.KubeConfig, file: string): void {
  const more = new k8s.KubeConfig()
  more.loadFromFile(file)
  into.mergeConfig(more, true)
}

export interface ExecIo {
  readonly stdin?: Readable
  readonly stdout: Writable
  readonly stderr: Writable
  readonly tty: boolean
}

/** One cluster, one namespace: what the runtime asks of it. */
export class Cluster {
  private readonly core: K8s.CoreV1Api

  constructor(
    private readonly k8s: Client,
    private readonly config: K8s.KubeConfig,
    readonly namespace: string,
  ) {
    this.core = config.makeApiClient(k8s.CoreV1Api)
  }

  /** The server's version, e.g. `v1.31.2`. */
  async version(): Promise<string> {
    try {
      return (await this.config.makeApiClient(this.k8s.VersionApi).getCode()).gitVersion
    } catch (error) {
      throw refusal(error)
    }
  }

  /**
   * Creates what the Pod needs, then the Pod. A claim that exists already is
   * the session's, kept from an earlier container, and is used as it is.
   */
  async create(objects: Manifests): Promise<void> {
    const namespace = this.namespace
    for (const body of allObjects(objects)) {
      try {
        switch (body['kind']) {
          case 'PersistentVolumeClaim':
            await this.core.createNamespacedPersistentVolumeClaim({ namespace, body: body as K8s.V1PersistentVolumeClaim })
            break
          case 'Secret':
            await this.core.createNamespacedSecret({ namespace, body: body as K8s.V1Secret })
            break
          case 'ConfigMap':
            await this.core.createNamespacedConfigMap({ namespace, body: body as K8s.V1ConfigMap })
            break
          default:
            await this.core.createNamespacedPod({ namespace, body: body as K8s.V1Pod })
        }
      } catch (error) {
        const refused = refusal(error)
        if (!(body['kind'] === 'PersistentVolumeClaim' && refused.status === 409)) throw refused
      }
    }
  }

  /**
   * Waits until the Pod's container runs (or, with `finished`, has exited).
   * A Pod that cannot get there (its image cannot be pulled, it cannot be
   * scheduled for long) is an answer too, with the cluster's reason.
   */
  async waitFor(name: string, until: 'running' | 'finished', timeoutMs: number, pollMs = 500): Promise<K8s.V1Pod> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const pod = await this.read(name)
      if (!pod) throw new ApiRefused(404, `the Pod ${name} is gone`)
      const status = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER)
      const phase = pod.status?.phase
      if (until === 'running' && status?.state?.running) return pod
      if (phase === 'Succeeded' || phase === 'Failed' || status?.state?.terminated) {
        if (until === 'finished') return pod
        throw new ApiRefused(0, `the Pod ${name} ended before it ran: ${status?.state?.terminated?.reason ?? phase}`)
      }
      const waiting = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].map((c) => c.state?.waiting).find((w) => w && /ErrImagePull|ImagePullBackOff|InvalidImageName|CreateContainerConfigError|CreateContainerError/.test(w.reason ?? ''))
      if (waiting) throw new ApiRefused(0, `${waiting.reason}: ${waiting.message ?? ''}`.trim(), waiting.reason)
      if (Date.now() > deadline) {
        const why = pod.status?.conditions?.find((c) => c.status === 'False' && c.message)?.message ?? phase ?? 'no status'
        throw new ApiRefused(0, `the Pod ${name} did not start within ${Math.round(timeoutMs / 1000)} s (${why})`)
      }
      await sleep(pollMs)
    }
  }

  /** The Pod, or undefined when there is none. */
  async read(name: string): Promise<K8s.V1Pod | undefined> {
    try {
      return await this.core.readNamespacedPod({ name, namespace: this.namespace })
    } catch (error) {
      const refused = refusal(error)
      if (refused.status === 404) return undefined
      throw refused
    }
  }

  /** omh's Pods carrying every label; labels no selector can hold are matched on the annotation. */
  async list(labels: Readonly<Record<string, string>>): Promise<K8s.V1Pod[]> {
    const { selector, rest } = selectorOf(labels)
    try {
      const pods = await this.core.listNamespacedPod({ namespace: this.namespace, labelSelector: selector })
      return pods.items.filter((pod) => holdsAll(annotatedLabels(pod), rest))
    } catch (error) {
      throw refusal(error)
    }
  }

  /** Removes the Pod at once and what it alone used; the claim stays for the session's next container. */
  async remove(name: string): Promise<void> {
    const namespace = this.namespace
    const labelSelector = `${POD_LABEL}=${name}`
    const gone = (error: unknown) => {
      const refused = refusal(error)
      if (refused.status !== 404) throw refused
    }
    await this.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }).catch(gone)
    await this.core.deleteCollectionNamespacedConfigMap({ namespace, labelSelector }).catch(gone)
    await this.core.deleteCollectionNamespacedSecret({ namespace, labelSelector }).catch(gone)
  }

  /** Creates a claim unless one of that name exists; resolves whether it made it. */
  async createClaim(body: Obj): Promise<boolean> {
    try {
      await this.core.createNamespacedPersistentVolumeClaim({ namespace: this.namespace, body: body as K8s.V1PersistentVolumeClaim })
      return true
    } catch (error) {
      const refused = refusal(error)
      if (refused.status === 409) return false
      throw refused
    }
  }

  /** Names of omh's claims carrying every label, matched as `list` matches Pods. */
  async claims(labels: Readonly<Record<string, string>>): Promise<string[]> {
    const { selector, rest } = selectorOf(labels)
    try {
      const found = await this.core.listNamespacedPersistentVolumeClaim({ namespace: this.namespace, labelSelector: selector })
      return found.items.filter((c) => holdsAll(annotatedLabels(c), rest)).map((c) => c.metadata?.name ?? '')
    } catch (error) {
      throw refusal(error)
    }
  }

  /** The node of a running omh Pod that mounts the claim, where a helper must go to mount it too. */
  async nodeUsing(claim: string): Promise<string | undefined> {
    try {
      const pods = await this.core.listNamespacedPod({ namespace: this.namespace, labelSelector: selectorOf({}).selector })
      return pods.items.find((p) => p.status?.phase === 'Running' && p.spec?.volumes?.some((v) => v.persistentVolumeClaim?.claimName === claim))?.spec?.nodeName
    } catch (error) {
      throw refusal(error)
    }
  }

  /** Creates a Pod that needs nothing else. */
  async createPod(body: Obj): Promise<void> {
    try {
      await this.core.createNamespacedPod({ namespace: this.namespace, body: body as K8s.V1Pod })
    } catch (error) {
      throw refusal(error)
    }
  }

  /** Removes a claim; what it held is lost. */
  async removeClaim(name: string): Promise<void> {
    await this.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: this.namespace }).catch((error: unknown) => {
      const refused = refusal(error)
      if (refused.status !== 404) throw refused
    })
  }

  /** The container's output so far (stdout and stderr as one: the API keeps them together). */
  async log(name: string): Promise<string> {
    try {
      return await this.core.readNamespacedPodLog({ name, namespace: this.namespace, container: CONTAINER })
    } catch (error) {
      throw refusal(error)
    }
  }

  /** Runs argv in the Pod's container through the API; resolves its exit status. */
  async exec(name: string, argv: readonly string[], io: ExecIo): Promise<number> {
    const exec = new this.k8s.Exec(this.config)
    let status: K8s.V1Status | undefined
    let socket: { on(event: 'close', fn: () => void): void; readyState: number }
    try {
      socket = await exec.exec(this.namespace, name, CONTAINER, [...argv], io.stdout, io.stderr, io.stdin ?? null, io.tty, (s) => {
        status = s
      })
    } catch (error) {
      throw refusal(error)
    }
    await new Promise<void>((resolve) => {
      if (socket.readyState === 3) resolve()
      else socket.on('close', () => resolve())
    })
    return exitCode(status)
  }
}

/** A label selector for what a selector can hold, and the rest, to match on the annotation. */
function selectorOf(labels: Readonly<Record<string, string>>): { selector: string; rest: [string, string][] } {
  const selector = Object.entries(MANAGED_BY).map(([k, v]) => `${k}=${v}`)
  const rest: [string, string][] = []
  for (const [k, v] of Object.entries(labels)) {
    if (v === '' && selectable(k, 'x')) selector.push(k)
    else if (selectable(k, v)) selector.push(`${k}=${v}`)
    else rest.push([k, v])
  }
  return { selector: selector.join(','), rest }
}

const holdsAll = (all: Readonly<Record<string, string>>, wanted: readonly [string, string][]) => wanted.every(([k, v]) => k in all && (v === '' || all[k] === v))

/** An exec's status as an exit code: the API says Success, or NonZeroExitCode with the code as a cause. */
export function exitCode(status: K8s.V1Status | undefined): number {
  if (!status) throw new ApiRefused(0, 'the API server closed the exec without a status')
  if (status.status === 'Success') return 0
  const code = status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message
  if (code !== undefined && /^\d+$/.test(code)) return Number(code)
  throw new ApiRefused(status.code ?? 0, status.message ?? 'the exec failed', status.reason)
}

/** Every label the description gave, from the annotation, with the Pod's own labels under it. */
export function annotatedLabels(object: { metadata?: K8s.V1ObjectMeta }): Record<string, string> {
  const stored = object.metadata?.annotations?.[LABELS_ANNOTATION]
  let parsed: Record<string, string> = {}
  try {
    if (stored) parsed = JSON.parse(stored) as Record<string, string>
  } catch {
    // Someone edited the annotation: the labels still say enough to list the Pod.
  }
  return { ...(object.metadata?.labels ?? {}), ...parsed }
}

/** A Pod as the contract describes a container. A Pod publishes no port on this host, so `ports` is absent. */
export function containerInfo(pod: K8s.V1Pod): ContainerInfo {
  const running = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.state?.running !== undefined && pod.metadata?.deletionTimestamp === undefined
  return {
    // The name is what exec, inspect and down take back: within a namespace it is the Pod's identity.
    id: pod.metadata?.name ?? '',
    name: pod.metadata?.name ?? '',
    running,
    image: pod.spec?.containers.find((c) => c.name === CONTAINER)?.image ?? '',
    labels: annotatedLabels(pod),
  }
}

/** Collects a stream's bytes as text. */
export function collector(): { stream: Writable; text(): string } {
  const chunks: Buffer[] = []
  const stream = new PassThrough()
  stream.on('data', (c: Buffer) => chunks.push(c))
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') }
}

export type { RunResult, Obj }
