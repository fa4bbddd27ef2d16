export * from './errors.js'
export * from './model.js'
export * from './plugin.js'
export * from './kernel.js'
export * from './toml.js'
export { closest, dotted, problemsFromIssues } from './issues.js'
export { adapterSchema, editorSchema, type AdapterFile, type EditorFile } from './adapter/schema.js'
export {
  checkAdapterFile,
  checkEditorFile,
  expandGuest,
  findAdapters,
  toAdapter,
  type Adapter,
  type AdapterCheck,
  type AdapterSource,
  type EditorCheck,
  type ResolvedBinding,
} from './adapter/load.js'
export { settingsSchema, type Settings } from './settings/schema.js'
export { LAYERS, loadSettings, merge, type Decided, type EffectiveSettings, type LayerName, type SettingsLayer } from './settings/load.js'
export { resolvePluginModule } from './plugins/resolve.js'
export { resolveProfile, type ProfileSources } from './profile/resolve.js'
export { GUEST_SOURCES, stage, type StageResult } from './stage.js'
export {
  GUEST_OMH,
  GUEST_SOCKETS,
  IMAGE_LABELS,
  baseRecipe,
  ensureImage,
  harnessRecipe,
  homeMountParents,
  imageOptions,
  planImages,
  type EnsuredImage,
  type ImageAdapter,
  type ImageOptions,
  type ImagePlan,
} from './image.js'
export * from './session/index.js'
