/**
 * A container description as Kubernetes objects: the Pod, the ConfigMaps that
 * hold its read-only files, the Secret that holds its environment and the
 * PersistentVolumeClaim behind its writable mounts. Pure: the same input
 * gives the same objects, so they can be held to golden files and validated
 * offline.
 */
import path from 'node:path'
import type { ContainerSpec } from '@omh/plugin-api'

/** One file of a read-only mount, as read from the host. */
export interface FileContent {
  /** Path inside the mount, `/`-separated; empty for a mount of a single file. */
  readonly path: string
  readonly content: Uint8Array
  readonly executable: boolean
}

/** What a read-only mount holds, read before the objects are made (a cluster cannot see the host). */
export interface MountContent {
  readonly guest: string
  readonly kind: 'file' | 'directory'
  readonly files: readonly FileContent[]
}

/** The ceilings of a container; matches the contract's limits where it has them. */
export interface Limits {
  readonly memory?: number
  readonly pids?: number
  readonly cpus?: number
}

export interface ManifestInput {
  readonly spec: ContainerSpec & { readonly limits?: Limits }
  /** The Pod's name; derived from `spec.name` by `podName`. */
  readonly name: string
  readonly namespace: string
  /** Content of every read-only mount, by guest path. */
  readonly content: readonly MountContent[]
  /** Size asked of the claim behind the writable mounts, e.g. `10Gi`. */
  readonly storage: string
  /** The claim's storage class; absent: the cluster's default. */
  readonly storageClass?: string
}

type Obj = Record<string, unknown>

export interface Manifests {
  readonly pod: Obj
  readonly configMaps: readonly Obj[]
  readonly secret?: Obj
  readonly claim?: Obj
}

/** Label every object omh makes carries, so nothing else is ever listed or removed. */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'omh' } as const
/** The annotation holding every label of the description, including values a label cannot hold (paths). */
export const LABELS_ANNOTATION = 'omh.dev/labels'
/** The label naming the Pod an object belongs to, so its ConfigMaps and Secret go with it. */
export const POD_LABEL = 'omh.dev/pod'
/** The container's name inside the Pod; `exec` names it. */
export const CONTAINER = 'session'
/** Where the prepare step sees the claim whole. */
const CLAIM_ROOT = '/omh-claim'
/** Kubernetes refuses a ConfigMap or Secret above 1 MiB. */
export const OBJECT_BYTES = 1024 * 1024

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/
const DNS_SUBDOMAIN_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/** Whether a label can be a Kubernetes label (key and value); the others live only in the annotation. */
export function selectable(key: string, value: string): boolean {
  const slash = key.lastIndexOf('/')
  const prefix = slash < 0 ? undefined : key.slice(0, slash)
  const name = slash < 0 ? key : key.slice(slash + 1)
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN_PREFIX.test(prefix))) return false
  return name.length <= 63 && LABEL_NAME.test(name) && value.length <= 63 && LABEL_VALUE.test(value)
}

/**
 * A Pod name from a container name: lower case, letters, digits and `-`,
 * at most 63 (it names the Pod's hostname too). Names that differ only in
 * what is dropped would collide, so a changed name keeps a digest suffix.
 */
export function podName(name: string): string {
  const plain = name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '')
  if (plain === name && plain.length <= 63) return name
  let hash = 0x811c9dc5
  for (const ch of name) hash = Math.imul(hash ^ ch.codePointAt(0)!, 0x01000193) >>> 0
  const suffix = hash.toString(16).padStart(8, '0')
  return `${plain.slice(0, 54).replace(/-+$/, '') || 'omh'}-${suffix}`
}

/** `uid:gid` as numbers; a cluster runs containers by number, never by a name the image knows. */
export function numericIds(user: string): { uid: number; gid: number } | undefined {
  const m = /^(\d+)(?::(\d+))?$/.exec(user)
  if (!m) return undefined
  const uid = Number(m[1])
  return { uid, gid: m[2] === undefined ? uid : Number(m[2]) }
}

/** CPUs as millicores, the unit a limit is exact in. */
const cpuQuantity = (cpus: number) => `${Math.max(1, Math.round(cpus * 1000))}m`

const textOrBinary = (bytes: Uint8Array): { text: string } | { binary: string } => {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes)
  return Buffer.from(text, 'utf8').equals(Buffer.from(bytes)) ? { text } : { binary: Buffer.from(bytes).toString('base64') }
}

/** Why a description cannot run as a Pod, or undefined. */
export function unrunnable(spec: ContainerSpec): string | undefined {
  if (!numericIds(spec.user)) return `the user ${spec.user} is a name; a Pod runs as numbers (uid:gid)`
  if (spec.network !== undefined) return `a Pod joins the cluster's network, not the engine network ${spec.network}`
  return undefined
}

/**
 * The objects for one container. Volumes (the copied way) are claims of
 * those names, made and filled beforehand. Read-only mounts become ConfigMap volumes
 * (one ConfigMap per mount, each under Kubernetes' 1 MiB), the environment a
 * Secret the container takes whole (values stay out of the Pod, which more
 * people may read), and writable mounts sub-paths of one claim, made ready by
 * a prepare step running with the same hardening.
 */
