// Hostile inputs: near-valid files mutated at random places, and files that
// are not what they claim to be. Every generator yields a FuzzInput.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml'
import type { Bytes, FuzzFile, FuzzInput, Oddity } from './input.js'

const ROOT = path.resolve(import.meta.dirname, '../..')

export const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', 'isPrototypeOf']

/** Characters a terminal or a parser acts on. */
const CONTROL = ['\u0000', '\u0007', '\b', '\t', '\n', '\r', '\r\n', '\u000b', '\u001b', '\u001b[2J', '\u001b]0;title\u0007', '\u009b', '\u007f', '\u202e', '\u2028', '\ufeff', '\ufffd', '\ud800']

/** Words omh's formats give meaning to. */
const TRICKY = [
  '', ' ', '-->', '<!--', '/', '//', '.', '..', '../x', '/etc/passwd', '$HOME', '$HOME/', '$HOME/..', '$HOME/../../x', '/work', '/work/', '/work/a,b',
  '${HOME}', '$REPO', '{{text}}', '{{event}}', '{{name}}', '$OMH_TOOL_FILE', '%s', '\\', '"', "'", '`', '*', '["*"]', 'null', 'true', '1e309',
  '---', '#', '=', '[x]', 'a.b', 'AGENTS.md', 'CLAUDE.md', 'stdio', 'http', 'sse', 'https://x', 'before-tool', 'turn-end', 'edit',
]

const long = fc.constantFrom('a'.repeat(5000), 'é'.repeat(3000), `${'{{text}}'.repeat(300)}`, '\n'.repeat(2000), 'x/'.repeat(500))

/** Any text, weighted towards what breaks parsers, terminals and path handling. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY, ...CONTROL, ...PROTO_KEYS) },
  { weight: 3, arbitrary: fc.array(fc.oneof(fc.constantFrom(...CONTROL, ...TRICKY, ...PROTO_KEYS), fc.string({ maxLength: 4 })), { maxLength: 5 }).map((a) => a.join('')) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: long },
)

/** A key for a table or object: one the schema knows, a prototype's, or anything. */
const hostileKey = (known: readonly string[]) => fc.oneof(fc.constantFrom(...known, ...PROTO_KEYS), hostileText)

type Value = unknown

/** A value of any JSON or TOML type, nested a little. */
const hostileValue: fc.Arbitrary<Value> = fc.letrec<{ value: Value }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileText,
    fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 2 ** 53, 1e308, -0, 9007199254740993n)),
    fc.boolean(),
    fc.constant(null),
    fc.date({ noInvalidDate: true }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(hostileKey([]), tie('value'), { maxKeys: 4 }),
  ),
})).value

/** A chain of arrays or objects around a value; deeper nesting is written as text (`deepText`). */
const deep = fc.tuple(fc.integer({ min: 20, max: 200 }), fc.boolean()).map(([depth, objects]) => {
  let value: Value = 'bottom'
  for (let n = 0; n < depth; n++) value = objects ? { k: value } : [value]
  return value
})

/** Every path into a value, parents first. */
function pathsOf(value: Value, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at)
  if (Array.isArray(value)) value.forEach((v, n) => pathsOf(v, [...at, n], out))
  else if (value && typeof value === 'object' && !(value instanceof Date)) for (const [k, v] of Object.entries(value)) pathsOf(v, [...at, k], out)
  return out
}

type Mutation = { op: 'set' | 'delete' | 'add' | 'wrap'; pick: number; key: string; value: Value }

const mutation = (known: readonly string[]): fc.Arbitrary<Mutation> =>
  fc.record({
    op: fc.constantFrom('set', 'set', 'delete', 'add', 'add', 'wrap'),
    pick: fc.nat(),
    key: hostileKey(known),
    value: fc.oneof({ weight: 8, arbitrary: hostileValue }, { weight: 1, arbitrary: deep }),
  })

