import { listSessions, repository } from '@omh/sandbox'
import type { Dynamic } from './complete.js'
import { createKernel } from './kernel.js'

/**
 * The values of one kind for shell completion: the harnesses and editors omh
 * finds, this repository's sessions. Completion never fails: whatever goes
 * wrong (bad settings, no repository) leaves the list empty.
 */
export async function completionValues(root: string, kind: Dynamic): Promise<string[]> {
  try {
    const kernel = await createKernel(root)
    if (kind === 'harness') return (await kernel.adapterSources()).map((a) => a.name)
    if (kind === 'editor') return (await kernel.editorSources()).map((e) => e.name)
    return kernel.repoRoot ? await listSessions(kernel.omhState, repository(kernel.repoRoot)) : []
  } catch {
    return []
  }
}
