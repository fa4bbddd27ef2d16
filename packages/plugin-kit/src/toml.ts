import { parse, TomlError } from 'smol-toml'
import { OmhError, TOML_SYNTAX } from '@omh/plugin-api'
import { tomlLocator, type KeyPath, type Position } from './toml-locate.js'

export { keyOf, locator, tomlLocator, type KeyPath, type Position } from './toml-locate.js'

/** A parsed TOML file that can say where each of its keys was written. */
export interface TomlDocument {
  readonly file: string
  readonly data: Record<string, unknown>
  /** Where the key at `path` (or its nearest written ancestor) is defined. */
  locate(path: KeyPath): Position | undefined
}

/** Parses TOML, turning a syntax error into TOML_SYNTAX with line and column. */
export function parseToml(source: string, file: string): TomlDocument {
  let data: Record<string, unknown>
  try {
    data = parse(source) as Record<string, unknown>
  } catch (error) {
    if (error instanceof TomlError) {
      const what = error.message.split('\n')[0]?.replace(/^Invalid TOML document: /, '') ?? 'syntax error'
      throw OmhError.of(TOML_SYNTAX, {
        args: [file, error.line, error.column, what],
        details: { codeblock: error.codeblock },
      })
    }
    throw error
  }
  return { file, data, locate: tomlLocator(source) }
}

