export * from './errors.js'
export * from './model.js'
export * from './plugin.js'