/** A copy of `base` with each mutation applied at the path it picks. */
function mutate(base: Value, mutations: readonly Mutation[]): Value {
  const root = { root: structuredClone(base) } as Record<string, Value>
  for (const m of mutations) {
    const paths = pathsOf(root['root']).map((p) => ['root', ...p])
    const at = paths[m.pick % paths.length]!
    const parent = at.slice(0, -1).reduce<any>((node, k) => node[k], root)
    const last = at[at.length - 1]!
    const node = parent[last]
    const define = (target: Record<string, Value>, key: string, value: Value) =>
      Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
    if (m.op === 'set') parent[last] = m.value
    else if (m.op === 'delete' && at.length > 1) {
      if (Array.isArray(parent)) parent.splice(Number(last), 1)
      else delete parent[last]
    }
    else if (m.op === 'add' && node && typeof node === 'object' && !(node instanceof Date)) {
      if (Array.isArray(node)) node.push(m.value)
      else define(node, m.key, m.value)
    } else if (m.op === 'wrap') parent[last] = [node]
  }
  return root['root']
}

/** `base` mutated: a few changes, most inputs near valid so that they reach deep code. */
const mutated = (base: Value, known: readonly string[]) =>
  fc.array(mutation(known), { maxLength: 4 }).map((ms) => mutate(base, ms))

type TextEdit = { at: number; insert: string | Uint8Array; cut: number }

const BYTES = [[0xff], [0xc3], [0x80], [0x00], [0xef, 0xbb, 0xbf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc0, 0xaf]].map((b) => Uint8Array.from(b))

/** Edits to a document's text: syntax, bytes that are not UTF-8, line ends. */
const textEdits = (syntax: readonly string[]) =>
  fc.array(
    fc.record({
      at: fc.nat(),
      insert: fc.oneof(fc.constantFrom(...syntax, ...CONTROL, '\r\n', '\n\n'), fc.constantFrom(...BYTES), hostileText),
      cut: fc.nat({ max: 3 }),
    }),
    { maxLength: 3 },
  )

function applyEdits(text: string, edits: readonly TextEdit[]): Bytes {
  let bytes = Buffer.from(text)
  for (const e of edits) {
    const at = bytes.length ? e.at % (bytes.length + 1) : 0
    const insert = typeof e.insert === 'string' ? Buffer.from(e.insert) : Buffer.from(e.insert)
    bytes = Buffer.concat([bytes.subarray(0, at), insert, bytes.subarray(Math.min(bytes.length, at + e.cut))])
  }
  return edits.length ? new Uint8Array(bytes) : text
}

/** Nesting deeper than any parser's stack, as text: `open` n times, a value, `close` n times. */
const deepText = (open: string, close: string) =>
  fc.integer({ min: 1_000, max: 8_000 }).map((n) => `${open.repeat(n)}1${close.repeat(n)}`)

/** A document as written: mostly mutated structure, sometimes edited text, duplicated keys, or nesting no stack holds. */
function document(
  base: Value,
  known: readonly string[],
  write: (value: Value) => string,
  syntax: readonly string[],
  nesting: fc.Arbitrary<string>,
): fc.Arbitrary<Bytes> {
  const written = mutated(base, known).map((v) => {
    try {
      return write(v)
    } catch {
      return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x)) ?? ''
    }
  })
  return fc.oneof(
    { weight: 5, arbitrary: written },
    { weight: 3, arbitrary: fc.tuple(written, textEdits(syntax)).map(([t, e]) => applyEdits(t, e)) },
    { weight: 1, arbitrary: fc.tuple(written, fc.nat()).map(([t, n]) => duplicateLine(t, n)) },
    { weight: 1, arbitrary: hostileText },
    { weight: 1, arbitrary: nesting },
  )
}

/** The text with one of its lines written twice: a duplicated key or table. */
function duplicateLine(text: string, pick: number): string {
  const lines = text.split('\n')
  const n = pick % lines.length
  return [...lines.slice(0, n + 1), lines[n]!, ...lines.slice(n + 1)].join('\n')
}

