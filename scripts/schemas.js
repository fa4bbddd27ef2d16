// Writes schemas/*.json from the built kernel's zod schemas; with --check,
// fails when the committed ones are not what the current build generates.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { adapterSchema, editorSchema, hookFileSchema, settingsSchema } from '../packages/kernel/dist/index.js'
import docker from '../packages/runtime-docker/dist/index.js'
import kubernetes from '../packages/runtime-kubernetes/dist/index.js'
import podman from '../packages/runtime-podman/dist/index.js'
import { schemaDocuments } from './json-schemas.js'

const dir = path.join(import.meta.dirname, '..', 'schemas')
// The runtimes this repository ships: editors complete their `[runtimes.<engine>]` keys; any other runtime's table stays open.
const documents = schemaDocuments({ adapter: adapterSchema, editor: editorSchema, settings: settingsSchema, hook: hookFileSchema }, [docker, podman, kubernetes])
if (process.argv.includes('--check')) {
  const stale = [...documents].filter(([file, text]) => {
    try {
      return readFileSync(path.join(dir, file), 'utf8') !== text
    } catch {
      return true
    }
  })
  if (stale.length) {
    console.error(`stale JSON Schemas: ${stale.map(([f]) => `schemas/${f}`).join(', ')}: run \`npm run build && npm run schemas\` and commit the result.`)
    process.exit(1)
  }
  console.log('schemas/*.json are current.')
} else {
  mkdirSync(dir, { recursive: true })
  for (const [file, text] of documents) writeFileSync(path.join(dir, file), text)
}
