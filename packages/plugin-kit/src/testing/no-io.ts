import childProcess from 'node:child_process'
import crypto from 'node:crypto'
import dgram from 'node:dgram'
import dns from 'node:dns'
import fs from 'node:fs'
import http from 'node:http'
import http2 from 'node:http2'
import https from 'node:https'
import { syncBuiltinESMExports } from 'node:module'
import net from 'node:net'
import tls from 'node:tls'
import worker from 'node:worker_threads'

/** One forbidden call a renderer made: what it reached for, and where from. */
export interface Reach {
  readonly what: string
  readonly stack: string
}

type Target = [owner: Record<string, unknown>, label: string, keys?: readonly string[]]

const functionsOf = (owner: Record<string, unknown>) =>
  Object.keys(owner).filter((k) => typeof owner[k] === 'function' && !/^[A-Z]/.test(k))

// Everything through which a module reaches the disk, the network, other
// processes, the clock or randomness. Node's builtins are patched on their
// CommonJS objects and then synced into their ESM namespaces, so a renderer
// that wrote `import { readFileSync } from 'node:fs'` is caught as well.
const targets = (): Target[] => [
  [fs as unknown as Record<string, unknown>, 'fs'],
  [fs.promises as unknown as Record<string, unknown>, 'fs.promises'],
  [childProcess as unknown as Record<string, unknown>, 'child_process'],
  [net as unknown as Record<string, unknown>, 'net', ['connect', 'createConnection', 'createServer']],
  [net.Socket.prototype as unknown as Record<string, unknown>, 'net.Socket', ['connect']],
  [tls as unknown as Record<string, unknown>, 'tls', ['connect', 'createServer']],
  [dgram as unknown as Record<string, unknown>, 'dgram', ['createSocket']],
  [dns as unknown as Record<string, unknown>, 'dns'],
  [dns.promises as unknown as Record<string, unknown>, 'dns.promises'],
  [http as unknown as Record<string, unknown>, 'http', ['request', 'get', 'createServer']],
  [https as unknown as Record<string, unknown>, 'https', ['request', 'get', 'createServer']],
  [http2 as unknown as Record<string, unknown>, 'http2', ['connect', 'createServer', 'createSecureServer']],
  [worker as unknown as Record<string, unknown>, 'worker_threads', ['Worker']],
  [globalThis as unknown as Record<string, unknown>, 'globalThis', ['fetch', 'WebSocket', 'EventSource']],
  [Date as unknown as Record<string, unknown>, 'Date', ['now']],
  [Math as unknown as Record<string, unknown>, 'Math', ['random']],
  [crypto as unknown as Record<string, unknown>, 'crypto', ['randomBytes', 'randomUUID', 'randomInt', 'randomFill', 'randomFillSync', 'getRandomValues']],
  [globalThis.crypto as unknown as Record<string, unknown>, 'crypto (web)', ['randomUUID', 'getRandomValues']],
  [process as unknown as Record<string, unknown>, 'process', ['hrtime', 'cpuUsage', 'memoryUsage', 'uptime', 'dlopen', 'binding', 'chdir', 'kill']],
  [globalThis.performance as unknown as Record<string, unknown>, 'performance', ['now']],
]

let active = false

/**
 * Runs `fn` with every route to the outside world replaced by one that
 * records the call and throws. A renderer that catches the throw is still
 * reported: the record is what counts.
 */
export async function withoutIo<T>(
  fn: () => T | Promise<T>,
  options: { allowFiles?: boolean } = {},
): Promise<{ value?: T; error?: unknown; reaches: Reach[] }> {
  if (active) throw new Error('withoutIo does not nest')
  active = true
  const reaches: Reach[] = []
  const restore: (() => void)[] = []
  for (const [owner, label, keys] of targets()) {
    if (!owner || (options.allowFiles && label.startsWith('fs'))) continue
    for (const key of keys ?? functionsOf(owner)) {
      const original = owner[key]
      if (typeof original !== 'function') continue
      const descriptor = Object.getOwnPropertyDescriptor(owner, key)
      if (descriptor && !descriptor.writable && !descriptor.set && !descriptor.configurable) continue
      const what = `${label}.${key}`
      const trap = function (this: unknown) {
        const error = new Error(`a renderer may not call ${what}: rendering is pure (no I/O, no clock, no randomness)`)
        reaches.push({ what, stack: error.stack ?? '' })
        throw error
      }
      try {
        Object.defineProperty(owner, key, { value: trap, writable: true, configurable: true, enumerable: descriptor?.enumerable ?? true })
        restore.push(() => {
          if (descriptor) Object.defineProperty(owner, key, descriptor)
          else delete owner[key]
        })
      } catch {
        // A frozen member cannot be replaced, and so cannot have been reached through here either.
      }
    }
  }
  // `new Date()` reads the clock too; a date built from a value does not.
  const RealDate = Date
  const record = (what: string) => reaches.push({ what, stack: new Error(what).stack ?? '' })
  globalThis.Date = class extends RealDate {
    constructor(...args: ConstructorParameters<DateConstructor> | []) {
      if (!args.length) record('new Date()')
      super(...(args as ConstructorParameters<DateConstructor>))
    }
  } as DateConstructor
  restore.push(() => {
    globalThis.Date = RealDate
  })
  syncBuiltinESMExports()
  const done = () => {
    for (const undo of restore.reverse()) undo()
    syncBuiltinESMExports()
    active = false
  }
  // A synchronous render is judged without yielding: nothing else of the
  // process runs while the traps are set, so every record is the renderer's.
  let result: T | Promise<T>
  try {
    result = fn()
  } catch (error) {
    done()
    return { error, reaches }
  }
  if (!(result instanceof Promise)) {
    done()
    return { value: result, reaches }
  }
  try {
    return { value: await result, reaches }
  } catch (error) {
    return { error, reaches }
  } finally {
    done()
  }
}
