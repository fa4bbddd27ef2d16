/**
 * The `copied` way in: a session on an engine that does not share this
 * machine's disk. The host side of a session stays as it is (worktree,
 * sandbox repository, staging); its container gets volumes filled from tar
 * archives made here instead of bind mounts, and what the agent wrote comes
 * back by tar before anything on the host reads it.
 *
 * A mounted spec becomes a copied one mount by mount: a writable directory
 * becomes a volume of its own, filled once, when the volume is made, so a
 * relaunch finds the agent's work where it left it; read-only entries go
 * into one read-only volume, writable files into another, each refilled for
 * every new container, and are linked into place from there.
 */
import { randomBytes } from 'node:crypto'
import { execFile } from 'node:child_process'
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import {
  ENGINE_FILES_UNREACHABLE,
  OmhError,
  type ContainerSpec,
  type FileWay,
  type RuntimeContext,
  type RuntimePlugin,
  type VolumeHelper,
  type VolumeMount,
} from '@omh/plugin-api'
import { handToAgent } from '../host/ownership.js'

const run = promisify(execFile)

/** What `[session] files` asks for. */
export type FilesSetting = 'auto' | FileWay

/** Where the read-only and the writable single entries are kept in a copied container. */
const COPIED_ROOT = '/omh/copied'
const RECORD = 'copied.json'

/**
 * Asks the runtime which way files reach its containers (a probe file it can
 * or cannot see, or its own answer) and picks one, or refuses with why.
 */
export async function chooseWay(runtime: RuntimePlugin, image: string, wanted: FilesSetting, near: string, context: RuntimeContext, endpoint = ''): Promise<FileWay> {
  const found = runtime.fileWays ? await probe(runtime, image, near, context) : { ways: ['mounted'] as FileWay[] }
  const ways = found.ways.filter((w) => w === 'mounted' || runtime.volumes)
  const pick = wanted === 'auto' ? ways[0] : ways.find((w) => w === wanted)
  if (pick) return pick
  const why =
    wanted === 'mounted'
      ? `[session] files = "mounted", and ${found.why ?? 'the engine cannot mount this disk'}`
      : !runtime.volumes
        ? `${found.why ?? 'the engine does not see this disk'}, and the ${runtime.engine} runtime cannot copy files into volumes`
        : (found.why ?? 'neither way works')
  const advice =
    wanted === 'mounted' && ways.includes('copied')
      ? 'Set `[session] files = "auto"` (or remove the key) to have the files copied into volumes, or point the client at an engine that shares this disk.'
      : undefined
  throw OmhError.of(ENGINE_FILES_UNREACHABLE, { args: [runtime.engine, endpoint, why], hintArgs: advice ? [advice] : [] })
}

/**
 * The probe lies `near` the session's files, not in a temporary directory: an
 * engine may share some of this disk and not the rest (a virtual machine that
 * mounts your home and not /tmp).
 */
