export * from './json.js'
export * from './toml.js'
export { stringifyToml, tomlKey, tomlString, type TomlValue } from './toml-write.js'
export * from './hook-text.js'