export function manifests(input: ManifestInput): Manifests {
  const { spec, name, namespace } = input
  const why = unrunnable(spec)
  if (why) throw new Error(why)
  const ids = numericIds(spec.user)!
  const labels: Record<string, string> = { ...MANAGED_BY }
  for (const [k, v] of Object.entries(spec.labels)) if (selectable(k, v)) labels[k] = v
  const own = { ...labels, [POD_LABEL]: name }
  // The claim outlives the Pod (the session's next container uses it), so it is not the Pod's.
  const metadata = (objectName: string, owned = true) => ({
    name: objectName,
    namespace,
    labels: owned ? own : labels,
    annotations: { [LABELS_ANNOTATION]: JSON.stringify(sortKeys(spec.labels)) },
  })

  const byGuest = new Map(input.content.map((c) => [c.guest, c]))
  const volumes: Obj[] = []
  const mounts: Obj[] = []
  const prepare: Obj[] = []
  const configMaps: Obj[] = []
  const claimName = `${name}-work`
  const writable = spec.mounts.filter((m) => !m.readOnly)
  const toCreate: { dirs: string[]; files: string[] } = { dirs: [], files: [] }

  // The copied way: claims filled from archives made on this machine, mounted before any mount.
  for (const [n, v] of (spec.volumes ?? []).entries()) {
    volumes.push({ name: `v${n}`, persistentVolumeClaim: { claimName: v.volume, ...(v.readOnly ? { readOnly: true } : {}) } })
    mounts.push({ name: `v${n}`, mountPath: v.guest, ...(v.readOnly ? { readOnly: true } : {}) })
  }
  if (writable.length) volumes.push({ name: 'work', persistentVolumeClaim: { claimName } })
  spec.mounts.forEach((m, n) => {
    if (!m.readOnly) {
      // The host's kind of path decides: a file mounts over a file, a directory over a directory.
      const sub = `m${n}`
      const content = byGuest.get(m.guest)
      if (content?.kind === 'file') toCreate.files.push(sub)
      else toCreate.dirs.push(sub)
      mounts.push({ name: 'work', mountPath: m.guest, subPath: sub })
      return
    }
    const content = byGuest.get(m.guest)
    if (!content) throw new Error(`no content was read for the read-only mount at ${m.guest}`)
    const cmName = `${name}-f${n}`
    const data: Record<string, string> = {}
    const binaryData: Record<string, string> = {}
    const items: Obj[] = []
    content.files.forEach((f, k) => {
      const key = `k${k}`
      const value = textOrBinary(f.content)
      if ('text' in value) data[key] = value.text
      else binaryData[key] = value.binary
      const rel = content.kind === 'file' ? path.posix.basename(m.guest) : f.path
      items.push({ key, path: rel, mode: f.executable ? 0o555 : 0o444 })
    })
    const size = content.files.reduce((s, f) => s + f.content.byteLength, 0)
    if (size > OBJECT_BYTES) throw new Error(`the files mounted at ${m.guest} take ${size} bytes, more than a ConfigMap holds (${OBJECT_BYTES})`)
    configMaps.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: metadata(cmName),
      immutable: true,
      ...(Object.keys(data).length ? { data } : {}),
      ...(Object.keys(binaryData).length ? { binaryData } : {}),
    })
    const volume = `f${n}`
    volumes.push({ name: volume, configMap: { name: cmName, items } })
    mounts.push({
      name: volume,
      mountPath: m.guest,
      readOnly: true,
      ...(content.kind === 'file' ? { subPath: path.posix.basename(m.guest) } : {}),
    })
  })

  const hardening = {
    runAsUser: ids.uid,
    runAsGroup: ids.gid,
    runAsNonRoot: true,
    allowPrivilegeEscalation: !spec.noNewPrivileges ? undefined : false,
    capabilities: spec.capDrop?.length ? { drop: [...spec.capDrop] } : undefined,
    privileged: false,
  }
  const securityContext = dropUndefined(hardening)

  const envNames = Object.keys(spec.env).sort()
  const secret = envNames.length
    ? {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: metadata(`${name}-env`),
        type: 'Opaque',
        immutable: true,
        stringData: Object.fromEntries(envNames.map((k) => [k, spec.env[k]!])),
      }
    : undefined

  const limits: Record<string, string> = {}
  if (spec.limits?.memory) limits['memory'] = String(spec.limits.memory)
  if (spec.limits?.cpus) limits['cpu'] = cpuQuantity(spec.limits.cpus)

  if (writable.length) {
    prepare.push({
      name: 'prepare',
      image: spec.image,
      imagePullPolicy: 'IfNotPresent',
      command: ['sh', '-c', 'cd "$1" && shift && for d in $DIRS; do mkdir -p "$d"; done && for f in $FILES; do touch "$f"; done', 'prepare', CLAIM_ROOT],
      env: [
        { name: 'DIRS', value: toCreate.dirs.join(' ') },
        { name: 'FILES', value: toCreate.files.join(' ') },
      ],
      securityContext,
      ...(Object.keys(limits).length ? { resources: { limits } } : {}),
      volumeMounts: [{ name: 'work', mountPath: CLAIM_ROOT }],
    })
  }

  const container = {
    name: CONTAINER,
    image: spec.image,
    // omh's tags name one recipe each and never move: a node that has one need not ask again.
    imagePullPolicy: 'IfNotPresent',
    args: [...spec.argv],
    workingDir: spec.workdir,
    ...(secret ? { envFrom: [{ secretRef: { name: `${name}-env` } }] } : {}),
    securityContext,
    ...(Object.keys(limits).length ? { resources: { limits } } : {}),
    ...(mounts.length ? { volumeMounts: mounts } : {}),
    ...(spec.tty ? { tty: true } : {}),
    ...(spec.interactive ? { stdin: true } : {}),
  }

  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: metadata(name),
    spec: {
      restartPolicy: 'Never',
      // The agent gets no credentials for the cluster it runs on.
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      // The Pod's pause process is PID 1 and reaps orphans: the cluster's equivalent of `--init`.
      ...(spec.init ? { shareProcessNamespace: true } : {}),
      securityContext: dropUndefined({
        runAsUser: ids.uid,
        runAsGroup: ids.gid,
        runAsNonRoot: true,
        // Writable volumes become the agent's group's, so it can write the claim.
        fsGroup: writable.length || spec.volumes?.some((v) => !v.readOnly) ? ids.gid : undefined,
        seccompProfile: { type: 'RuntimeDefault' },
      }),
      ...(prepare.length ? { initContainers: prepare } : {}),
      containers: [container],
      ...(volumes.length ? { volumes } : {}),
    },
  }

  const claim = writable.length
    ? {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: metadata(claimName, false),
        spec: {
          accessModes: ['ReadWriteOnce'],
          ...(input.storageClass ? { storageClassName: input.storageClass } : {}),
          resources: { requests: { storage: input.storage } },
        },
      }
    : undefined

  return { pod, configMaps, ...(secret ? { secret } : {}), ...(claim ? { claim } : {}) }
}

