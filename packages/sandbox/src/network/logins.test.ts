import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { keepLoginOutside, placeholderFor, plannedLogins, readVault, restoreLogin, vaultFile } from './logins.js'

const FACTS = { file: '/home/agent/.claude/.credentials.json', access: 'claudeAiOauth.accessToken', refresh: 'claudeAiOauth.refreshToken', hosts: ['api.anthropic.com'] }
const login = (access: string, refresh: string) => ({ claudeAiOauth: { accessToken: access, refreshToken: refresh, expiresAt: 1700000000000, scopes: ['user:inference'] }, other: 'kept' })

function account(doc: unknown) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'omh-login-'))
  const file = path.join(dir, '.credentials.json')
  writeFileSync(file, JSON.stringify(doc), { mode: 0o600 })
  return { file, vault: path.join(dir, 'vault') }
}

describe('a subscription login kept outside', () => {
  it('shapes a placeholder like the token it stands for', () => {
    expect(placeholderFor('sk-ant-oat01-AbC_123')).toMatch(/^sk-ant-oat01-omh-login-[0-9a-f]{32}$/)
    expect(placeholderFor('eyJhbGciOi.x.y')).toMatch(/^omh-login-[0-9a-f]{32}$/)
  })

  it('moves the real tokens to the vault and leaves placeholders, the rest of the file as it was', async () => {
    const at = account(login('sk-ant-oat01-real', 'sk-ant-ort01-real'))
    const kept = await keepLoginOutside(at.file, at.vault, FACTS)
    if (!('vault' in kept)) throw new Error(JSON.stringify(kept))
    expect(kept.vault).toMatchObject({ access: 'sk-ant-oat01-real', refresh: 'sk-ant-ort01-real' })
    const file = JSON.parse(readFileSync(at.file, 'utf8'))
    expect(file).toEqual(login(kept.vault.placeholders.access, kept.vault.placeholders.refresh!))
    expect(readFileSync(at.file, 'utf8')).not.toContain('-real')
    expect(statSync(vaultFile(at.vault)).mode & 0o777).toBe(0o600)
    expect(statSync(at.vault).mode & 0o777).toBe(0o700)
    // Kept again: nothing changes.
    expect(await keepLoginOutside(at.file, at.vault, FACTS)).toEqual({ vault: kept.vault })
  })

  it('takes a login made anew inside a session, keeping the placeholders the file already had', async () => {
    const at = account(login('sk-ant-oat01-first', 'sk-ant-ort01-first'))
    const first = await keepLoginOutside(at.file, at.vault, FACTS)
    writeFileSync(at.file, JSON.stringify(login('sk-ant-oat01-second', 'sk-ant-ort01-second')))
    const second = await keepLoginOutside(at.file, at.vault, FACTS)
    if (!('vault' in first) || !('vault' in second)) throw new Error('not kept')
    expect(second.vault.access).toBe('sk-ant-oat01-second')
    expect(second.vault.placeholders).toEqual(first.vault.placeholders)
    expect(await readVault(at.vault)).toEqual(second.vault)
  })

  it('says when there is no login, and when the file holds placeholders the vault does not know', async () => {
    expect(await keepLoginOutside(account({}).file, '/nonexistent', FACTS)).toEqual({ none: 'no login' })
    const at = account(login('sk-ant-oat01-omh-login-0123456789abcdef0123456789abcdef', 'x'))
    expect(await keepLoginOutside(at.file, at.vault, FACTS)).toMatchObject({ lost: expect.stringContaining('placeholders') })
  })

  it('puts the real tokens back where no proxy can keep the vault, and plans only files that hold a login', async () => {
    const at = account(login('sk-ant-oat01-real', 'sk-ant-ort01-real'))
    await keepLoginOutside(at.file, at.vault, FACTS)
    const [planned] = await plannedLogins([FACTS], () => at.file, at.vault, 'claude/default')
    expect(planned).toMatchObject({ accountFile: at.file, name: 'claude/default' })
    await restoreLogin(planned!)
    expect(JSON.parse(readFileSync(at.file, 'utf8'))).toEqual(login('sk-ant-oat01-real', 'sk-ant-ort01-real'))
    expect(await plannedLogins([FACTS], () => account({}).file, at.vault, 'x')).toEqual([])
  })

  it('keeps a JWT placeholder a JWT, with the same header and claims and no signature, and an identity token outside too', async () => {
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
    const jwt = (claims: object) => `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(claims)}.c2lnbmF0dXJl`
    const access = jwt({ exp: 2_000_000_000, sub: 'u' })
    const placeholder = placeholderFor(access)
    expect(placeholder).toMatch(new RegExp(`^${access.split('.').slice(0, 2).join('\\.')}\\.omh-login-[0-9a-f]{32}$`))
    const codex = { file: '/home/agent/.codex/auth.json', access: 'tokens.access_token', refresh: 'tokens.refresh_token', id: 'tokens.id_token', hosts: ['chatgpt.com'] }
    const id = jwt({ email: 'a@example.com', 'https://api.openai.com/auth': { chatgpt_plan_type: 'pro' } })
    const at = account({ OPENAI_API_KEY: null, tokens: { id_token: id, access_token: access, refresh_token: 'rt_real', account_id: 'acct' }, last_refresh: '2026-12-01T00:00:00Z' })
    const kept = await keepLoginOutside(at.file, at.vault, codex)
    if (!('vault' in kept)) throw new Error('not kept')
    const file = JSON.parse(readFileSync(at.file, 'utf8'))
    expect(file.tokens.account_id).toBe('acct')
    expect(file.tokens.id_token).toBe(kept.vault.placeholders.id)
    expect(file.tokens.id_token.split('.').slice(0, 2)).toEqual(id.split('.').slice(0, 2))
    expect(readFileSync(at.file, 'utf8')).not.toMatch(/c2lnbmF0dXJl|rt_real/)

    // Refreshed in a session: the file holds the placeholder with the new token's claims, the same mark.
    const mark = kept.vault.placeholders.access.split('.')[2]
    writeFileSync(at.file, JSON.stringify({ ...file, tokens: { ...file.tokens, access_token: `${b64({ alg: 'RS256' })}.${b64({ exp: 2_100_000_000 })}.${mark}` } }))
    expect(await keepLoginOutside(at.file, at.vault, codex)).toEqual({ vault: kept.vault })
  })
})
