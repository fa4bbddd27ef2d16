// JSON Schemas for the files users write, generated from the zod schemas omh
// itself checks them with: editors (taplo for TOML, any JSON Schema client for
// hook files) then complete and check what omh would accept.
import * as z from 'zod/mini'

const ABOUT = {
  adapter: ['omh harness adapter', 'A harness adapter (adapters/<name>.toml): what the harness can express, where it reads each capability, and which renderer writes it. See docs/adapters.md.'],
  editor: ['omh editor', 'An editor that attaches to a session over SSH (editors/<name>.toml). See docs/editors.md.'],
  settings: ['omh settings', 'One omh settings layer (settings.toml): personal, repository or local. See docs/configuration.md.'],
  hook: ['omh hook', 'A hook file (hooks/<name>.json): a moment, optionally tools and a predicate, and exactly one action. See docs/hooks.md.'],
}

/** The schema documents by file name (`adapter.json`, …), as the text written to `schemas/`. */
export function schemaDocuments(schemas) {
  const documents = new Map()
  for (const [name, [title, description]] of Object.entries(ABOUT)) {
    const generated = z.toJSONSchema(schemas[name], { target: 'draft-2020-12', io: 'input', unrepresentable: 'throw' })
    const { $schema, ...rest } = generated
    const document = { $schema, $comment: 'Generated from omh\'s own schemas by scripts/schemas.js (npm run schemas); do not edit.', title, description, ...rest }
    documents.set(`${name}.json`, `${JSON.stringify(document, null, 2)}\n`)
  }
  return documents
}
