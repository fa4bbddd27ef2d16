import path from 'node:path'
import { HOOK_INVALID, OmhError } from '@omh/plugin-api'
import { readTextFile } from '../user-files.js'
import type { CatalogueSource } from './catalogue.js'
import { findHooks, hookBounds, parseHookFile } from './hooks.js'

/** Hook files: the catalogue's `hooks/*.json`, shadowed by name by the project's `.omh/hooks/*.json`. */
export const hooksSource: CatalogueSource<'hooks'> = {
  capability: 'hooks',
  where: (loc) => [path.join(loc.omhHome, 'hooks'), ...(loc.projectDir ? [path.join(loc.projectDir, '.omh', 'hooks')] : [])].join(' or '),
  async list(loc) {
    const found = await findHooks(loc)
    return {
      notices: found.notices,
      entries: found.hooks.map((hook) => ({
        name: hook.name,
        source: hook.file,
        async load() {
          const read = readTextFile(hook.file, hookBounds(loc, hook))
          if (read && !read.ok) return { ok: false as const, problems: [read.problem] }
          const parsed = parseHookFile(hook.name, hook.file, read?.text ?? '')
          return parsed.ok ? { ok: true as const, item: parsed.hook } : { ok: false as const, problems: parsed.problems }
        },
      })),
      problems: [],
    }
  },
  invalid: (problems) => OmhError.of(HOOK_INVALID, { args: [[...new Set(problems.map((p) => p.file!))], problems.length], problems }),
}
