import { spawnSync } from 'node:child_process'
import { statSync } from 'node:fs'
import path from 'node:path'
import { FILE_UNREADABLE, OmhError, SECRET_EXPOSED, SECRET_MISSING } from '@omh/plugin-api'
import { SECRET_REFERENCE, secretNames } from '@omh/plugin-kit'
import { parseToml } from '@omh/plugin-kit/toml'
import { readTextSafe } from '@omh/kernel'

type Env = Readonly<Record<string, string | undefined>>

/** Where secrets come from, in the order they are asked. */
export interface SecretSources {
  readonly env: Env
  readonly omhHome: string
  /** Runs `secret-tool lookup omh NAME`; absent: the real one, when it is on PATH. */
  readonly keyring?: (name: string) => string | undefined
}

export const secretsFile = (omhHome: string) => path.join(omhHome, 'secrets.toml')

/**
 * Every `<secret NAME>` in these variables' values, replaced by its value:
 * from the host environment (`$NAME`), then `$OMH_HOME/secrets.toml` (only
 * when no one else may read it), then the desktop keyring. `where` names what
 * uses a variable, for the error that a missing secret stops the launch with.
 */
export function resolveSecrets(vars: Readonly<Record<string, string>>, sources: SecretSources, where: (variable: string) => string): Record<string, string> {
  const out: Record<string, string> = {}
  let file: Record<string, unknown> | undefined
  const fromFile = (name: string) => {
    file ??= readSecretsFile(secretsFile(sources.omhHome))
    const value = file[name]
    return typeof value === 'string' ? value : undefined
  }
  const keyring = sources.keyring ?? ((name: string) => secretTool(name, sources.env))
  for (const [variable, value] of Object.entries(vars)) {
    if (!secretNames(value).length) {
      out[variable] = value
      continue
    }
    out[variable] = value.replace(SECRET_REFERENCE, (_whole, name: string) => {
      const found = nonEmpty(sources.env[name]) ?? nonEmpty(fromFile(name)) ?? nonEmpty(keyring(name))
      if (found === undefined) throw OmhError.of(SECRET_MISSING, { args: [name, where(variable)], hintArgs: [name, secretsFile(sources.omhHome)] })
      return found
    })
  }
  return out
}

/** A secret's value from the same sources, in the same order; absent: none holds it. */
export function findSecret(name: string, sources: SecretSources): string | undefined {
  const keyring = sources.keyring ?? ((n: string) => secretTool(n, sources.env))
  const fromFile = () => {
    const value = readSecretsFile(secretsFile(sources.omhHome))[name]
    return typeof value === 'string' ? value : undefined
  }
  return nonEmpty(sources.env[name]) ?? nonEmpty(fromFile()) ?? nonEmpty(keyring(name))
}

const nonEmpty = (value: string | undefined) => (value === undefined || value === '' ? undefined : value)

function readSecretsFile(file: string): Record<string, unknown> {
  let mode: number
  try {
    mode = statSync(file).mode
  } catch {
    return {}
  }
  if (mode & 0o077) throw OmhError.of(SECRET_EXPOSED, { args: [file, (mode & 0o777).toString(8).padStart(4, '0')], hintArgs: [file] })
  const text = readTextSafe(file, {})
  if (text === undefined) throw OmhError.of(FILE_UNREADABLE, { args: [file, 'not a regular file'] })
  try {
    return parseToml(text, file).data as Record<string, unknown>
  } catch {
    // The syntax error's excerpt would show the file's lines, which are secrets.
    throw OmhError.of(FILE_UNREADABLE, { args: [file, 'it is not valid TOML (its lines are not shown: they hold secrets)'] })
  }
}

/** The keyring's answer, when `secret-tool` is installed; a locked or absent entry is no answer. */
function secretTool(name: string, env: Env): string | undefined {
  const result = spawnSync('secret-tool', ['lookup', 'omh', name], { env: env as NodeJS.ProcessEnv, encoding: 'utf8', timeout: 10_000 })
  if (result.error || result.status !== 0) return undefined
  return result.stdout.replace(/\n$/, '')
}
