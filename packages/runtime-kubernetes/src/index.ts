/**
 * `@omh/runtime-kubernetes`: a session as a Pod on a Kubernetes cluster,
 * through the cluster's API. Built on the public runtime contract only.
 *
 * A cluster cannot see this machine's disk: read-only files travel as
 * ConfigMaps, the environment as a Secret, writable mounts live on a
 * PersistentVolumeClaim kept for the session's next container. A cluster
 * builds no images either: they come from a registry it can pull from.
 */
import { createReadStream, createWriteStream, existsSync } from 'node:fs'
import { finished } from 'node:stream/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import * as z from 'zod/mini'
import { CONTAINER_FAILED, IMAGE_BUILD_FAILED, OmhError, PLUGIN_API_VERSION, defineRuntime, type ContainerSpec, type ExecOptions, type RunResult, type RuntimeContext, type RuntimePlugin, type VolumeHelper } from '@omh/plugin-api'
import type { Cluster, ClusterOptions } from './cluster.js'
import { readMounts } from './content.js'
import { HELPER_MOUNT, claimManifest, helperPod, manifests, podName, unrunnable, type Limits } from './manifests.js'

export { allObjects, manifests, podName, toYaml, type FileContent, type Limits, type Manifests, type MountContent } from './manifests.js'
export { readMounts } from './content.js'

const { name, version } = createRequire(import.meta.url)('../package.json') as { name: string; version: string }

const ENGINE = 'kubernetes'

export interface KubernetesOptions extends ClusterOptions {
  /** Size asked of a session's claim. */
  readonly storage?: string
  /** The claim's storage class; absent: the cluster's default. */
  readonly storageClass?: string
  /** How long a Pod may take to start (scheduling, pulling its image). */
  readonly startTimeoutMs?: number
}

