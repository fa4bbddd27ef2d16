// The parts of oclif omh uses, each from its own module. oclif's package entry
// loads all of them and checks the Node version with semver on every start,
// which cost about 15 ms of every command here; omh never reads what else it has.
export { Command } from '@oclif/core/command'
export { execute } from '@oclif/core/execute'
export * as Args from '@oclif/core/args'
export * as Flags from '@oclif/core/flags'
export type { Hook, Interfaces } from '@oclif/core'
