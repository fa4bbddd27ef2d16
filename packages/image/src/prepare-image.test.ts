import { chmodSync, chownSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { Unsupported, checkImage, elfInterpreter, prepare, type PrepareInput } from './prepare-image.js'

const asRoot = process.getuid?.() === 0

/** An image's root: `/etc` files, a shell, and whatever else is named. */
function image(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'omh-image-'))
  for (const [file, text] of Object.entries({ '/bin/sh': '#!', ...files })) {
    mkdirSync(path.join(root, path.dirname(file)), { recursive: true })
    writeFileSync(path.join(root, file), text)
  }
  return root
}

const input: PrepareInput = { uid: 1000, gid: 1000, user: 'agent', home: '/home/agent', owned: ['/home/agent', '/home/agent/.probe', '/omh', '/work'], private: ['/omh/sock'], toolset: '/opt/omh' }
const passwd = (root: string) => readFileSync(path.join(root, 'etc/passwd'), 'utf8')
const group = (root: string) => readFileSync(path.join(root, 'etc/group'), 'utf8')

describe.runIf(asRoot)('preparing a session image', () => {
  it("renames the image's user at the agent's UID (node, in Node's images), moving its home and leaving a link where it was", () => {
    const root = image({
      '/etc/passwd': 'root:x:0:0:root:/root:/bin/bash\nnode:x:1000:1000::/home/node:/bin/bash\n',
      '/etc/group': 'root:x:0:\nnode:x:1000:\nsudo:x:27:node\n',
      '/etc/shadow': 'root:*:19000:0:99999:7:::\nnode:!:19000:0:99999:7:::\n',
      '/home/node/.bashrc': 'export A=1\n',
      '/bin/bash': '#!',
    })
    const said = prepare(root, input)
    expect(passwd(root)).toBe('root:x:0:0:root:/root:/bin/bash\nagent:x:1000:1000:omh agent:/home/agent:/bin/bash\n')
    expect(group(root)).toBe('root:x:0:\nagent:x:1000:\nsudo:x:27:agent\n')
    expect(readFileSync(path.join(root, 'etc/shadow'), 'utf8')).toContain('\nagent:!:19000')
    expect(readFileSync(path.join(root, 'home/agent/.bashrc'), 'utf8')).toBe('export A=1\n')
    expect(readlinkSync(path.join(root, 'home/node'))).toBe('/home/agent')
    expect(said).toEqual(["the image's user node (UID 1000) is the agent, renamed agent", 'its home /home/node is now /home/agent'])
    for (const dir of ['home/agent', 'home/agent/.probe', 'omh', 'work', 'omh/sock']) expect(statSync(path.join(root, dir)).uid).toBe(1000)
    expect(statSync(path.join(root, 'omh/sock')).mode & 0o777).toBe(0o700)
    expect(statSync(path.join(root, 'home')).uid).toBe(0)
  })

  it("makes the devcontainer's remoteUser the agent at the agent's IDs, and hands it every file it owned", () => {
    const root = image({
      '/etc/passwd': 'root:x:0:0:root:/root:/bin/sh\nvscode:x:1001:1001::/home/vscode:/bin/zsh\n',
      '/etc/group': 'root:x:0:\nvscode:x:1001:\n',
      '/home/vscode/.cargo/bin/cargo': 'x',
      '/usr/local/tool/data': 'y',
    })
    chownSync(path.join(root, 'home/vscode/.cargo/bin/cargo'), 1001, 1001)
    chownSync(path.join(root, 'usr/local/tool/data'), 1001, 1001)
    prepare(root, { ...input, become: 'vscode' })
    // The shell it had is not in this image: the agent gets one that is.
    expect(passwd(root)).toBe('root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:omh agent:/home/agent:/bin/sh\n')
    expect(group(root)).toBe('root:x:0:\nvscode:x:1001:\nagent:x:1000:\n')
    expect(lstatSync(path.join(root, 'home/agent/.cargo/bin/cargo')).uid).toBe(1000)
    expect(lstatSync(path.join(root, 'usr/local/tool/data'))).toMatchObject({ uid: 1000, gid: 1000 })
  })

  it('never makes root the agent, and makes a user where the image has none', () => {
    const root = image({ '/etc/passwd': 'root:x:0:0:root:/root:/bin/sh\n' })
    expect(prepare(root, { ...input, become: 'root' })).toEqual(['root is root, and omh never runs the agent as root: the agent is a user of its own'])
    expect(passwd(root)).toBe('root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:omh agent:/home/agent:/bin/sh\n')
    const bare = image({})
    prepare(bare, input)
    expect(passwd(bare)).toBe('root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:omh agent:/home/agent:/bin/sh\n')
    expect(group(bare)).toBe('root:x:0:\nagent:x:1000:\n')
  })

  it('moves another user named agent aside rather than having two', () => {
    const root = image({ '/etc/passwd': 'root:x:0:0:root:/root:/bin/sh\nagent:x:2000:2000::/home/agent:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n', '/etc/group': 'root:x:0:\nagent:x:2000:\nnode:x:1000:\n' })
    prepare(root, input)
    expect(passwd(root)).toBe('root:x:0:0:root:/root:/bin/sh\nagent-was-2000:x:2000:2000::/home/agent:/bin/sh\nagent:x:1000:1000:omh agent:/home/agent:/bin/sh\n')
    expect(group(root)).toBe('root:x:0:\nagent-was-2000:x:2000:\nagent:x:1000:\n')
  })
})

