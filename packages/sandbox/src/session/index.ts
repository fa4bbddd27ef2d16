export { GitError, git, gitEnv, tryGit, type GitOptions, type GitResult } from './git.js'
export { repository, resolveBase, type Base, type Repository } from './repo.js'
export {
  LABEL,
  SESSION_ID,
  branchOf,
  containerName,
  credentialsDir,
  repoRunDir,
  sessionId,
  sessionPaths,
  stagingDir,
  type SessionPaths,
} from './layout.js'
export { claim, listSessions, nextSessionId, readClaim, withRepoLock, type Claim } from './store.js'
export { createSession, removeSession } from './create.js'
export { ARRANGEMENT, GITFILE, GUEST_SHADOW, SANDBOX_AUTHOR, createShadow, writeExclude } from './shadow.js'
export {
  KEEPER,
  credentialMounts,
  harnessArgv,
  planDigest,
  planSession,
  type CredentialMount,
  type Mountpoint,
  type SessionPlan,
  type SessionPlanInput,
  type StagedMount,
} from './plan.js'
export { clearMountpoints, prepareMountpoints } from './mountpoints.js'
export { LIVENESS_SCRIPT, decideReuse, parseLiveness, type ReuseDecision } from './reuse.js'
export { Sessions, type PickedSession, type SessionChoice } from './sessions.js'
export {
  launch,
  previewLaunch,
  type ImageSource,
  type LaunchAnnouncement,
  type LaunchHost,
  type LaunchPreview,
  type LaunchRequest,
} from './launch.js'
export { commitSession, excluding, omhPaths, sessionDiff, unsavedWork, workState, type Count, type SessionDiff, type WorkState } from './work.js'
export { attach, type AttachHost, type AttachRequest, type Attached } from './attach.js'
