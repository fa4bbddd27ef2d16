/**
 * The session's own certificate authority, for secrets bound to hosts: the credential proxy reads a
 * bound host's requests to put the real secret in place of its placeholder, so it must answer TLS
 * for that host with a certificate the session trusts. Only the session trusts this authority; its
 * key stays in the session's run directory on the host (which no container mounts), and the proxy
 * gets one certificate, for the bound hosts alone.
 *
 * Node reads certificates but does not write them, and omh takes no dependency for the few hundred
 * bytes of DER an authority and one server certificate are: what follows encodes exactly the
 * fields that strict verifiers (OpenSSL's X509_STRICT, which Python 3.13 turns on; Go; rustls)
 * require: key identifiers on both, a critical basic-constraints and key-usage, the names as
 * subject alternative names.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto'
import { lstat, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'

const der = (tag: number, body: Buffer): Buffer => {
  const n = body.length
  const length = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff])
  return Buffer.concat([Buffer.from([tag]), length, body])
}
const sequence = (...items: Buffer[]) => der(0x30, Buffer.concat(items))
const set = (...items: Buffer[]) => der(0x31, Buffer.concat(items))
const explicit = (n: number, item: Buffer) => der(0xa0 + n, item)
const octets = (body: Buffer) => der(0x04, body)
const bits = (body: Buffer, unused = 0) => der(0x03, Buffer.concat([Buffer.from([unused]), body]))
const TRUE = Buffer.from([0x01, 0x01, 0xff])

function integer(value: Buffer): Buffer {
  let body = value
  while (body.length > 1 && body[0] === 0 && !(body[1]! & 0x80)) body = body.subarray(1)
  return der(0x02, body[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), body]) : body)
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]]
  const bytes = [a * 40 + b]
  for (const part of rest) {
    const chunk = [part & 0x7f]
    for (let v = part >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80)
    bytes.push(...chunk)
  }
  return der(0x06, Buffer.from(bytes))
}

/** X.509's time: UTCTime through 2049, as RFC 5280 §4.1.2.5 requires. */
const time = (at: Date) => der(0x17, Buffer.from(`${at.toISOString().slice(2, 19).replace(/[-:T]/g, '')}Z`, 'ascii'))
const commonName = (name: string) => sequence(set(sequence(oid('2.5.4.3'), der(0x0c, Buffer.from(name, 'utf8')))))
const ECDSA_SHA256 = sequence(oid('1.2.840.10045.4.3.2'))
const extension = (id: string, value: Buffer, critical = false) => sequence(oid(id), ...(critical ? [TRUE] : []), octets(value))

/** RFC 5280's key identifier: the SHA-1 of the public key's bits. */
function keyIdentifier(key: KeyObject): Buffer {
  const spki = key.export({ type: 'spki', format: 'der' })
  // The BIT STRING closes the SubjectPublicKeyInfo: its last bytes, after the algorithm, are the key.
  const algorithm = spki.subarray(2, 2 + 2 + spki[3]!)
  const keyBits = spki.subarray(2 + algorithm.length)
  return createHash('sha1').update(keyBits.subarray(keyBits[1]! & 0x80 ? 3 + (keyBits[1]! & 0x7f) : 3)).digest()
}

interface Signer {
  readonly name: string
  readonly key: KeyObject
  readonly publicKey: KeyObject
}

function certificate(subject: { name: string; publicKey: KeyObject }, issuer: Signer, extensions: Buffer[], days: number): string {
  const now = Date.now()
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(Buffer.concat([Buffer.from([0x40]), randomBytes(15)])),
    ECDSA_SHA256,
    commonName(issuer.name),
    sequence(time(new Date(now - 86_400_000)), time(new Date(now + days * 86_400_000))),
    commonName(subject.name),
    subject.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...extensions)),
  )
  const signature = sign('sha256', tbs, { key: issuer.key, dsaEncoding: 'der' })
  const body = sequence(tbs, ECDSA_SHA256, bits(signature)).toString('base64')
  return `-----BEGIN CERTIFICATE-----\n${body.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`
}

export interface Authority {
  /** The authority's certificate, PEM: what the session trusts. */
  readonly cert: string
  /** Its private key, PEM: kept on the host. */
  readonly key: string
}

const AUTHORITY_NAME = 'omh session authority'

/** A new authority, valid for a year, that may sign server certificates and nothing beneath them. */
export function makeAuthority(): Authority {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const id = keyIdentifier(publicKey)
  const cert = certificate({ name: AUTHORITY_NAME, publicKey }, { name: AUTHORITY_NAME, key: privateKey, publicKey }, [
    extension('2.5.29.19', sequence(TRUE, integer(Buffer.from([0]))), true),
    // keyCertSign and cRLSign: bits 5 and 6.
    extension('2.5.29.15', bits(Buffer.from([0x06]), 1), true),
    extension('2.5.29.14', octets(id)),
  ], 365)
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }
}

/** A server certificate for these names (`*.x` as given, a wildcard one label deep), signed by the authority. */
export function issueServer(authority: Authority, names: readonly string[]): { cert: string; key: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const caKey = createPrivateKey(authority.key)
  const caPublic = new X509Certificate(authority.cert).publicKey
  const dns = names.map((n) => der(0x82, Buffer.from(n, 'ascii')))
  const cert = certificate({ name: names[0] ?? 'omh', publicKey }, { name: AUTHORITY_NAME, key: caKey, publicKey: caPublic }, [
    extension('2.5.29.19', sequence(), true),
    // digitalSignature: bit 0.
    extension('2.5.29.15', bits(Buffer.from([0x80]), 7), true),
    extension('2.5.29.37', sequence(oid('1.3.6.1.5.5.7.3.1'))),
    extension('2.5.29.17', sequence(...dns)),
    extension('2.5.29.14', octets(keyIdentifier(publicKey))),
    extension('2.5.29.35', sequence(der(0x80, keyIdentifier(caPublic)))),
  ], 90)
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }
}

const CERT_FILE = 'secrets-authority.pem'
const KEY_FILE = 'secrets-authority.key'

/**
 * The session's authority, made once and kept in its run directory, so a container that trusted it
 * keeps trusting what the proxy answers after a relaunch. One that has less than a month left is
 * made anew.
 */
export async function sessionAuthority(run: string): Promise<Authority> {
  const certFile = path.join(run, CERT_FILE)
  const keyFile = path.join(run, KEY_FILE)
  const [certStat, keyStat] = await Promise.all([lstat(certFile).catch(() => undefined), lstat(keyFile).catch(() => undefined)])
  if (certStat?.isFile() && keyStat?.isFile() && certStat.size < 8192 && keyStat.size < 8192) {
    const kept = { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') }
    try {
      if (Date.parse(new X509Certificate(kept.cert).validTo) - Date.now() > 30 * 86_400_000) return kept
    } catch {
      // Not a certificate: made anew below.
    }
  }
  const made = makeAuthority()
  await mkdir(run, { recursive: true })
  for (const [file, text] of [[keyFile, made.key], [certFile, made.cert]] as const) {
    await writeFile(`${file}.${process.pid}`, text, { mode: 0o600 })
    await rename(`${file}.${process.pid}`, file)
  }
  return made
}
