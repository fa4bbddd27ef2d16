export { execute } from '@oclif/core'
export { COMMANDS, commandNotFound } from './commands.js'
