import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { failure } from '@omh/test-utils'
import { testdir } from '@omh/test-utils'
import { LOCK_STALE_MS, lockFile, lockFileOf } from './file-lock.js'

// Above any pid_max Linux allows, so no process has it.
const DEAD_PID = 2 ** 22 + 1

describe('lockFile', () => {
  it('names its holder in the lock beside the file, and removes it on release', async () => {
    const file = path.join(testdir(), 'mcp.json')
    const lock = await lockFile(file)
    expect(lock.file).toBe(lockFileOf(file))
    expect(path.basename(lock.file)).toBe('.mcp.json.omh-lock')
    expect(JSON.parse(readFileSync(lock.file, 'utf8'))).toMatchObject({ pid: process.pid, host: os.hostname() })
    expect(await lock.held()).toBe(true)
    await lock.release()
    expect(existsSync(lock.file)).toBe(false)
  })

  it('takes over a lock whose process is gone on this host, and an old one from another host', async () => {
    const file = path.join(testdir(), 'f')
    writeFileSync(lockFileOf(file), JSON.stringify({ pid: DEAD_PID, host: os.hostname(), time: Date.now() }))
    await (await lockFile(file, { wait: 0 })).release()
    writeFileSync(lockFileOf(file), JSON.stringify({ pid: process.pid, host: 'elsewhere', time: Date.now() - LOCK_STALE_MS - 1 }))
    await (await lockFile(file, { wait: 0 })).release()
    // Empty: its writer died before it said who it was.
    writeFileSync(lockFileOf(file), '')
    const old = (Date.now() - LOCK_STALE_MS - 1000) / 1000
    utimesSync(lockFileOf(file), old, old)
    await (await lockFile(file, { wait: 0 })).release()
  })

  it('waits for a live holder, then refuses, naming it and the lock to remove', async () => {
    const file = path.join(testdir(), 'mcp.json')
    const holder = { pid: process.ppid, host: os.hostname(), time: Date.now() }
    writeFileSync(lockFileOf(file), JSON.stringify(holder))
    const started = Date.now()
    const error = await failure(() => lockFile(file, { wait: 150 }))
    expect(Date.now() - started).toBeGreaterThanOrEqual(150)
    expect(error.code).toBe('FILE_LOCKED')
    expect(error.exit).toBe(1)
    expect(error.message).toBe(`${file} is being written by another omh (process ${holder.pid} on ${holder.host}, since ${new Date(holder.time).toISOString()}), so nothing was written.`)
    expect(error.hint).toBe(`Run the command again once it is done. If no omh is running, remove ${lockFileOf(file)}.`)
  })

  it('gets the lock once its holder releases it', async () => {
    const file = path.join(testdir(), 'f')
    const first = await lockFile(file)
    const second = lockFile(file)
    setTimeout(() => void first.release(), 50)
    const lock = await second
    expect(await lock.held()).toBe(true)
    expect(await first.held()).toBe(false)
    await first.release()
    expect(existsSync(lock.file)).toBe(true)
    await lock.release()
  })
})
