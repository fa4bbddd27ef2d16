export {
  DEFAULT_TIMEOUT,
  judgeProbes,
  probesNeeded,
  type CapabilityUnderTest,
  type ExpectedItem,
  type ProbeCheck,
  type ProbeRun,
} from './doctor/judge.js'
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
} from './ssh.js'
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