const DEFAULTS = { storage: '10Gi', startTimeoutMs: 300_000 }

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/** The `[runtimes.kubernetes]` table of omh's settings: which cluster, where in it, and the claims' storage. */
export const kubernetesSettings = z.strictObject({
  /** A context of the kubeconfig; absent: its current context. */
  context: z.optional(z.string().check(z.minLength(1, 'the name of a context in the kubeconfig'))),
  /** Absent: the context's namespace, else `default`. */
  namespace: z.optional(z.string().check(z.maxLength(63, 'a namespace name, at most 63 characters'), z.regex(DNS_LABEL, 'a namespace name: lower-case letters, digits and "-", such as "omh-sessions"'))),
  /** The size each session's claim asks for, as Kubernetes writes quantities. */
  claim: z.optional(z.string().check(z.regex(/^[1-9][0-9]*(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/, 'a size as Kubernetes writes it, a whole number and a unit, such as "10Gi" or "500Mi"'))),
  /** The claims' storage class; absent: the cluster's default. */
  storage_class: z.optional(z.string().check(z.maxLength(253, 'a storage class name, at most 253 characters'), z.regex(DNS_SUBDOMAIN, 'a storage class name: lower-case letters, digits, "-" and ".", such as "fast-ssd"'))),
})

export type KubernetesSettings = z.infer<typeof kubernetesSettings>
const ANSWER_TIMEOUT_MS = 10_000

/** Whether a kubeconfig exists where the client would look; the client would otherwise try localhost:8080. */
function kubeconfigPath(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const listed = (env['KUBECONFIG'] ?? '').split(':').filter(Boolean)
  if (listed.length) return listed.find((f) => existsSync(f))
  const home = env['HOME']
  const file = home ? path.join(home, '.kube', 'config') : undefined
  return file && existsSync(file) ? file : undefined
}

const withTimeout = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer from ${what} within ${ms / 1000} s`)), ms).unref())])

/** A runtime for one cluster and namespace; the default export takes the kubeconfig's current context. */
export function defineKubernetesRuntime(options: KubernetesOptions = {}): RuntimePlugin<KubernetesSettings> {
  let settings: KubernetesOptions & typeof DEFAULTS = { ...DEFAULTS, ...options }

  const failed = (what: string, error: unknown, advice?: string): OmhError =>
    OmhError.of(CONTAINER_FAILED, {
      args: [ENGINE, what, (error as Error).message ?? String(error)],
      hintArgs: advice ? [advice] : [],
      cause: error,
      details: { why: (error as Error).message },
    })

  /** What every claim asks for. */
  const claims = () => ({ storage: settings.storage, ...(settings.storageClass ? { storageClass: settings.storageClass } : {}) })

  const clusters = new Map<string, Promise<Cluster>>()
  /** One client per environment: loading the kubeconfig and the client costs more than a call. */
  const cluster = (context: RuntimeContext): Promise<Cluster> => {
    const key = `${context.env['KUBECONFIG'] ?? ''}\0${context.env['HOME'] ?? ''}`
    let found = clusters.get(key)
    if (!found) {
      found = (async () => {
        const { loadConfig, Cluster } = await import('./cluster.js')
        const loaded = await loadConfig(context.env, settings)
        return new Cluster(loaded.k8s, loaded.config, loaded.namespace)
      })()
      found.catch(() => clusters.delete(key))
      clusters.set(key, found)
    }
    return found
  }

  const refuse = (spec: ContainerSpec) => {
    const why = unrunnable(spec)
    if (why) throw OmhError.of(CONTAINER_FAILED, { args: [ENGINE, `run a container from ${spec.image}`, why], hintArgs: ['Use a local engine (docker, podman) for this.'] })
  }

  /** Creates the Pod of `spec` under `pod` and waits for it; nothing of it is left when that fails. */
  const start = async (spec: ContainerSpec & { readonly limits?: Limits }, pod: string, context: RuntimeContext): Promise<Cluster> => {
    refuse(spec)
    const k = await cluster(context)
    // Every session asks for sshd's port for `omh attach`; a Pod runs without it, and attach says it cannot reach one.
    if (spec.ports?.length) context.progress(`${ENGINE} publishes no port of a Pod on this machine: to attach, forward one (\`kubectl port-forward${settings.context ? ` --context ${settings.context}` : ''} -n ${k.namespace} pod/${pod} 2222:${spec.ports[0]!.guest}\`) and run \`omh attach --port 2222\``)
    if (spec.limits?.pids) context.progress(`${ENGINE} sets no process limit per Pod: the cluster's own (the kubelet's podPidsLimit) applies instead of [session] pids`)
    let objects
    try {
      objects = manifests({ spec, name: pod, namespace: k.namespace, content: await readMounts(spec.mounts), ...claims() })
    } catch (error) {
      throw failed(`prepare the files of ${pod}`, error)
    }
    try {
      await k.create(objects)
      await k.waitFor(pod, 'running', settings.startTimeoutMs)
    } catch (error) {
      await k.remove(pod).catch(() => undefined)
      const pull = /ErrImagePull|ImagePullBackOff|InvalidImageName/.test((error as { reason?: string }).reason ?? '')
      throw failed(
        `start the Pod ${pod} in ${k.namespace}`,
        error,
        pull ? `The cluster cannot pull ${spec.image}: set \`[image] registry\` to a registry it can pull from and push omh's images there with \`omh images push\`.` : undefined,
      )
    }
    return k
  }

  return defineRuntime<KubernetesSettings>({
    kind: 'runtime',
    apiVersion: PLUGIN_API_VERSION,
    meta: { name, version },
    engine: ENGINE,
    options: kubernetesSettings,

    // The settings' table wins over what the runtime was defined with: it is the user's word.
    configure(table) {
      settings = {
        ...DEFAULTS,
        ...options,
        ...(table.context ? { context: table.context } : {}),
        ...(table.namespace ? { namespace: table.namespace } : {}),
        ...(table.claim ? { storage: table.claim } : {}),
        ...(table.storage_class ? { storageClass: table.storage_class } : {}),
      }
      clusters.clear()
    },

    async detect(context) {
      if (!kubeconfigPath(context.env)) {
        return { engine: ENGINE, reason: 'no kubeconfig: KUBECONFIG names no file that exists, and there is no ~/.kube/config', hint: 'Point KUBECONFIG at the kubeconfig of your cluster (the one kubectl uses).' }
      }
      try {
        const { loadConfig, Cluster } = await import('./cluster.js')
        const loaded = await loadConfig(context.env, settings)
        const k = new Cluster(loaded.k8s, loaded.config, loaded.namespace)
        const found = await withTimeout(k.version(), ANSWER_TIMEOUT_MS, loaded.server)
        return { engine: ENGINE, version: found, endpoint: `${loaded.context} (${loaded.server}), namespace ${loaded.namespace}` }
      } catch (error) {
        const { status, reason } = error as { status?: number; reason?: string }
        const message = (error as Error).message
        if (reason === 'NoContext') return { engine: ENGINE, reason: message, hint: 'Name one of its contexts in `[runtimes.kubernetes] context` (`kubectl config get-contexts` lists them), or remove the key to use its current context.' }
        if (status === 401 || status === 403) return { engine: ENGINE, reason: `the cluster refuses these credentials: ${message}`, hint: 'Log in to the cluster again (as kubectl would), or choose another context.' }
        return { engine: ENGINE, reason: `installed, but the cluster does not answer: ${message}`, hint: 'Check that `kubectl version` answers with the same KUBECONFIG and context.' }
      }
    },

    // A cluster pulls: omh cannot ask it what a node holds. A tag on a registry is taken as there
    // (a missing one fails the Pod with the pull error); a local tag never is.
    async hasImage(tag) {
      return !tag.startsWith('localhost/')
    },

    async build(recipe) {
      throw OmhError.of(IMAGE_BUILD_FAILED, {
        args: [ENGINE, recipe.tag, 'a cluster builds no images; it pulls them from a registry'],
        hintArgs: ['Build omh\'s images with a local engine (docker, podman), set `[image] registry` to a registry the cluster can pull from, and run `omh images push`.'],
      })
    },

    async up(spec, context) {
      const pod = podName(spec.name ?? `omh-${Date.now().toString(36)}`)
      await start(spec, pod, context)
      return pod
    },

    async exec(container, argv, options, context) {
      const k = await cluster(context)
      return execIn(k, container, argv, options)
    },

    async run(spec, context) {
      const pod = podName(`${spec.name ?? 'omh-run'}-${Date.now().toString(36)}`)
      refuse(spec)
      const k = await cluster(context)
      try {
        const objects = manifests({ spec, name: pod, namespace: k.namespace, content: await readMounts(spec.mounts), ...claims() })
        await k.create(objects)
        const done = await k.waitFor(pod, 'finished', settings.startTimeoutMs)
        const terminated = done.status?.containerStatuses?.find((c) => c.name === 'session')?.state?.terminated
        const stdout = await k.log(pod)
        return { exitCode: terminated?.exitCode ?? 1, stdout, stderr: '' }
      } catch (error) {
        throw failed(`run a Pod from ${spec.image}`, error)
      } finally {
        await k.remove(pod).catch(() => undefined)
        if (spec.mounts.some((m) => !m.readOnly)) await k.removeClaim(`${pod}-work`).catch(() => undefined)
      }
    },

    async list(labels, context) {
      const k = await cluster(context)
      const { containerInfo } = await import('./cluster.js')
      try {
        return (await k.list(labels)).map(containerInfo)
      } catch (error) {
        throw failed('list Pods', error)
      }
    },

    async inspect(container, context) {
      const k = await cluster(context)
      const { containerInfo } = await import('./cluster.js')
      try {
        const pod = await withTimeout(k.read(container), ANSWER_TIMEOUT_MS, 'the cluster')
        return pod && containerInfo(pod)
      } catch (error) {
        throw failed(`inspect the Pod ${container}`, error)
      }
    },

    // A cluster never shares this machine's disk: files are copied in, without looking.
    async fileWays() {
      return { ways: ['copied'] as const }
    },

    volumes: {
      async create(volume, labels, context) {
        const k = await cluster(context)
        try {
          return await k.createClaim(claimManifest({ name: volume, namespace: k.namespace, labels, ...claims() }))
        } catch (error) {
          throw failed(`create the claim ${volume}`, error)
        }
      },
      async list(labels, context) {
        const k = await cluster(context)
        try {
          return await k.claims(labels)
        } catch (error) {
          throw failed('list claims', error)
        }
      },
      async remove(volume, context) {
        const k = await cluster(context)
        try {
          await k.removeClaim(volume)
        } catch (error) {
          throw failed(`remove the claim ${volume}`, error)
        }
      },
      async put(volume, archive, helper, context) {
        // Emptied first: the archive is the volume's whole content.
        await throughHelper(await cluster(context), volume, helper, ['sh', '-c', `find ${HELPER_MOUNT} -mindepth 1 -delete && tar -x -f - -C ${HELPER_MOUNT}`], { stdin: archive }, `fill the claim ${volume}`)
      },
      async get(volume, archive, helper, context) {
        const k = await cluster(context)
        // The running Pod that mounts the claim reads it cheaper than a helper started for it.
        if (helper.via && (await throughPod(k, helper.via.container, ['tar', '-c', '-f', '-', '-C', helper.via.guest, '.'], archive))) return
        await throughHelper(k, volume, helper, ['tar', '-c', '-f', '-', '-C', HELPER_MOUNT, '.'], { stdout: archive }, `read the claim ${volume}`)
      },
    },

    async down(container, context) {
      const k = await cluster(context)
      try {
        await k.remove(container)
      } catch (error) {
        throw failed(`remove the Pod ${container}`, error)
      }
    },
  })
}