const toml = (value: Value) => stringifyToml(value as Record<string, unknown>)
const json = (value: Value) => JSON.stringify(value, (_k, x) => (typeof x === 'bigint' ? Number(x) : x), 2) ?? ''
const TOML_DEEP = fc.oneof(deepText('x = [', ']'), deepText('x = {a = ', '}'), deepText('[', ']'))
const JSON_DEEP = fc.oneof(deepText('[', ']'), deepText('{"mcpServers": ', '}'), deepText('{"a":', '}'))
const TOML_SYNTAX = ['[', ']', '[[a]]', '=', '"', "'''", '"""', '{', '}', ',', '.', 'a.b = 1', '[capabilities]', 'x = inf', '0x', '1979-05-27T07:32:00Z', '\\u']
const JSON_SYNTAX = ['{', '}', '[', ']', ',', ':', '"', '\\', '\\u12', 'NaN', '//', '/*', '1e999', 'tru', '"\\ud800"']

/** Something other than a file, where a file belongs. */
const oddity: fc.Arbitrary<Oddity> = fc.oneof(
  fc.constant({ kind: 'dir' as const }),
  fc.constant({ kind: 'fifo' as const }),
  fc.constantFrom('nowhere', '/nonexistent/x', '.', 'loop').map((target) => ({ kind: 'link' as const, target })),
)

/** Content for a file: bytes mostly, something else sometimes. */
const contentOf = (bytes: fc.Arbitrary<Bytes>) =>
  fc.oneof({ weight: 30, arbitrary: bytes }, { weight: 1, arbitrary: oddity as fc.Arbitrary<Bytes | Oddity> })

/** A file name: the usual, a hostile word, or bytes that are not UTF-8. */
const fileName = (usual: readonly string[], suffix: string): fc.Arbitrary<string | Uint8Array> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...usual).map((n) => n + suffix) },
    { weight: 3, arbitrary: hostileText.filter((n) => n.length > 0 && !n.includes('/') && !n.includes('\0')).map((n) => n + suffix) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...usual), fc.constantFrom(...BYTES)).map(([n, b]) => Buffer.concat([Buffer.from(n), b, Buffer.from(suffix)])) },
  )

const under = (dir: string, name: string | Uint8Array): string | Uint8Array =>
  typeof name === 'string' ? `${dir}/${name}` : Buffer.concat([Buffer.from(`${dir}/`), name])

// ─── Adapters ────────────────────────────────────────────────────────────────

const BUNDLED = ['claude', 'codex', 'opencode'].map((n) => parseToml(readFileSync(path.join(ROOT, 'adapters', `${n}.toml`), 'utf8')))
const ADAPTER_KEYS = ['name', 'bin', 'args', 'install', 'creds', 'token', 'login', 'probes', 'tools', 'capabilities', 'path', 'also', 'render', 'import', 'options', 'expect', 'events', 'fields', 'inject', 'refuse', 'template', 'at', 'probe', 'line', 'json', 'match', 'absent', 'run', 'send', 'env', 'timeout', 'exit', 'until']

export const adapterInput: fc.Arbitrary<FuzzInput> = fc
  .tuple(fc.constantFrom(...BUNDLED), fc.constantFrom('mine', 'claude', 'Bad Name', 'x', '.hidden'))
  .chain(([base, name]) =>
    fc.tuple(
      fileName([name], '.toml'),
      contentOf(document({ ...base, name }, ADAPTER_KEYS, toml, TOML_SYNTAX, TOML_DEEP)),
    ),
  )
  .map(([name, content]) => ({ family: 'adapter', files: [{ path: under('home/adapters', name), content }] }))

// ─── Settings ────────────────────────────────────────────────────────────────

const SETTINGS_BASE = {
  runtime: 'auto',
  account: 'work',
  plugins: ['./nowhere.mjs'],
  use: { rules: ['style'], skills: ['*'], mcp: ['docs'], commands: [], subagents: ['reviewer'], hooks: ['fmt'] },
  session: { network: 'omh' },
  image: { base: 'localhost/omh-base:debian', network: 'host' },
  runtimes: { docker: { network: 'omh-docker' }, podman: { network: 'container:x' } },
  network: { egress: 'allowlist', allow: ['web.test', '*.example.com:8443'], registries: [] },
}
const SETTINGS_KEYS = [
  'runtime', 'account', 'plugins', 'use', 'session', 'image', 'network', 'base', 'rules', 'skills', 'mcp', 'commands', 'subagents', 'hooks', '*',
  'runtimes', 'docker', 'podman', 'kubernetes', 'egress', 'allow', 'registries',
]
const PLUGIN_SPECIFIERS = ['./nowhere.mjs', '', '.', '..', '/', './', 'omh-renderer-missing', '@omh/renderer-missing', '../../etc/passwd', 'node:fs', './settings.toml']

