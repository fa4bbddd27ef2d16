export * from './bundled.js'
export * from './failure.js'
export * from './hooks.js'
export * from './testdir.js'
