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

const toJSON = (schema) => z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'throw' })

/**
 * The schema documents by file name (`adapter.json`, …), as the text written
 * to `schemas/`. Each of `runtimes` describes its own `[runtimes.<engine>]`
 * table in the settings document: its options' schema, or none taken.
 */
export function schemaDocuments(schemas, runtimes = []) {
  const documents = new Map()
  for (const [name, [title, description]] of Object.entries(ABOUT)) {
    const generated = toJSON(schemas[name])
    if (name === 'settings' && runtimes.length) {
      const { $schema: _, ...none } = toJSON(z.strictObject({}))
      const tables = Object.fromEntries([...runtimes].sort((a, b) => (a.engine < b.engine ? -1 : 1)).map((r) => [r.engine, r.options ? (({ $schema: _s, ...own }) => own)(toJSON(r.options)) : none]))
      generated.properties.runtimes = { ...generated.properties.runtimes, properties: tables }
    }
    const { $schema, ...rest } = generated
    const document = { $schema, $comment: 'Generated from omh\'s own schemas by scripts/schemas.js (npm run schemas); do not edit.', title, description, ...rest }
    documents.set(`${name}.json`, `${JSON.stringify(document, null, 2)}\n`)
  }
  return documents
}