/** Settings whose `plugins` name nothing that loads: the suite never imports a module picked at random. */
const safePlugins = (value: Value): Value => {
  if (!value || typeof value !== 'object' || Array.isArray(value) || !('plugins' in value)) return value
  const plugins = (value as { plugins: unknown }).plugins
  const picked = Array.isArray(plugins) ? plugins.map((p, n) => (typeof p === 'string' ? PLUGIN_SPECIFIERS[n % PLUGIN_SPECIFIERS.length] : p)) : plugins
  return { ...value, plugins: picked }
}

const tomlSettings = fc.tuple(
  fc.constantFrom('home/settings.toml', 'repo/.omh/settings.toml', 'repo/.omh/settings.local.toml', 'repo/omh.config.toml'),
  contentOf(document(SETTINGS_BASE, SETTINGS_KEYS, (v) => toml(safePlugins(v)), TOML_SYNTAX, TOML_DEEP)),
)
// The conventional JSON places the project layer is searched in.
const jsonSettings = fc.oneof(
  fc.tuple(fc.constant('repo/omh.config.json'), contentOf(document(SETTINGS_BASE, SETTINGS_KEYS, (v) => json(safePlugins(v)), JSON_SYNTAX, JSON_DEEP))),
  fc.tuple(fc.constant('repo/package.json'), contentOf(document({ name: 'x', omh: SETTINGS_BASE }, SETTINGS_KEYS, (v) => json(v && typeof v === 'object' && 'omh' in v ? { ...v, omh: safePlugins(v.omh) } : v), JSON_SYNTAX, JSON_DEEP))),
)

export const settingsInput: fc.Arbitrary<FuzzInput> = fc
  .oneof({ weight: 3, arbitrary: tomlSettings }, { weight: 1, arbitrary: jsonSettings })
  .map(([file, content]) => ({ family: 'settings', files: [{ path: file, content }] }))

// ─── mcp.json ────────────────────────────────────────────────────────────────

const MCP_BASE = {
  $schema: 'https://x',
  mcpServers: {
    docs: { command: 'npx', args: ['-y', 'srv'], env: { TOKEN: 'x' }, cwd: '/work' },
    web: { type: 'http', url: 'https://w/mcp', headers: { Authorization: 'Bearer t' } },
    old: { type: 'sse', url: 'http://o/sse' },
  },
}
const MCP_KEYS = ['mcpServers', 'type', 'command', 'args', 'env', 'cwd', 'url', 'headers', 'stdio', 'http', 'sse']

/** A use list for the classes a family varies: absent, everything, nothing, or some names. */
const useOf = (names: readonly string[]) =>
  fc.option(fc.oneof(fc.constant(['*']), fc.constant([]), fc.subarray([...names, 'missing', ...PROTO_KEYS])), { nil: undefined })

export const mcpInput: fc.Arbitrary<FuzzInput> = fc
  .tuple(contentOf(document(MCP_BASE, MCP_KEYS, json, JSON_SYNTAX, JSON_DEEP)), useOf(['docs', 'web', 'old', 'constructor']))
  .map(([content, mcp]) => ({ family: 'mcp', files: [{ path: 'home/mcp.json', content }], ...(mcp ? { use: { mcp } } : {}) }))

// ─── Hook files ──────────────────────────────────────────────────────────────

const HOOK_BASES = [
  { on: 'before-tool', tools: ['shell'], when: 'echo "$OMH_TOOL_COMMAND" | grep -q rm', refuse: 'No rm, because {{text}}' },
  { on: 'after-tool', tools: ['edit'], run: 'prettier --write "$OMH_TOOL_FILE"' },
  { on: 'turn-end', inject: 'Run the tests before you stop.' },
  { on: 'session-start', inject: 'Read AGENTS.md first.' },
]
const HOOK_KEYS = ['on', 'tools', 'when', 'run', 'inject', 'refuse', 'session-start', 'turn-end', 'before-tool', 'after-tool', 'edit', 'read', 'shell', 'search']

