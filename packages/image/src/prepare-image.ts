/**
 * Runs once while a session image is built, as root, on whatever image the
 * project's environment is, with the Node of omh's toolset: the image may
 * have no useradd, no apt and no Node of its own, so nothing here calls a
 * program of the image's. It checks that the image can serve, makes the
 * agent (renaming the image's own user where the project names one, so the
 * files it owns stay owned), and makes the directories omh mounts into.
 *
 * Self-contained: it imports Node's modules alone, because it is copied into
 * images as one file.
 */
import { chmodSync, chownSync, closeSync, copyFileSync, existsSync, lchownSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

export interface PrepareInput {
  readonly uid: number
  readonly gid: number
  /** The agent's name and home. */
  readonly user: string
  readonly home: string
  /** An image user that becomes the agent (a devcontainer's `remoteUser`, else its `containerUser`). */
  readonly become?: string
  /** Directories the agent owns, made when missing. */
  readonly owned: readonly string[]
  /** Directories only the agent may enter. */
  readonly private: readonly string[]
  /** Where the toolset lies; its harness files are checked against the image's C library. */
  readonly toolset: string
}

/** What the prefix of the line omh reads from a refused build says. */
export const UNSUPPORTED_MARK = 'omh-image-unsupported:'

/** The dynamic loader glibc programs name; an image without it (musl, Alpine) cannot run them. */
const GLIBC_LOADER = '/lib64/ld-linux-x86-64.so.2'

export class Unsupported extends Error {}

interface PasswdEntry {
  name: string
  password: string
  uid: number
  gid: number
  gecos: string
  home: string
  shell: string
}

const parsePasswd = (text: string): PasswdEntry[] =>
  text
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .map((line) => {
      const [name = '', password = 'x', uid = '', gid = '', gecos = '', home = '', shell = ''] = line.split(':')
      return { name, password, uid: Number(uid), gid: Number(gid), gecos, home, shell }
    })

const passwdLine = (e: PasswdEntry) => [e.name, e.password, e.uid, e.gid, e.gecos, e.home, e.shell].join(':')

/** The program interpreter an ELF file names, or undefined when it names none (static, or not ELF). */
export function elfInterpreter(file: string): string | undefined {
  let fd: number | undefined
  try {
    fd = openSync(file, 'r')
    const head = Buffer.alloc(64)
    if (readSync(fd, head, 0, 64, 0) < 64 || head.readUInt32BE(0) !== 0x7f454c46 || head[4] !== 2) return undefined
    const phoff = Number(head.readBigUInt64LE(32))
    const phentsize = head.readUInt16LE(54)
    const phnum = head.readUInt16LE(56)
    const table = Buffer.alloc(phentsize * phnum)
    readSync(fd, table, 0, table.length, phoff)
    for (let n = 0; n < phnum; n++) {
      const at = n * phentsize
      if (table.readUInt32LE(at) !== 3) continue
      const offset = Number(table.readBigUInt64LE(at + 8))
      const size = Number(table.readBigUInt64LE(at + 32))
      const name = Buffer.alloc(Math.min(size, 4096))
      readSync(fd, name, 0, name.length, offset)
      return name.toString('utf8').replace(/\0.*$/s, '')
    }
    return undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

function* walk(dir: string, skip: (p: string) => boolean): Generator<string> {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return
  }
  for (const name of names) {
    const full = path.join(dir, name)
    if (skip(full)) continue
    const st = lstatSync(full, { throwIfNoEntry: false })
    if (!st) continue
    yield full
    if (st.isDirectory()) yield* walk(full, skip)
  }
}

/** Copies a tree keeping modes, owners and links as they are. */
function copyTree(from: string, to: string): void {
  const st = lstatSync(from)
  if (st.isSymbolicLink()) symlinkSync(readlinkSync(from), to)
  else if (st.isDirectory()) {
    mkdirSync(to)
    for (const name of readdirSync(from)) copyTree(path.join(from, name), path.join(to, name))
  } else if (st.isFile()) copyFileSync(from, to)
  else return
  lchownSync(to, st.uid, st.gid)
  if (!st.isSymbolicLink()) chmodSync(to, st.mode & 0o7777)
}

/** Moves a directory; an overlay filesystem refuses to rename one from a lower layer, so it is copied then. */
function moveTree(from: string, to: string): void {
  try {
    renameSync(from, to)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error
    copyTree(from, to)
    rmSync(from, { recursive: true, force: true })
  }
}

/** Refuses an image the session could not run in, saying why and what to use instead. */
export function checkImage(root: string, toolset: string): void {
  const at = (p: string) => path.join(root, p)
  if (!existsSync(at('/bin/sh'))) {
    throw new Unsupported('it has no /bin/sh, and harnesses run every command through one. Use an image with a shell (any Debian, Ubuntu, Fedora or Alpine image has one).')
  }
  if (existsSync(at(GLIBC_LOADER))) return
  const harness = at(path.join(toolset, 'harness'))
  for (const file of walk(harness, () => false)) {
    const st = statSync(file, { throwIfNoEntry: false })
    if (!st?.isFile() || !(st.mode & 0o111)) continue
    if (elfInterpreter(file) === GLIBC_LOADER) {
      throw new Unsupported(
        `the harness's program ${path.relative(root, file).replace(/^(?!\/)/, '/')} is built for glibc and needs ${GLIBC_LOADER}, which this image lacks (it is a musl image, such as Alpine). omh's own tools run there, the harness cannot. Use a glibc image (Debian, Ubuntu, Fedora, or the Debian variant of your devcontainer's image).`,
      )
    }
  }
}

/** Makes the agent: the image's user named by `become`, or the one at the agent's UID, renamed; else a new one. */
export function makeAgent(root: string, input: PrepareInput): string[] {
  const said: string[] = []
  const at = (p: string) => path.join(root, p)
  mkdirSync(at('/etc'), { recursive: true })
  const passwdFile = at('/etc/passwd')
  const groupFile = at('/etc/group')
  const passwd = parsePasswd(existsSync(passwdFile) ? readFileSync(passwdFile, 'utf8') : 'root:x:0:0:root:/root:/bin/sh\n')
  const named = input.become ? passwd.find((e) => e.name === input.become) : undefined
  if (input.become && !named) said.push(`the image has no user ${input.become}; the agent is a new user`)
  const was = (named && named.uid !== 0 ? named : undefined) ?? passwd.find((e) => e.uid === input.uid && e.uid !== 0) ?? passwd.find((e) => e.name === input.user)
  if (named && named.uid === 0) said.push(`${named.name} is root, and omh never runs the agent as root: the agent is a user of its own`)

  const shellOf = (shell: string | undefined) => (shell && existsSync(at(shell)) ? shell : existsSync(at('/bin/bash')) ? '/bin/bash' : '/bin/sh')
  const agent: PasswdEntry = { name: input.user, password: 'x', uid: input.uid, gid: input.gid, gecos: 'omh agent', home: input.home, shell: shellOf(was?.shell) }
  const others = passwd.filter((e) => e !== was).map((e) => (e.name === input.user ? { ...e, name: `${input.user}-was-${e.uid}` } : e))
  const first = others.findIndex((e) => e.uid === input.uid)
  const place = first >= 0 ? first : was ? Math.min(passwd.indexOf(was), others.length) : others.length
  others.splice(place, 0, agent)
  writeFileSync(passwdFile, `${others.map(passwdLine).join('\n')}\n`)
  if (was && was.name !== input.user) said.push(`the image's user ${was.name} (UID ${was.uid}) is the agent, renamed ${input.user}`)

  // Groups: the agent's own at its GID, and the old name replaced in every member list.
  const groups = (existsSync(groupFile) ? readFileSync(groupFile, 'utf8') : 'root:x:0:\n').split('\n').filter((l) => l.trim())
  const rows = groups.map((l) => l.split(':'))
  const own = rows.find((r) => Number(r[2]) === input.gid)
  for (const r of rows) {
    if (r !== own && r[0] === input.user) r[0] = `${input.user}-was-${r[2]}`
    if (was && r[3]) r[3] = r[3].split(',').map((m) => (m === was.name ? input.user : m)).join(',')
  }
  if (own) own[0] = input.user
  else rows.push([input.user, 'x', String(input.gid), ''])
  writeFileSync(groupFile, `${rows.map((r) => r.join(':')).join('\n')}\n`)

  for (const name of ['/etc/shadow', '/etc/gshadow']) {
    const file = at(name)
    if (!existsSync(file)) continue
    const isGroup = name.endsWith('gshadow')
    const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim())
    const old = isGroup ? own?.[0] : was?.name
    let found = false
    const out = lines.map((l) => {
      const parts = l.split(':')
      if (parts[0] === input.user) parts[0] = `${input.user}-was`
      if ((old && parts[0] === old) || (isGroup && own && parts[0] === input.user)) {
        parts[0] = input.user
        found = true
      }
      return parts.join(':')
    })
    if (!found) out.push(isGroup ? `${input.user}:!::` : `${input.user}:!:19000:0:99999:7:::`)
    const mode = statSync(file).mode & 0o777
    writeFileSync(file, `${out.join('\n')}\n`)
    chmodSync(file, mode)
  }

  // The home: the old one moves (a link stays where it was, for paths the image wrote down).
  const home = at(input.home)
  if (was && was.home && was.home !== input.home && existsSync(at(was.home)) && !existsSync(home)) {
    mkdirSync(path.dirname(home), { recursive: true })
    moveTree(at(was.home), home)
    symlinkSync(input.home, at(was.home))
    said.push(`its home ${was.home} is now ${input.home}`)
  }
  mkdirSync(home, { recursive: true })
  chownSync(home, input.uid, input.gid)

  // Files the old user owned stay the agent's when its IDs change.
  if (was && (was.uid !== input.uid || was.gid !== input.gid)) {
    const skip = (p: string) => ['/proc', '/sys', '/dev', input.toolset].some((s) => p === at(s))
    for (const file of walk(at('/'), skip)) {
      const st = lstatSync(file, { throwIfNoEntry: false })
      if (!st || (st.uid !== was.uid && st.gid !== was.gid)) continue
      try {
        chownSync(file, st.uid === was.uid ? input.uid : st.uid, st.gid === was.gid ? input.gid : st.gid)
      } catch {
        // A file a mount holds (a build's /etc/hosts) is not the image's.
      }
    }
  }
  return said
}

/** Makes each directory the agent needs, owned by it, parents first. */
export function makeDirectories(root: string, input: PrepareInput): void {
  for (const dir of [...input.owned, ...input.private]) {
    const parts = dir.split('/').filter(Boolean)
    for (let n = 1; n <= parts.length; n++) {
      const sub = `/${parts.slice(0, n).join('/')}`
      const full = path.join(root, sub)
      if (existsSync(full)) continue
      mkdirSync(full)
      // Above the home, a directory stays root's: only the agent's own are handed over.
      if (sub === dir || sub.startsWith(`${input.home}/`) || sub === input.home) chownSync(full, input.uid, input.gid)
    }
    const full = path.join(root, dir)
    chownSync(full, input.uid, input.gid)
    chmodSync(full, input.private.includes(dir) ? 0o700 : 0o755)
  }
}

/**
 * The toolset's Node headers where node-gyp looks before it downloads them
 * (`~/.cache/node-gyp/<version>`, with the install version it checks): an
 * addon builds offline against the Node the toolset and omh's base share.
 */
export function placeNodeHeaders(root: string, input: PrepareInput): void {
  const at = (p: string) => path.join(root, p)
  const version = existsSync(at(`${input.toolset}/share/node-version`)) ? readFileSync(at(`${input.toolset}/share/node-version`), 'utf8').trim() : ''
  const headers = at(`${input.toolset}/include/node`)
  if (!/^\d+\.\d+\.\d+$/.test(version) || !existsSync(headers)) return
  const dir = `${input.home}/.cache/node-gyp/${version}`
  makeDirectories(root, { ...input, owned: [`${input.home}/.cache`, `${input.home}/.cache/node-gyp`, dir, `${dir}/include`], private: [] })
  if (!existsSync(at(`${dir}/include/node`))) copyTree(headers, at(`${dir}/include/node`))
  writeFileSync(at(`${dir}/installVersion`), '11\n')
  for (const file of walk(at(dir), () => false)) lchownSync(file, input.uid, input.gid)
}

export function prepare(root: string, input: PrepareInput): string[] {
  checkImage(root, input.toolset)
  const said = makeAgent(root, input)
  makeDirectories(root, input)
  placeNodeHeaders(root, input)
  return said
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    const input = JSON.parse(process.argv[2] ?? '{}') as PrepareInput
    for (const line of prepare('/', input)) process.stdout.write(`omh: ${line}\n`)
  } catch (error) {
    if (error instanceof Unsupported) {
      process.stderr.write(`${UNSUPPORTED_MARK} ${error.message}\n`)
      process.exit(3)
    }
    throw error
  }
}
