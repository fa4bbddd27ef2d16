import { readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { parse as parseToml } from 'smol-toml'
import { describe, expect, it } from 'vitest'
import { adapterSchema, checkAdapterFile, editorSchema, hookFileSchema, parseHookFile, settingsSchema } from '@omh/kernel'
import { parseToml as parseOmhToml } from '@omh/plugin-kit/toml'
import docker from '@omh/runtime-docker'
import kubernetes, { kubernetesSettings } from '@omh/runtime-kubernetes'
import podman from '@omh/runtime-podman'
import { schemaDocuments } from '../../scripts/json-schemas.js'
import { ROOT } from '../helpers/run.js'

const SCHEMAS = path.join(ROOT, 'schemas')
const generated = schemaDocuments({ adapter: adapterSchema, editor: editorSchema, settings: settingsSchema, hook: hookFileSchema }, [docker, podman, kubernetes])
const ajv = new Ajv2020({ allErrors: true, strict: false })
const validators = Object.fromEntries(
  [...generated.keys()].map((file) => [file.replace(/\.json$/, ''), ajv.compile(JSON.parse(readFileSync(path.join(SCHEMAS, file), 'utf8')))]),
)

type Kind = 'adapter' | 'editor' | 'settings' | 'hook'
/** Which schema a file answers to, by where it sits. */
function kindOf(rel: string): Kind | undefined {
  const parts = rel.split('/')
  const dir = parts.at(-2)
  const name = parts.at(-1)!
  if (name.endsWith('.toml') && dir === 'adapters') return 'adapter'
  if (name.endsWith('.toml') && dir === 'editors') return 'editor'
  if (name === 'settings.toml') return 'settings'
  if (name.endsWith('.json') && dir === 'hooks') return 'hook'
  return undefined
}

const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.name === 'node_modules' || e.name.startsWith('.') && e.name !== '.omh' ? [] : e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)],
  )

/** Every bundled and example file a schema describes. */
const files = [
  ...['adapters', 'editors', 'defaults'].flatMap((d) => walk(path.join(ROOT, d))),
  ...walk(path.join(ROOT, 'examples')),
]
  .map((file) => ({ file, rel: path.relative(ROOT, file), kind: kindOf(path.relative(ROOT, file)) }))
  .filter((f): f is { file: string; rel: string; kind: Kind } => f.kind !== undefined)

/** Where a file says its schema is, resolved against the file as editors do. */
function named(file: string, text: string): string | undefined {
  const ref = file.endsWith('.toml') ? /^#:schema\s+(\S+)/.exec(text)?.[1] : (JSON.parse(text) as { $schema?: string }).$schema
  return ref === undefined ? undefined : path.resolve(path.dirname(file), ref)
}

describe('the JSON Schemas', () => {
  it('are what the zod schemas generate now (npm run build && npm run schemas)', () => {
    for (const [file, text] of generated) expect(readFileSync(path.join(SCHEMAS, file), 'utf8'), `schemas/${file} is stale`).toBe(text)
    expect(readdirSync(SCHEMAS).sort()).toEqual([...generated.keys()].sort())
  })

  it('cover the bundled adapters, editors and defaults, and every example', () => {
    const kinds = new Set(files.map((f) => f.kind))
    expect([...kinds].sort()).toEqual(['adapter', 'editor', 'hook', 'settings'])
    expect(files.map((f) => f.rel)).toEqual(expect.arrayContaining(['adapters/claude.toml', 'defaults/settings.toml', 'examples/profile/settings.toml']))
  })

  it.each(files.map((f) => [f.rel, f] as const))('validate %s, which names its schema for editors', (_rel, { file, kind }) => {
    const text = readFileSync(file, 'utf8')
    expect(named(file, text), `${file} names schemas/${kind}.json (taplo's #:schema on the first line, or $schema)`).toBe(path.join(SCHEMAS, `${kind}.json`))
    if (file.endsWith('.toml')) expect(text.split('\n')[0]).toMatch(/^#:schema /)
    const data = file.endsWith('.toml') ? parseToml(text) : JSON.parse(text)
    const validate = validators[kind]!
    expect(validate(data) ? [] : validate.errors).toEqual([])
  })

  it.each(files.map((f) => [f.rel, f] as const))("omh's own strict reading accepts %s with its schema named", async (_rel, { file, kind }) => {
    const text = readFileSync(file, 'utf8')
    if (kind === 'adapter') expect((await checkAdapterFile(file)).problems).toEqual([])
    if (kind === 'editor') expect(editorSchema.safeParse(parseOmhToml(text, file).data).error?.issues).toBeUndefined()
    if (kind === 'settings') expect(settingsSchema.safeParse(parseOmhToml(text, file).data).error?.issues).toBeUndefined()
    if (kind === 'hook') expect(parseHookFile(path.basename(file, '.json'), file, text)).toMatchObject({ ok: true })
  })

  it('refuse what omh refuses: an unknown key, a bad moment, a misspelt capability', () => {
    expect(validators['hook']!({ on: 'turn-end', run: 'x', colour: 'red' })).toBe(false)
    expect(validators['hook']!({ on: 'at-lunch', run: 'x' })).toBe(false)
    expect(validators['settings']!({ use: { rule: ['x'] } })).toBe(false)
    expect(validators['editor']!({ name: 'x', bin: 'x', args: [], extra: 1 })).toBe(false)
    expect(validators['adapter']!({ name: 'h', bin: 'h', install: 'true', capabilities: { rules: { path: '/w', render: 'concat', colour: 1 } } })).toBe(false)
    expect(validators['settings']!({ $schema: '../schemas/settings.json', plugins: ['x'] })).toBe(true)
  })

  it("describe each shipped runtime's table as its own schema does, and leave another runtime's open", () => {
    const settings = (runtimes: Record<string, unknown>) => validators['settings']!({ runtimes })
    for (const table of [{ namespace: 'omh', claim: '20Gi', storage_class: 'fast-ssd', context: 'work' }, { namespace: 'Omh' }, { claim: '10 GB' }, { nmespace: 'omh' }]) {
      expect(settings({ kubernetes: table }), JSON.stringify(table)).toBe(kubernetesSettings.safeParse(table).success)
    }
    expect(settings({ docker: { host: 'tcp://x' } })).toBe(false)
    expect(settings({ podman: {} })).toBe(true)
    expect(settings({ firecracker: { kernel: 'vmlinux' } })).toBe(true)
  })
})