/** Runs argv in a running Pod with stdout to a host file; false when the Pod is gone or argv fails, so a helper can take over. */
async function throughPod(k: Cluster, pod: string, argv: readonly string[], archive: string): Promise<boolean> {
  try {
    if (!(await k.read(pod))?.status?.containerStatuses?.some((c) => c.state?.running)) return false
    const { collector } = await import('./cluster.js')
    const out = createWriteStream(archive)
    const code = await k.exec(pod, argv, { stdout: out, stderr: collector().stream, tty: false })
    out.end()
    await finished(out)
    return code === 0
  } catch {
    return false
  }
}

/**
 * Runs argv in a helper Pod that mounts the claim, with a host file as its
 * stdin or stdout, then removes the helper. Only the archive crosses the
 * network.
 */
async function throughHelper(k: Cluster, claim: string, helper: VolumeHelper, argv: readonly string[], io: { stdin?: string; stdout?: string }, what: string): Promise<void> {
  const pod = podName(`omh-volume-${claim}`.slice(0, 50) + `-${Date.now().toString(36)}`)
  const fail = (error: unknown) =>
    OmhError.of(CONTAINER_FAILED, { args: [ENGINE, what, (error as Error).message], hintArgs: [], cause: error, details: { why: (error as Error).message } })
  try {
    const node = await k.nodeUsing(claim)
    await k.createPod(helperPod({ name: pod, namespace: k.namespace, claim, image: helper.image, owner: helper.owner, ...(node ? { node } : {}) }))
    await k.waitFor(pod, 'running', DEFAULTS.startTimeoutMs)
    const { collector } = await import('./cluster.js')
    const err = collector()
    const out = io.stdout ? createWriteStream(io.stdout) : collector().stream
    const code = await k.exec(pod, argv, { ...(io.stdin ? { stdin: createReadStream(io.stdin) } : {}), stdout: out, stderr: err.stream, tty: false })
    if (io.stdout) {
      out.end()
      await finished(out)
    }
    if (code !== 0) throw new Error(`${argv.join(' ')} exited ${code}: ${err.text().trim()}`)
  } catch (error) {
    throw fail(error)
  } finally {
    await k.remove(pod).catch(() => undefined)
  }
}

