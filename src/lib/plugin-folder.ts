import { execFile } from 'node:child_process'
import { copyFile, mkdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { OmhError, PLUGIN_INSTALL_FAILED, SETTINGS_INVALID, type Problem } from '@omh/plugin-api'
import { isObject, readJson } from '@omh/plugin-kit'

/**
 * The user's plugin folder: an npm project of its own (`package.json`,
 * `package-lock.json`, `node_modules/`) inside `$OMH_HOME`, so what a user
 * installed is kept with the settings that name it and nothing lands in a
 * global prefix. See docs/plugins.md and docs/design/decisions.md.
 */
export const pluginFolderOf = (omhHome: string): string => path.join(omhHome, 'plugins')

/** What omh itself puts in the folder's manifest, beside the user's plugins. */
const OWN = ['@omh/plugin-api', '@omh/plugin-kit'] as const

interface Manifest {
  name?: string
  private?: boolean
  description?: string
  dependencies?: Record<string, string>
  /** Where each plugin came from, as the user wrote it, when npm's spec does not say (a path or a tarball). */
  omh?: { from?: Record<string, string> }
  [key: string]: unknown
}

/** The folder's files as they were before a change, to put back when the change fails. */
export interface FolderSnapshot {
  readonly folder: string
  readonly existed: boolean
  readonly manifest?: Buffer
  readonly lock?: Buffer
}

const read = (file: string) => readFile(file).catch(() => undefined)

export async function snapshotFolder(folder: string): Promise<FolderSnapshot> {
  const existed = await stat(folder).then(
    (s) => s.isDirectory(),
    () => false,
  )
  const manifest = await read(path.join(folder, 'package.json'))
  const lock = await read(path.join(folder, 'package-lock.json'))
  return { folder, existed, ...(manifest ? { manifest } : {}), ...(lock ? { lock } : {}) }
}

/** The folder's package.json; one that is not a JSON object with a `dependencies` object is SETTINGS_INVALID, located. */
export async function readManifest(folder: string): Promise<Manifest> {
  const file = path.join(folder, 'package.json')
  const bytes = await read(file)
  if (!bytes) return {}
  const parsed = readJson(bytes.toString('utf8'), file)
  const invalid = (problem: Problem) => OmhError.of(SETTINGS_INVALID, { args: [file, 1], problems: [problem] })
  if (!parsed.ok) throw invalid(parsed.problem)
  const data = parsed.doc.data
  if (!isObject(data)) throw invalid({ file, line: 1, column: 1, message: 'expected a JSON object' })
  if (data['dependencies'] !== undefined && !isObject(data['dependencies'])) {
    throw invalid({ file, ...parsed.doc.locate(['dependencies']), path: 'dependencies', message: 'expected an object of package names and specs' })
  }
  return data as Manifest
}

/** The plugins the folder holds, by package name, with the spec npm saved. */
export async function installedPlugins(folder: string): Promise<Record<string, string>> {
  const deps = { ...(await readManifest(folder)).dependencies }
  for (const own of OWN) delete deps[own]
  return deps
}

/** Where a plugin in the folder came from: the path or tarball the user gave, or the spec npm saved. */
export async function originOf(folder: string, name: string): Promise<string | undefined> {
  const manifest = await readManifest(folder)
  return manifest.omh?.from?.[name] ?? manifest.dependencies?.[name]
}

/** Runs npm in the folder; a failure is PLUGIN_INSTALL_FAILED with npm's own first error line. */
export async function npm(folder: string, args: readonly string[], spec: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(
      'npm',
      [...args, '--ignore-scripts', '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error'],
      { cwd: folder, env: { ...process.env, npm_config_global: 'false' }, maxBuffer: 64 * 1024 * 1024 },
    )
    return stdout
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: string }
    const what =
      e.code === 'ENOENT'
        ? 'npm was not found on PATH'
        : (e.stderr ?? '')
            .split('\n')
            .map((l) => l.replace(/^npm (error|ERR!) ?/, '').trim())
            .find((l) => l && !/^(code |errno |A complete log|Log files)/.test(l)) ?? e.message.split('\n')[0]!
    throw OmhError.of(PLUGIN_INSTALL_FAILED, { args: [spec, folder, what], cause: error })
  }
}