export const hookInput: fc.Arbitrary<FuzzInput> = fc
  .tuple(
    fc.array(
      fc.tuple(
        fc.constantFrom('home/hooks', 'repo/.omh/hooks'),
        fileName(['fmt', 'guard', 'a.b', 'x_y'], '.json'),
        fc.constantFrom(...HOOK_BASES).chain((base) => contentOf(document(base, HOOK_KEYS, json, JSON_SYNTAX, JSON_DEEP))),
      ),
      { minLength: 1, maxLength: 3 },
    ),
    useOf(['fmt', 'guard']),
  )
  .map(([hooks, use]) => ({
    family: 'hooks',
    files: hooks.map(([dir, name, content]) => ({ path: under(dir, name), content })),
    ...(use ? { use: { hooks: use } } : {}),
  }))

// ─── Catalogue markdown ──────────────────────────────────────────────────────

/** YAML a frontmatter block may hold, valid or not. */
const YAML_ODDITIES = [
  'a: &x [1, 2]\nb: *x',
  'base: &b {name: x}\n<<: *b',
  'name: !!binary aGk=',
  'name: !custom x',
  'description: !!js/function "function(){}"',
  'name: x\nname: y',
  '? [complex, key]\n: value',
  'description: |\n  block\n  text',
  'description: >-\n  folded',
  'tools: [read, {x: y}]',
  'model: {claude: sonnet, opencode: 3}',
  '\tname: tabbed',
  'name: "unterminated',
  'description: 2024-01-01',
  'name: ~',
  '__proto__: {polluted: true}',
  'constructor: x',
  'a: b: c',
  '- a list',
  '%YAML 1.2\n---',
  'x: ' + '[' .repeat(200),
  'description: ' + 'a '.repeat(3000),
  'k' + ': v\n'.repeat(500),
]

/** A value as YAML flow text (JSON is YAML); bigints as their digits. */
const flow = (v: Value) => JSON.stringify(v, (_k, y) => (typeof y === 'bigint' ? String(y) : y)) ?? 'null'

/** A frontmatter block: a mutated mapping, YAML oddities, or a broken fence. */
const frontmatter = (base: Record<string, Value>) =>
  fc
    .tuple(
      fc.oneof(
        mutated(base, ['name', 'description', 'tools', 'model', 'argument-hint']).map((v) =>
          v && typeof v === 'object' && !Array.isArray(v)
            ? Object.entries(v as Record<string, Value>).map(([k, x]) => `${k}: ${flow(x)}`).join('\n')
            : flow(v),
        ),
        fc.constantFrom(...YAML_ODDITIES),
        fc.array(fc.tuple(hostileKey(['name', 'description', 'tools', 'model']), hostileText), { maxLength: 3 }).map((kv) => kv.map(([k, v]) => `${k}: ${v}`).join('\n')),
      ),
      fc.constantFrom('---\n', '---\r\n', '--- \n', '\ufeff---\n', '---'),
      fc.constantFrom('\n---\n', '\r\n---\r\n', '\n--- \n', '\n', '\n...\n', '\n---'),
      hostileText,
    )
    .map(([fm, open, close, body]) => `${open}${fm}${close}${body}`)

const markdown = (base: Record<string, Value>) =>
  fc.oneof(
    { weight: 6, arbitrary: frontmatter(base) },
    { weight: 2, arbitrary: fc.tuple(frontmatter(base), textEdits(['---', '\n---\n', ':', '"'])).map(([t, e]) => applyEdits(t, e)) },
    { weight: 2, arbitrary: hostileText },
  )

const entry = (dir: string, names: readonly string[], base: Record<string, Value>): fc.Arbitrary<FuzzFile> =>
  fc.tuple(fileName(names, '.md'), contentOf(markdown(base))).map(([name, content]) => ({ path: under(`home/${dir}`, name), content }))

const skillEntry: fc.Arbitrary<FuzzFile[]> = fc
  .tuple(fileName(['deploy', 'lint-it', 'Bad_Skill'], ''), contentOf(markdown({ name: 'deploy', description: 'Deploys.' })))
  .map(([name, content]) => [{ path: under(under('home/skills', name) as string, 'SKILL.md'), content }])

