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
export { parseJson, type JsonSyntaxError } from './json.js'
export { GUEST_SOURCES, stage, type StageResult } from './stage.js'
export {
  DEFAULT_TIMEOUT,
  PLACEHOLDERS,
  judgeProbes,
  probesNeeded,
  type CapabilityUnderTest,
  type Evidence,
  type ExpectedItem,
  type Expectation,
  type Probe,
  type ProbeCheck,
  type ProbeRun,
  type ProbeStep,
} from './probe/judge.js'
export { compilePattern, fillPattern, placeholdersOf } from './probe/pattern.js'
export { parseSelector, scalarAt, select, type Selector } from './probe/select.js'
export {
  capabilitiesUnderTest,
  classVerdicts,
  doctorChecks,
  doctorPlan,
  treeEntries,
  type CheckKind,
  type ClassVerdict,
  type DoctorCheck,
  type DoctorInput,
} from './doctor/checks.js'
export { digestBytes, digestOf, measure, runProbe, type Digest, type ProbeOutput, type RunnerPlan, type RunnerProbe, type RunnerReport } from './doctor/runner.js'
export {
  accountDir,
  accountNameProblem,
  accountToCapture,
  accountsDir,
  assertAccountName,
  capturedAccounts,
  chooseAccount,
  credentialHostPath,
  isPlaceholder,
  unfilledTokens,
  type AccountChoice,
} from './accounts.js'
export {
  GUEST_SSH_PORT,
  SSHD_SCRIPT,
  editorArgs,
  ensureInclude,
  ensureKeyPair,
  hostEntry,
  removeHostEntry,
  sshAlias,
  sshPaths,
  sshUrl,
  writeHostEntry,
  type IncludeChange,
  type SshPaths,
} from './attach.js'
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
export { GUEST_DOCTOR, doctor, runnerFile, type DoctorHost, type DoctorReport, type DoctorRequest } from './doctor/run.js'
export { authenticate, type AuthHost, type AuthRequest, type AuthResult } from './auth.js'
export * from './session/index.js'
