export * from './kernel.js'
export { closest, dotted, problemsFromIssues } from './issues.js'
export { adapterSchema, editorSchema, type AdapterFile, type EditorFile } from './adapter/schema.js'
export {
  checkAdapterFile,
  checkEditorFile,
  findAdapters,
  toAdapter,
  type Adapter,
  type AdapterCheck,
  type AdapterSource,
  type EditorCheck,
  type ResolvedBinding,
} from './adapter/load.js'
export { expandGuest } from './adapter/guest-path.js'
export { settingsSchema, type Settings } from './settings/schema.js'
export { LAYERS, loadSettings, merge, type Decided, type EffectiveSettings, type LayerName, type SettingsLayer } from './settings/load.js'
export { resolvePluginModule } from './plugins/resolve.js'
export {
  CATALOGUE_SOURCES,
  projectRulesOf,
  resolveProfile,
  type ClassSelection,
  type ProfileSources,
  type ResolvedProfile,
} from './profile/resolve.js'
export type { CatalogueEntry, CatalogueLocation, CatalogueSource, Extra, Listing, Loaded } from './profile/catalogue.js'
export { readMarkdown, type Markdown } from './profile/frontmatter.js'
export {
  MANAGED_KEYS,
  SERVER_NAME,
  mcpFileOf,
  readMcpFile,
  serverFrom,
  serverToJson,
  serversOf,
  type McpFile,
} from './profile/mcp-file.js'
export { replaceFile, snapshot, type FileSnapshot } from './files.js'
export {
  applyPlan,
  openMcpDocument,
  planPut,
  planWrites,
  writePlan,
  type McpChange,
  type McpChangeKind,
  type McpDocument,
} from './profile/mcp-edit.js'
export { findHooks, hookFileSchema, parseHookFile, resolveHooks, type HookFile, type HookParse, type HookSource, type HookSources } from './profile/hooks.js'
export { GUEST_SOURCES, stage, type StageResult } from './stage.js'
export { compilePattern, fillPattern, placeholdersOf } from './probe/pattern.js'
export { parseSelector, scalarAt, select, type Selector } from './probe/select.js'
export { PLACEHOLDERS, type Evidence, type Expectation, type Probe, type ProbeStep } from './probe/probe.js'
export { byText } from './order.js'
