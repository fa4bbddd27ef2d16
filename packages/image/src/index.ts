export * from './ensure.js'
export * from './recipes.js'
export * from './toolset.js'
export { UNSUPPORTED_MARK, type PrepareInput } from './prepare-image.js'