/**
 * Makes sure the folder is an npm project omh can install into, its
 * manifest naming omh's own @omh/plugin-api and @omh/plugin-kit (linked,
 * not fetched: they are not on the registry, and a plugin must compile
 * against the contracts of the omh that loads it). `ownRoot` is the folder
 * omh's packages are found from; the links follow omh when it moves.
 */
export async function prepareFolder(folder: string, ownRoot: string): Promise<void> {
  await mkdir(folder, { recursive: true })
  const manifest = await readManifest(folder)
  const deps: Record<string, string> = { ...manifest.dependencies }
  for (const own of OWN) deps[own] = `file:${await ownPackage(own, ownRoot)}`
  const next: Manifest = {
    name: manifest.name ?? 'omh-plugins',
    private: true,
    description: manifest.description ?? 'Plugins installed by `omh plugins add`; `omh plugins rm` removes them.',
    ...manifest,
    dependencies: deps,
  }
  await writeFile(path.join(folder, 'package.json'), `${JSON.stringify(next, null, 2)}\n`)
  // node_modules is rebuilt from the lockfile (`npm ci` here); a dotfiles repository keeps the rest.
  if (!(await read(path.join(folder, '.gitignore')))) await writeFile(path.join(folder, '.gitignore'), 'node_modules/\n')
}

async function ownPackage(name: string, from: string): Promise<string> {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const at = path.join(dir, 'node_modules', name)
    if (await read(path.join(at, 'package.json'))) return realpath(at)
    if (path.dirname(dir) === dir) throw new Error(`omh's own ${name} was not found above ${from}`)
  }
}

/** Records where a plugin came from when npm's saved spec would not say it. */
export async function recordOrigin(folder: string, name: string, origin: string | undefined): Promise<void> {
  const manifest = await readManifest(folder)
  const from = { ...manifest.omh?.from }
  if (origin === undefined) delete from[name]
  else from[name] = origin
  const { omh: _omh, ...rest } = manifest
  const next: Manifest = { ...rest, ...(Object.keys(from).length ? { omh: { ...manifest.omh, from } } : {}) }
  await writeFile(path.join(folder, 'package.json'), `${JSON.stringify(next, null, 2)}\n`)
}

/**
 * What npm is given for a spec. A folder or a tarball on disk is packed or
 * copied into the plugin folder's `packs/` first: installed by link, a
 * folder's plugin would load its dependencies from wherever that folder is,
 * and a later install must not depend on the original still being there.
 */
export async function localPack(
  folder: string,
  spec: string,
  cwd: string,
): Promise<{ spec: string; origin: string; name?: string } | undefined> {
  if (!/^(\.{1,2}([/\\]|$)|[/\\~]|file:)/.test(spec) && !/\.(tgz|tar\.gz)$/.test(spec)) return undefined
  const source = path.resolve(cwd, spec.replace(/^file:/, ''))
  const info = await stat(source).catch(() => undefined)
  if (!info) return undefined
  const packs = path.join(folder, 'packs')
  await mkdir(packs, { recursive: true })
  if (info.isDirectory()) {
    const out = await npm(folder, ['pack', source, '--pack-destination', packs, '--json'], spec)
    const [packed] = JSON.parse(out) as { filename: string; name: string }[]
    return { spec: `file:packs/${path.basename(packed!.filename)}`, origin: source, name: packed!.name }
  }
  const target = path.join(packs, path.basename(source))
  await copyFile(source, target)
  return { spec: `file:packs/${path.basename(source)}`, origin: source }
}

/**
 * Puts the folder back as the snapshot found it: its manifest and lockfile,
 * `node_modules` pruned to them, and the packs it did not hold removed. A
 * folder that did not exist is removed. Resolves npm's failure to prune, for
 * the caller to report beside the error that made it restore.
 */
export async function restoreFolder(before: FolderSnapshot, packs: readonly string[]): Promise<OmhError | undefined> {
  if (!before.existed) {
    await rm(before.folder, { recursive: true, force: true })
    return undefined
  }
  const put = async (name: string, bytes: Buffer | undefined) =>
    bytes ? writeFile(path.join(before.folder, name), bytes) : rm(path.join(before.folder, name), { force: true })
  await put('package.json', before.manifest)
  await put('package-lock.json', before.lock)
  for (const pack of packs) await rm(path.join(before.folder, pack), { force: true })
  try {
    await npm(before.folder, ['install'], 'the plugins already there')
    return undefined
  } catch (error) {
    return error as OmhError
  }
}
