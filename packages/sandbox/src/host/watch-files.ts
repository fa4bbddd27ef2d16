/**
 * Watching a few files for changes, with nothing but `node:fs`, so a kept
 * launch (bin/launches.js) watches the settings as a launch does without
 * loading the sandbox.
 */
import { watch } from 'node:fs'
import path from 'node:path'

/**
 * Calls `changed` once a change to any of `files` has settled (they need not
 * exist yet). Directories are watched, not files: an editor saves by renaming
 * a new file over the old one. Returns a function that stops watching.
 */
export function watchFiles(files: readonly string[], changed: () => void): () => void {
  const byDir = new Map<string, Set<string>>()
  for (const file of files) {
    const names = byDir.get(path.dirname(file)) ?? new Set<string>()
    names.add(path.basename(file))
    byDir.set(path.dirname(file), names)
  }
  let timer: NodeJS.Timeout | undefined
  const heard = () => {
    clearTimeout(timer)
    // A save is often several events (write, rename, chmod): one call after they settle.
    timer = setTimeout(changed, 200)
  }
  const watchers = [...byDir].flatMap(([dir, names]) => {
    try {
      return [watch(dir, { persistent: false }, (_event, name) => name && names.has(String(name)) && heard())]
    } catch {
      // A directory that does not exist holds no settings to watch.
      return []
    }
  })
  return () => {
    clearTimeout(timer)
    for (const w of watchers) w.close()
  }
}
