import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { FILE_UNREADABLE, OmhError } from '../errors.js'
import { emptyProfile, type ProfileItems, type RuleSection } from '../model.js'
import type { Decided } from '../settings/load.js'
import { resolveHooks } from './hooks.js'

export interface ProfileSources {
  readonly omhHome: string
  /** Where the project's own rules are read from: the session's worktree, or the checkout. */
  readonly projectDir?: string
  readonly use: Readonly<Partial<Record<string, Decided<readonly string[]>>>>
}

/** The user's profile, selected by `[use]`, in composition order. */
export async function resolveProfile(sources: ProfileSources): Promise<ProfileItems> {
  const hooks = await resolveHooks({ omhHome: sources.omhHome, projectDir: sources.projectDir, allow: sources.use['hooks']?.value })
  return { ...emptyProfile(), rules: await resolveRules(sources), hooks }
}

async function resolveRules(sources: ProfileSources): Promise<RuleSection[]> {
  const dir = path.join(sources.omhHome, 'rules')
  const names = (await listOrEmpty(dir)).filter((n) => n.endsWith('.md')).sort()
  const available = new Map(names.map((n) => [n.slice(0, -3), path.join(dir, n)]))
  const allow = sources.use['rules']?.value
  const selected = !allow || allow[0] === '*' ? [...available.keys()] : allow.filter((n) => available.has(n))
  const sections: RuleSection[] = []
  for (const name of selected) {
    const source = available.get(name)!
    const text = await readText(source)
    if (text.trim()) sections.push({ name, origin: name, source, text })
  }
  if (sources.projectDir) {
    const source = path.join(sources.projectDir, 'AGENTS.md')
    const text = await readText(source).catch((error: unknown) => {
      if ((error as OmhError).cause && ((error as OmhError).cause as NodeJS.ErrnoException).code === 'ENOENT') return ''
      throw error
    })
    if (text.trim()) sections.push({ name: 'AGENTS.md', origin: 'AGENTS.md', source, text })
  }
  return sections
}

async function listOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw OmhError.of(FILE_UNREADABLE, { args: [dir, (error as Error).message], cause: error })
  }
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    throw OmhError.of(FILE_UNREADABLE, { args: [file, (error as Error).message], cause: error })
  }
}