describe('whether an image can serve', () => {
  it('reads the program interpreter of an ELF file, and none of anything else', () => {
    expect(elfInterpreter(process.execPath)).toMatch(/^\/lib64\/ld-linux-x86-64\.so\.2$|^\/lib\/ld-linux-aarch64\.so\.1$/)
    const root = image({ '/script': '#!/bin/sh\n' })
    expect(elfInterpreter(path.join(root, 'script'))).toBeUndefined()
    expect(elfInterpreter(path.join(root, 'missing'))).toBeUndefined()
  })

  it('refuses an image without /bin/sh', () => {
    const root = image({})
    rmSync(path.join(root, 'bin/sh'))
    expect(() => checkImage(root, '/opt/omh')).toThrow(Unsupported)
    expect(() => checkImage(root, '/opt/omh')).toThrow(/no \/bin\/sh/)
  })

  it.runIf(process.arch === 'x64')("refuses a musl image only when the harness carries a glibc program, naming it", () => {
    const musl = image({ '/lib/ld-musl-x86_64.so.1': '' })
    mkdirSync(path.join(musl, 'opt/omh/harness/bin'), { recursive: true })
    writeFileSync(path.join(musl, 'opt/omh/harness/bin/js-harness'), '#!/usr/bin/env node\n', { mode: 0o755 })
    expect(() => checkImage(musl, '/opt/omh')).not.toThrow()
    copyFileSync(process.execPath, path.join(musl, 'opt/omh/harness/bin/native'))
    chmodSync(path.join(musl, 'opt/omh/harness/bin/native'), 0o755)
    expect(() => checkImage(musl, '/opt/omh')).toThrow(/\/opt\/omh\/harness\/bin\/native is built for glibc and needs \/lib64\/ld-linux-x86-64\.so\.2, which this image lacks/)
    const glibc = image({ '/lib64/ld-linux-x86-64.so.2': '' })
    mkdirSync(path.join(glibc, 'opt/omh/harness/bin'), { recursive: true })
    symlinkSync(process.execPath, path.join(glibc, 'opt/omh/harness/bin/native'))
    expect(() => checkImage(glibc, '/opt/omh')).not.toThrow()
    expect(existsSync(path.join(glibc, 'etc/passwd'))).toBe(false)
  })
})
