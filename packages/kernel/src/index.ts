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
export { findHooks, hookFileSchema, parseHookFile, resolveHooks, type HookFile, type HookParse, type HookSource, type HookSources } from './profile/hooks.js'
export { parseJson, type JsonDocument } from './json.js'
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
  SSH_PORTS,
  editorArgs,
  ensureInclude,
  ensureKeyPair,
  hostEntry,
  removeHostEntry,
  sshAlias,
  sshPaths,
  sshPort,
  sshUrl,
  writeHostEntry,
  type IncludeChange,
  type SshPaths,
} from './attach.js'