/**
 * An exec through the API. The API runs argv as the Pod's user in its
 * working directory and takes no environment, so a short `sh` prologue
 * checks the user, changes directory and sets the variables (their values
 * travel in the request, as they would on a command line).
 */
async function execIn(k: Cluster, pod: string, argv: readonly string[], options: ExecOptions): Promise<RunResult> {
  const { collector } = await import('./cluster.js')
  const env = Object.entries(options.env ?? {}).map(([key, value]) => `${key}=${value}`)
  const prologue = 'u=$1 w=$2; shift 2; if [ -n "$u" ] && [ "$u" != "$(id -u):$(id -g)" ] && [ "$u" != "$(id -u)" ]; then echo "omh: this Pod runs as $(id -u):$(id -g), not $u" >&2; exit 126; fi; if [ -n "$w" ]; then cd "$w" || exit 126; fi; exec env "$@"'
  const wrapped = ['sh', '-c', prologue, 'omh-exec', options.user ?? '', options.workdir ?? '', ...env, ...argv]
  const terminal = options.tty && !options.capture && Boolean(process.stdin.isTTY)
  const out = collector()
  const err = collector()
  const raw = terminal && process.stdin.isTTY
  if (raw) process.stdin.setRawMode(true)
  try {
    const exitCode = await k.exec(pod, wrapped, {
      ...(options.interactive && !options.capture ? { stdin: process.stdin } : {}),
      stdout: options.capture ? out.stream : process.stdout,
      stderr: options.capture ? err.stream : process.stderr,
      tty: terminal,
    })
    return { exitCode, stdout: out.text(), stderr: err.text() }
  } catch (error) {
    if (!options.capture) {
      process.stderr.write(`${(error as Error).message}\n`)
      return { exitCode: 125, stdout: '', stderr: '' }
    }
    throw OmhError.of(CONTAINER_FAILED, { args: [ENGINE, `run ${argv[0] ?? ''} in the Pod ${pod}`, (error as Error).message], hintArgs: [], cause: error })
  } finally {
    if (raw) process.stdin.setRawMode(false)
    if (options.interactive && !options.capture) process.stdin.pause()
  }
}

export default defineKubernetesRuntime()
