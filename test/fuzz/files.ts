import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { FuzzFile } from './input.js'

/** Writes an input's files under `root`. A name the system refuses (too long, a slash) is simply not there. */
export function layFiles(root: string, files: readonly FuzzFile[]): void {
  for (const f of files) {
    // Names that are not UTF-8 go to the system as bytes; latin1 carries bytes through a string unchanged.
    const at = typeof f.path === 'string' ? path.join(root, f.path) : Buffer.concat([Buffer.from(`${root}/`), f.path])
    const dir = Buffer.from(path.dirname(typeof at === 'string' ? at : at.toString('latin1')), typeof at === 'string' ? 'utf8' : 'latin1')
    try {
      mkdirSync(dir, { recursive: true })
      // A later file at the same path replaces an earlier one; writing into a FIFO would wait for a reader.
      rmSync(at, { recursive: true, force: true })
      const content = f.content
      if (typeof content === 'string' || content instanceof Uint8Array) writeFileSync(at, content)
      else if (content.kind === 'dir') mkdirSync(at, { recursive: true })
      else if (content.kind === 'link') symlinkSync(content.target === 'loop' ? at : content.target, at)
      else execFileSync('mkfifo', [typeof at === 'string' ? at : at.toString('latin1')])
    } catch {}
  }
}
