/**
 * The parts a session is made of, for a caller that assembles a container of its own the way a
 * session is made (doctor's scratch session): the account and the agent, the plan and its mounts,
 * the staged profile and the credentials, the shadow repository, the copied way in, the network.
 * `@omh/sandbox/parts`; what a command needs is in the package's entry.
 */
export { accountDir, chooseAccount, type AccountChoice } from './accounts.js'
export { agentUser, type AgentUser } from './agent-user.js'
export { chooseWay, copyPlan, fillVolumes, withLinks } from './engine-files/copied.js'
export { git, gitFailure } from './host/git.js'
export { LABEL, containerName, sessionPaths } from './host/layout.js'
export { handToAgent } from './host/ownership.js'
export { repository, resolveBase, type Repository } from './host/repo.js'
export { egressDir, proxyName, sessionEgress, type EgressMode } from './network/egress.js'
export { networkOn } from './network/engine-network.js'
export { clearMountpoints, prepareMountpoints } from './session/mountpoints.js'
export { contentDigests, credentialMounts, mountOrder, planSession } from './session/plan.js'
export { prepareCredentials, stageForAgent, stagedMounts, withGitfile } from './session/prepare.js'
export { createShadow } from './session/shadow.js'
