import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { testdir } from '@omh/test-utils'

const SECRETS = ['sk-live-4f9a', 'tok-3b1c', 'key-88aa', 'pw-71d0', 'q-5e2f', 'env-9c3d', 'hdr-0a4b', 'ghp_R8xT2mQ9vL4nK7pW3sZ6yB1cD5fG0hJ']

const everything = (ran: { stdout: string; stderr: string }) => `${ran.stdout}\n${ran.stderr}`

const SERVERS = {
  mcpServers: {
    local: {
      command: 'mcp-local',
      args: ['--token', 'tok-3b1c', '--api-key=key-88aa', 'ghp_R8xT2mQ9vL4nK7pW3sZ6yB1cD5fG0hJ', '--root', '/work/docs'],
      env: { LOCAL_TOKEN: 'env-9c3d' },
    },
    remote: { type: 'http', url: 'https://me:pw-71d0@mcp.example/v1?token=q-5e2f&region=eu', headers: { Authorization: 'Bearer hdr-0a4b' } },
  },
}

describe('secrets stay off the screen', () => {
  it('config mcp add does not repeat a malformed --header or --env value, in text or --json', () => {
    const env = { OMH_HOME: testdir() }
    for (const json of [[], ['--json']]) {
      const header = omh(['config', 'mcp', 'add', 'web', '--yes', '--url', 'https://w', '--header', 'Authorization: Bearer sk-live-4f9a', ...json], { env })
      expect(header.status).toBe(2)
      expect(everything(header)).toContain('Authorization: •••')
      expect(everything(header)).not.toContain('sk-live-4f9a')
      const variable = omh(['config', 'mcp', 'add', 'local', '--yes', '--env', 'K sk-live-4f9a', ...json, '--', 'srv'], { env })
      expect(variable.status).toBe(2)
      expect(everything(variable)).toContain('K •••')
      expect(everything(variable)).not.toContain('sk-live-4f9a')
    }
  })

  it('config mcp ls and the plan of add hide secrets in arguments and URLs, and show the rest', () => {
    const home = testdir({ 'mcp.json': JSON.stringify(SERVERS) })
    const text = omh(['config', 'mcp', 'ls'], { env: { OMH_HOME: home } })
    const json = omh(['config', 'mcp', 'ls', '--json'], { env: { OMH_HOME: home } })
    expect(text.status).toBe(0)
    expect(json.status).toBe(0)
    for (const ran of [text, json]) for (const secret of SECRETS) expect(everything(ran)).not.toContain(secret)
    expect(text.stdout).toContain('mcp-local --token ••• --api-key=••• ••• --root /work/docs')
    expect(text.stdout).toContain('https://me:•••@mcp.example/v1?token=•••&region=•••')
    expect(json.json().result.servers).toMatchObject([
      { name: 'local', args: ['--token', '•••', '--api-key=•••', '•••', '--root', '/work/docs'], env: ['LOCAL_TOKEN'] },
      { name: 'remote', url: 'https://me:•••@mcp.example/v1?token=•••&region=•••', headers: ['Authorization'] },
    ])

    const add = omh(['config', 'mcp', 'add', 'more', '--dry-run', '--', 'srv', '--password', 'pw-71d0', 'https://x.example/?key=q-5e2f'], {
      env: { OMH_HOME: home },
    })
    expect(add.status).toBe(0)
    expect(add.stdout).toContain('srv --password ••• https://x.example/?key=•••')
    for (const secret of SECRETS) expect(everything(add)).not.toContain(secret)
  })

  it('RENDER_REFUSED names the value it refuses without its secret, in text and --json; render --content shows the documents whole', () => {
    const home = testdir({
      'mcp.json': JSON.stringify({ mcpServers: { remote: { type: 'http', url: 'https://mcp.example/', headers: { Authorization: 'Bearer sk-live-4f9a ${SUFFIX}' } } } }),
    })
    for (const json of [[], ['--json']]) {
      const ran = omh(['render', 'claude', ...json], { env: { OMH_HOME: home }, cwd: testdir() })
      expect(ran.status).toBe(2)
      expect(everything(ran)).toContain('RENDER_REFUSED')
      expect(everything(ran)).toContain('remote.headers.Authorization')
      expect(everything(ran)).not.toContain('sk-live-4f9a')
    }
    const fine = testdir({ 'mcp.json': JSON.stringify(SERVERS) })
    const content = omh(['render', 'claude', '--content'], { env: { OMH_HOME: fine }, cwd: testdir() })
    expect(content.status).toBe(0)
    expect(content.stdout).toContain('tok-3b1c')
    expect(content.stdout).toContain('Bearer hdr-0a4b')
  })
})
