import { lstat, mkdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Mountpoint } from './plan.js'
import { exists } from '../host-files.js'

const record = (runDir: string) => path.join(runDir, 'mountpoints.json')

/**
 * Creates the mountpoints a plan needs inside writable host directories, as
 * the user running omh. Left to the engine, they would be created as root
 * and stay behind in the worktree after the container is gone. Everything
 * created here (parents included) is recorded, so `clearMountpoints` removes
 * exactly that and nothing the agent or the user made.
 */
export async function prepareMountpoints(runDir: string, wanted: readonly Mountpoint[]): Promise<string[]> {
  const created = await readRecord(runDir)
  const add = (p: string) => !created.includes(p) && created.push(p)
  try {
    for (const m of wanted) {
      const missing: string[] = []
      for (let dir = path.dirname(m.host); !(await exists(dir)); dir = path.dirname(dir)) missing.unshift(dir)
      for (const dir of missing) {
        await mkdir(dir)
        add(dir)
      }
      if (await exists(m.host)) continue
      if (m.kind === 'directory') await mkdir(m.host)
      else await writeFile(m.host, '', { flag: 'wx' })
      add(m.host)
    }
  } finally {
    await mkdir(runDir, { recursive: true })
    await writeFile(record(runDir), `${JSON.stringify(created, null, 2)}\n`)
  }
  return created
}

/**
 * Removes the mountpoints omh created, once no container mounts over them.
 * A file that gained content or a directory that gained entries is not a
 * placeholder any more and stays.
 */
export async function clearMountpoints(runDir: string): Promise<void> {
  const created = await readRecord(runDir)
  const kept: string[] = []
  for (const p of [...created].sort((a, b) => b.length - a.length)) {
    const info = await lstat(p).catch(() => undefined)
    if (!info) continue
    try {
      if (info.isDirectory()) await rmdir(p)
      else if (info.isFile() && info.size === 0) await rm(p)
      else kept.push(p)
    } catch {
      kept.push(p)
    }
  }
  if (kept.length) await writeFile(record(runDir), `${JSON.stringify(kept, null, 2)}\n`)
  else await rm(record(runDir), { force: true })
}

async function readRecord(runDir: string): Promise<string[]> {
  try {
    const parsed: unknown = JSON.parse(await readFile(record(runDir), 'utf8'))
    return Array.isArray(parsed) ? parsed.filter((p): p is string => typeof p === 'string') : []
  } catch {
    return []
  }
}