export const catalogueInput: fc.Arbitrary<FuzzInput> = fc
  .tuple(
    fc.array(
      fc.oneof(
        entry('rules', ['style', 'a', 'AGENTS'], {}).map((f) => [f]),
        entry('commands', ['review', 'ship'], { description: 'Review', 'argument-hint': '[pr]' }).map((f) => [f]),
        entry('subagents', ['reviewer', 'writer'], { name: 'reviewer', description: 'Reviews.', tools: 'read, search', model: 'sonnet' }).map((f) => [f]),
        skillEntry,
        fc.tuple(fc.constantFrom('repo/AGENTS.md', 'repo/CLAUDE.md'), contentOf(markdown({}))).map(([p, content]) => [{ path: p, content }]),
      ),
      { minLength: 1, maxLength: 4 },
    ),
    useOf(['style', 'review', 'reviewer', 'deploy']),
  )
  .map(([groups, use]) => ({ family: 'catalogue', files: groups.flat(), ...(use ? { use: { rules: use, commands: use } } : {}) }))

// ─── Commands ────────────────────────────────────────────────────────────────

// Arguments reach omh as the shell gives them: any text but NUL.
const word = hostileText.filter((w) => !w.includes('\0'))
const name = fc.oneof(fc.constantFrom('docs', 'web', ...PROTO_KEYS, 'a/b', '-x', '--json', 'x'.repeat(300)), word)

/** A command line; `json` goes before any `--`, after which everything is the server's. */
type Line = (json: string[]) => string[]
const commandLine: fc.Arbitrary<Line> = fc.oneof<fc.Arbitrary<Line>[]>(
  fc
    .tuple(name, fc.array(word, { minLength: 1, maxLength: 3 }), fc.array(fc.tuple(word, word).map(([k, v]) => `${k}=${v}`), { maxLength: 2 }))
    .map(([n, cmd, env]) => (json) => ['config', 'mcp', 'add', n, '--yes', ...json, ...env.flatMap((e) => ['--env', e]), '--', ...cmd]),
  fc
    .tuple(name, word, fc.array(word, { maxLength: 2 }))
    .map(([n, url, headers]) => (json) => ['config', 'mcp', 'add', n, '--yes', ...json, '--url', url, ...headers.flatMap((h) => ['--header', h])]),
  fc.array(name, { minLength: 1, maxLength: 3 }).map((names) => (json) => ['config', 'mcp', 'rm', ...names, '--yes', ...json]),
  fc.constantFrom(['config', 'mcp', 'ls'], ['adapters', 'ls'], ['plugins']).map((words) => (json) => [...words, ...json]),
  name.map((n) => (json) => ['adapters', 'show', n, ...json]),
  // A harness's own file, read back by its renderer: what a repository may hold.
  fc
    .tuple(fc.constantFrom('claude', 'opencode', 'codex'), fc.constantFrom('../home/mcp.json', '../home/settings.toml', '../home/adapters/mine.toml'))
    .map(([harness, from]) => (json) => ['config', 'mcp', 'import', harness, '--from', from, '--yes', ...json]),
  name.map((n) => (json) => ['render', n, ...json]),
  // Setting a repository up reads what the repository holds and plans into the catalogue.
  fc.constantFrom(['init', '--dry-run'], ['init', '--dry-run', '--import']).map((words) => (json) => [...words, ...json]),
  // Relative to the repository, where commands run.
  fc.constantFrom('../home/mcp.json', '../home/adapters/mine.toml', '../home/adapters', '.', 'nowhere.toml', '../home/settings.toml').map((p) => (json) => ['adapters', 'validate', p, ...json]),
)

export const commandInput: fc.Arbitrary<FuzzInput> = fc
  .tuple(commandLine, fc.boolean(), fc.array(fc.oneof(mcpInput, adapterInput, settingsInput), { maxLength: 1 }))
  .map(([line, json, with_]) => ({ family: 'command', argv: line(json ? ['--json'] : []), files: with_.flatMap((i) => i.files) }))