/** Every object, in the order a cluster needs them: what the Pod refers to first. */
export function allObjects(m: Manifests): Obj[] {
  return [...(m.claim ? [m.claim] : []), ...(m.secret ? [m.secret] : []), ...m.configMaps, m.pod]
}

/** The objects as one YAML stream (JSON documents, which YAML reads as they are). */
export function toYaml(objects: readonly Obj[]): string {
  return objects.map((o) => `---\n${JSON.stringify(o, null, 2)}\n`).join('')
}

function dropUndefined(o: Record<string, unknown>): Obj {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
}

function sortKeys(o: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/** The claim behind a volume of the copied way, carrying its labels as every object does. */
export function claimManifest(input: { readonly name: string; readonly namespace: string; readonly labels: Readonly<Record<string, string>>; readonly storage: string; readonly storageClass?: string }): Obj {
  const labels: Record<string, string> = { ...MANAGED_BY }
  for (const [k, v] of Object.entries(input.labels)) if (selectable(k, v)) labels[k] = v
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: input.name, namespace: input.namespace, labels, annotations: { [LABELS_ANNOTATION]: JSON.stringify(sortKeys(input.labels)) } },
    spec: {
      accessModes: ['ReadWriteOnce'],
      ...(input.storageClass ? { storageClassName: input.storageClass } : {}),
      resources: { requests: { storage: input.storage } },
    },
  }
}

/** Where a helper sees the claim it fills or reads. */
export const HELPER_MOUNT = '/volume'

/**
 * A short-lived Pod that mounts one claim so an archive can go in or come out
 * through `exec`, hardened as a session is and running as the owner the files
 * are to have. On a node of its own choosing unless `node` pins it beside the
 * Pod already using the claim (a ReadWriteOnce claim is one node's at a time).
 */
export function helperPod(input: { readonly name: string; readonly namespace: string; readonly claim: string; readonly image: string; readonly owner: { readonly uid: number; readonly gid: number }; readonly node?: string }): Obj {
  const { uid, gid } = input.owner
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: input.name, namespace: input.namespace, labels: { ...MANAGED_BY, [POD_LABEL]: input.name } },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      // A helper left behind by an interrupted omh ends on its own.
      activeDeadlineSeconds: 3600,
      ...(input.node ? { nodeName: input.node } : {}),
      securityContext: { runAsUser: uid, runAsGroup: gid, runAsNonRoot: true, fsGroup: gid, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: CONTAINER,
          image: input.image,
          imagePullPolicy: 'IfNotPresent',
          args: ['sleep', '3600'],
          securityContext: { runAsUser: uid, runAsGroup: gid, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, privileged: false },
          volumeMounts: [{ name: 'volume', mountPath: HELPER_MOUNT }],
        },
      ],
      volumes: [{ name: 'volume', persistentVolumeClaim: { claimName: input.claim } }],
    },
  }
}