async function probe(runtime: RuntimePlugin, image: string, near: string, context: RuntimeContext) {
  await mkdir(near, { recursive: true })
  const dir = await mkdtemp(path.join(near, '.omh-probe-'))
  try {
    const token = randomBytes(16).toString('hex')
    // Readable by any user the engine may map the container's onto.
    await chmod(dir, 0o755)
    await writeFile(path.join(dir, 'probe'), token, { mode: 0o644 })
    return await runtime.fileWays!({ dir, file: 'probe', token, image }, context)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** One volume of a copied container, and how it is filled and read back. */
export interface CopiedVolume {
  readonly volume: string
  readonly guest: string
  readonly readOnly: boolean
  /** A writable host directory: filled from it when the volume is made. */
  readonly dir?: string
  /** What the agent writes there is brought back into that directory. */
  readonly back?: boolean
  /** Single entries (files, read-only directories) by name in the volume, with the host path each comes from. */
  readonly entries?: readonly CopiedEntry[]
}

/** A single entry of a volume. */
export interface CopiedEntry {
  readonly name: string
  readonly host: string
  /** Read-only mounts inside this directory, by their path below it: copied into it, in their place. */
  readonly inside?: readonly { readonly rel: string; readonly host: string }[]
}

/** A copied container: its spec, its volumes, and the links that put single entries where the harness reads them. */
export interface CopyPlan {
  readonly spec: ContainerSpec
  readonly volumes: readonly CopiedVolume[]
  /** Guest path → where it links to in a volume. */
  readonly links: readonly (readonly [guest: string, target: string])[]
  readonly helper: VolumeHelper
}

const slug = (guest: string) => guest.replace(/^\/+/, '').replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[-.]+/, '') || 'root'

/**
 * Turns a spec with host mounts into one with volumes named after `prefix`
 * (the container's name). `back` names the writable directories whose
 * volumes come back to the host: the agent's work, never a credential
 * directory other sessions share, which a stale copy would overwrite.
 */
export async function copyPlan(spec: ContainerSpec, prefix: string, owner: VolumeHelper['owner'], back: readonly string[] = []): Promise<CopyPlan> {
  const volumes: CopiedVolume[] = []
  const links: [string, string][] = []
  const staged: CopiedEntry[] = []
  const files: CopiedEntry[] = []
  // A read-only mount inside a read-only directory mount (a tree whose entries are mounted) cannot be
  // linked into place there, a read-only volume: it goes into that directory's copy instead.
  const dirs = new Set<string>()
  for (const m of spec.mounts) if (m.readOnly && (await lstat(m.host)).isDirectory()) dirs.add(m.guest)
  const outer = (guest: string) => [...dirs].find((d) => guest.startsWith(`${d}/`))
  const inside = new Map<string, { rel: string; host: string }[]>()
  for (const m of spec.mounts) {
    const d = m.readOnly ? outer(m.guest) : undefined
    if (d) inside.set(d, [...(inside.get(d) ?? []), { rel: m.guest.slice(d.length + 1), host: m.host }])
  }
  for (const m of spec.mounts) {
    if (m.readOnly && outer(m.guest)) continue
    const isDir = (await lstat(m.host)).isDirectory()
    if (isDir && !m.readOnly) {
      volumes.push({ volume: `${prefix}-${slug(m.guest)}`, guest: m.guest, readOnly: false, dir: m.host, ...(back.includes(m.guest) ? { back: true } : {}) })
      continue
    }
    const into = m.readOnly ? staged : files
    const name = String(into.length)
    const within = inside.get(m.guest)
    into.push({ name, host: m.host, ...(within ? { inside: within } : {}) })
    links.push([m.guest, `${COPIED_ROOT}/${m.readOnly ? 'staged' : 'files'}/${name}`])
  }
  if (staged.length) volumes.push({ volume: `${prefix}-staged`, guest: `${COPIED_ROOT}/staged`, readOnly: true, entries: staged })
  if (files.length) volumes.push({ volume: `${prefix}-files`, guest: `${COPIED_ROOT}/files`, readOnly: false, entries: files })
  const mounts: VolumeMount[] = volumes.map(({ volume, guest, readOnly }) => ({ volume, guest, readOnly }))
  return { spec: { ...spec, mounts: [], volumes: [...(spec.volumes ?? []), ...mounts] }, volumes, links, helper: { image: spec.image, owner } }
}

/**
 * The command that puts every single entry in place as a link into its
 * volume; whatever stood there before (an image's empty directory, an older
 * link) is replaced, never what lies below a directory with content.
 */
export function linkCommand(plan: CopyPlan): string[] {
  const script = 'set -e; while [ $# -gt 1 ] && [ "$1" != -- ]; do mkdir -p "$(dirname "$1")"; rm -f "$1" 2>/dev/null || rmdir "$1" 2>/dev/null || true; ln -sfn "$2" "$1"; shift 2; done'
  return ['sh', '-c', script, 'omh-links', ...plan.links.flatMap(([guest, target]) => [guest, target])]
}

/** Wraps a one-shot container's command so the links are in place before it runs. */
export function withLinks(plan: CopyPlan): ContainerSpec {
  if (!plan.links.length) return plan.spec
  const [, , script, name, ...pairs] = linkCommand(plan)
  return { ...plan.spec, argv: ['sh', '-c', `${script}; shift; exec "$@"`, name!, ...pairs, '--', ...plan.spec.argv] }
}

/**
 * Fills the plan's volumes: a writable directory's only when its volume was
 * just made (it holds the agent's work after that), the single entries'
 * every time. Labels let `down` and `rm` find them.
 */
export async function fillVolumes(runtime: RuntimePlugin, plan: CopyPlan, labels: Readonly<Record<string, string>>, context: RuntimeContext): Promise<void> {
  const ops = runtime.volumes!
  const work = await mkdtemp(path.join(os.tmpdir(), 'omh-copy-'))
  try {
    await Promise.all(
      plan.volumes.map(async (v, n) => {
        const created = await ops.create(v.volume, labels, context)
        if (v.dir && !created) return
        const archive = path.join(work, `${n}.tar`)
        if (v.dir) await run('tar', ['-c', '-f', archive, '-C', v.dir, '.'])
        else {
          // Each entry by its name, its content followed where staging links to it.
          const pack = path.join(work, String(n))
          await mkdir(pack)
          for (const e of v.entries ?? []) {
            if (e.inside) await packInside(path.join(pack, e.name), e.host, e.inside)
            else await symlink(e.host, path.join(pack, e.name))
          }
          await run('tar', ['-c', '-h', '-f', archive, '-C', pack, ...(v.entries ?? []).map((e) => e.name)])
        }
        await ops.put(v.volume, archive, plan.helper, context)
      }),
    )
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

/**
 * Lays out a directory for `tar -h` to copy as one: each of its entries a link to the host's, and each
 * mount inside it a link to that mount's source, in its place (every directory on the way made real).
 */
export async function packInside(at: string, host: string, inside: readonly { rel: string; host: string }[]): Promise<void> {
  const linkAll = async (to: string, from: string) => {
    await mkdir(to)
    for (const name of await readdir(from).catch(() => [])) await symlink(path.join(from, name), path.join(to, name))
  }
  await linkAll(at, host)
  for (const m of inside) {
    const steps = m.rel.split('/')
    let to = at
    let from = host
    for (const step of steps.slice(0, -1)) {
      to = path.join(to, step)
      from = path.join(from, step)
      const info = await lstat(to).catch(() => undefined)
      if (!info?.isDirectory()) {
        await rm(to, { force: true })
        await linkAll(to, from)
      }
    }
    const place = path.join(to, steps.at(-1)!)
    await rm(place, { recursive: true, force: true })
    await symlink(m.host, place)
  }
}

/** Replaces a volume's contents with the named files of a host directory, through the runtime's helper. */
export async function putFiles(runtime: RuntimePlugin, volume: string, dir: string, names: readonly string[], helper: VolumeHelper, context: RuntimeContext): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'omh-put-'))
  try {
    const archive = path.join(work, 'files.tar')
    await run('tar', ['-c', '-f', archive, '-C', dir, ...names])
    await runtime.volumes!.put(volume, archive, helper, context)
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

/**
 * Reads a finished container's writable volumes back onto the host, each
 * directory and single entry at `where(its host path)`: a login made in a
 * one-shot container lands somewhere the caller checks before it is kept.
 * Group and others lose every permission: what comes back may be a login.
 */
export async function readVolumes(runtime: RuntimePlugin, plan: CopyPlan, where: (host: string) => string, context: RuntimeContext): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'omh-read-'))
  try {
    for (const [n, v] of plan.volumes.entries()) {
      if (v.readOnly) continue
      const archive = path.join(work, `${n}.tar`)
      const tree = path.join(work, String(n))
      await mkdir(tree)
      await runtime.volumes!.get(v.volume, archive, plan.helper, context)
      await run('tar', ['-x', '-f', archive, '-C', tree, '--no-same-owner'])
      await keepPrivate(tree)
      if (v.dir) {
        const target = where(v.dir)
        await mkdir(target, { recursive: true, mode: 0o700 })
        await mirror(tree, target, new Set())
      }
      for (const e of v.entries ?? []) {
        const found = await lstat(path.join(tree, e.name)).catch(() => undefined)
        if (!found || found.isSymbolicLink()) continue
        const target = where(e.host)
        await mkdir(path.dirname(target), { recursive: true, mode: 0o700 })
        await rename(path.join(tree, e.name), target)
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

async function keepPrivate(target: string): Promise<void> {
  const info = await lstat(target)
  if (info.isSymbolicLink()) return
  await chmod(target, info.isDirectory() ? 0o700 : info.mode & 0o700)
  if (info.isDirectory()) for (const name of await readdir(target)) await keepPrivate(path.join(target, name))
}

/** What a session keeps about its copied container, so commands that run later can read its work back. */
export interface CopiedRecord {
  /** The container that mounts the volumes, which the work is read through while it runs. */
  readonly container: string
  readonly helper: VolumeHelper
  /** Each with the host directory it comes back to, when it does. */
  readonly volumes: readonly { readonly volume: string; readonly guest: string; readonly dir?: string }[]
  readonly links: readonly string[]
}

export async function writeCopied(runDir: string, plan: CopyPlan): Promise<void> {
  const record: CopiedRecord = {
    container: plan.spec.name ?? '',
    helper: plan.helper,
    volumes: plan.volumes.map(({ volume, guest, dir, back }) => ({ volume, guest, ...(dir && back ? { dir } : {}) })),
    links: plan.links.map(([guest]) => guest),
  }
  await mkdir(runDir, { recursive: true })
  await writeFile(path.join(runDir, RECORD), `${JSON.stringify(record, null, 2)}\n`)
}

export async function readCopied(runDir: string): Promise<CopiedRecord | undefined> {
  try {
    return JSON.parse(await readFile(path.join(runDir, RECORD), 'utf8')) as CopiedRecord
  } catch {
    return undefined
  }
}

export const forgetCopied = (runDir: string): Promise<void> => rm(path.join(runDir, RECORD), { force: true })

/**
 * Brings what the agent wrote back: each writable directory's volume is read
 * as a tar and mirrored onto its host directory, omh's links left out and
 * the host's own entries under them kept. Resolves false when the session
 * has no copied container.
 */
export async function copyBack(runtime: RuntimePlugin, runDir: string, context: RuntimeContext): Promise<boolean> {
  const record = await readCopied(runDir)
  const ops = runtime.volumes
  if (!record || !ops) return false
  const back = async (v: CopiedRecord['volumes'][number] & { dir: string }) => {
    const inside = record.links.filter((l) => l.startsWith(`${v.guest}/`)).map((l) => l.slice(v.guest.length + 1))
    const work = await mkdtemp(path.join(path.dirname(v.dir), '.omh-back-'))
    try {
      const archive = path.join(work, 'back.tar')
      const tree = path.join(work, 'tree')
      await mkdir(tree)
      await ops.get(v.volume, archive, { ...record.helper, via: { container: record.container, guest: v.guest } }, context)
      // GNU tar drops absolute and `..` names and sets links only after every file, so
      // nothing the agent archived is written through a link it made.
      await run('tar', ['-x', '-f', archive, '-C', tree, '--no-same-owner', '--no-same-permissions'])
      await mirror(tree, v.dir, new Set(inside))
      await handToAgent(v.dir)
    } finally {
      await rm(work, { recursive: true, force: true })
    }
  }
  await Promise.all(record.volumes.flatMap((v) => (v.dir ? [back({ ...v, dir: v.dir })] : [])))
  return true
}

/**
 * Makes `to` hold what `from` holds, moving entries across and never
 * following a link on either side; paths in `keep` (relative) are omh's and
 * stay as they are on the host.
 */
export async function mirror(from: string, to: string, keep: ReadonlySet<string>, rel = ''): Promise<void> {
  const kept = (name: string) => keep.has(rel ? `${rel}/${name}` : name)
  const holds = (name: string) => [...keep].some((k) => k.startsWith(`${rel ? `${rel}/` : ''}${name}/`))
  const incoming = new Map((await readdir(path.join(from, rel), { withFileTypes: true })).map((e) => [e.name, e]))
  for (const e of await readdir(path.join(to, rel), { withFileTypes: true })) {
    if (kept(e.name) || holds(e.name) || incoming.has(e.name)) continue
    await rm(path.join(to, rel, e.name), { recursive: true, force: true })
  }
  for (const [name, e] of incoming) {
    if (kept(name)) continue
    const target = path.join(to, rel, name)
    const there = await lstat(target).catch(() => undefined)
    if (e.isDirectory()) {
      if (there && !there.isDirectory()) await rm(target, { recursive: true, force: true })
      if (!there || !there.isDirectory()) await mkdir(target)
      await mirror(from, to, keep, rel ? `${rel}/${name}` : name)
    } else {
      if (there?.isDirectory()) await rm(target, { recursive: true, force: true })
      await rename(path.join(from, rel, name), target)
    }
  }
}

/** Removes every volume of a session's copied containers. */
export async function removeVolumes(runtime: RuntimePlugin, labels: Readonly<Record<string, string>>, runDir: string, context: RuntimeContext): Promise<number> {
  if (!runtime.volumes) return 0
  const names = await runtime.volumes.list(labels, context)
  for (const name of names) await runtime.volumes.remove(name, context)
  await forgetCopied(runDir)
  return names.length
}
