import { execFileSync, spawnSync } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:tls'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { issueServer, makeAuthority, sessionAuthority } from './authority.js'

const hasOpenssl = spawnSync('openssl', ['version']).status === 0

describe('the session authority', () => {
  const authority = makeAuthority()
  const server = issueServer(authority, ['api.bound.test', '*.example.test'])

  it('signs a server certificate for the bound names that verifies against it alone', () => {
    const ca = new X509Certificate(authority.cert)
    const leaf = new X509Certificate(server.cert)
    expect(ca.ca).toBe(true)
    expect(leaf.ca).toBe(false)
    expect(leaf.checkIssued(ca)).toBe(true)
    expect(leaf.verify(ca.publicKey)).toBe(true)
    expect(leaf.subjectAltName).toBe('DNS:api.bound.test, DNS:*.example.test')
    expect(leaf.checkHost('api.bound.test')).toBe('api.bound.test')
    expect(leaf.checkHost('a.example.test')).toBe('*.example.test')
    expect(leaf.checkHost('other.test')).toBeUndefined()
    expect(leaf.verify(new X509Certificate(makeAuthority().cert).publicKey)).toBe(false)
  })

  it.runIf(hasOpenssl)('passes OpenSSL’s strict verification, as Python 3.13 asks by default', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'omh-authority-'))
    writeFileSync(path.join(dir, 'ca.pem'), authority.cert)
    writeFileSync(path.join(dir, 'leaf.pem'), server.cert)
    const out = execFileSync('openssl', ['verify', '-x509_strict', '-purpose', 'sslserver', '-CAfile', 'ca.pem', 'leaf.pem'], { cwd: dir, encoding: 'utf8' })
    expect(out).toContain('leaf.pem: OK')
  })

  it('serves TLS a client that trusts the authority accepts, for a bound name only', async () => {
    const tls = createServer({ cert: server.cert, key: server.key }, (socket) => socket.end('hello'))
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve))
    const port = (tls.address() as { port: number }).port
    const talk = (servername: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port, servername, ca: authority.cert }, () => socket.on('data', (d) => resolve(String(d))))
        socket.on('error', reject)
      })
    try {
      expect(await talk('api.bound.test')).toBe('hello')
      await expect(talk('elsewhere.test')).rejects.toThrow(/altnames/)
    } finally {
      tls.close()
    }
  })

  it('is kept in the run directory, its key readable by the user alone, and reused', async () => {
    const run = mkdtempSync(path.join(os.tmpdir(), 'omh-authority-run-'))
    const first = await sessionAuthority(run)
    expect((await sessionAuthority(run)).cert).toBe(first.cert)
    expect(statSync(path.join(run, 'secrets-authority.key')).mode & 0o777).toBe(0o600)
    writeFileSync(path.join(run, 'secrets-authority.pem'), 'not a certificate')
    expect((await sessionAuthority(run)).cert).not.toBe(first.cert)
    expect(readFileSync(path.join(run, 'secrets-authority.pem'), 'utf8')).toContain('BEGIN CERTIFICATE')
  })
})
