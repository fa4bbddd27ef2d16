import { readFileSync } from 'node:fs'
import path from 'node:path'
import { PLUGIN_API_VERSION, defineRenderer, type RenderInput, type RenderOutput, type StagedFile } from '@omh/plugin-api'
import { parseHooksDocuments, translateHooks } from '@omh/plugin-kit'
import { approvalDocument } from './approval.js'

// Read as a file: requiring JSON costs a module resolution per plugin, and every command loads every plugin.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string }

/** Codex's hooks.json, plus the config.toml records that let Codex run them. */
export const CODEX_HOOKS = 'codex-hooks'

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

function render(input: RenderInput): RenderOutput {
  const hooks = input.capability === 'hooks' ? input.items : []
  const { document, placed, dropped } = translateHooks(hooks, input.binding, input.adapter.tools)
  if (!placed.length) return { files: [], dropped }
  const file = input.binding.path
  const files: StagedFile[] = [
    { kind: 'file', guest: file, content: json({ hooks: document }), syntax: 'json' },
    // Codex reads its hooks.json beside config.toml, in CODEX_HOME, so the trust records go there too.
    { kind: 'file', guest: path.posix.join(path.posix.dirname(file), 'config.toml'), content: approvalDocument(file, placed), syntax: 'toml' },
  ]
  return { files, dropped }
}

export default defineRenderer({
  kind: 'renderer',
  apiVersion: PLUGIN_API_VERSION,
  meta: { name, version },
  formats: [CODEX_HOOKS],
  classes: ['hooks'],
  render,
  parse: (documents, context) => parseHooksDocuments(documents, context),
})
